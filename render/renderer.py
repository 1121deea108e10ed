"""Turn HTML into pixels with one long-lived Chromium and a pool of warm pages.

A new browser context per render costs ~0.3 s; a warm page costs a few ms, and
render-aware RL renders thousands of completions, so pages are reused. The
browser runs on a private event loop thread so that plain synchronous code
(trl reward functions, the CLI) can call it.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import io
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from PIL import Image

from .sandbox import CHROMIUM_ARGS, chromium_path, with_policy


class RenderError(RuntimeError):
    """A page that could not be rendered; `reason` is one of timeout, too_large, crashed, failed."""

    def __init__(self, reason: str, message: str):
        super().__init__(f"render {reason}: {message}")
        self.reason = reason


@dataclass(frozen=True)
class Viewport:
    """CSS size of the screen and how many device pixels each CSS pixel covers."""

    width: int
    height: int
    device_scale_factor: float = 1.0

    def __post_init__(self):
        if not (16 <= self.width <= 8192 and 16 <= self.height <= 8192):
            raise ValueError(f"viewport {self.width}x{self.height} is outside 16..8192 pixels")
        if not (0.25 <= self.device_scale_factor <= 8):
            raise ValueError(f"device_scale_factor {self.device_scale_factor} is outside 0.25..8")

    @classmethod
    def for_screen(cls, width: int, height: int, device_scale_factor: float = 1.0) -> Viewport:
        """Viewport whose screenshot has exactly width x height device pixels."""
        s = device_scale_factor
        return cls(round(width / s), round(height / s), s)


@dataclass(frozen=True)
class Box:
    """A visible element as laid out: what element F1 compares."""

    tag: str
    text: str
    x: float
    y: float
    w: float
    h: float


@dataclass
class RenderResult:
    png: bytes
    viewport: Viewport
    boxes: list[Box] = field(default_factory=list)
    elapsed_s: float = 0.0
    cached: bool = False
    blocked_requests: list[str] = field(default_factory=list)

    @property
    def image(self) -> np.ndarray:
        return np.asarray(Image.open(io.BytesIO(self.png)).convert("RGB"))

    def save(self, path) -> None:
        with open(path, "wb") as f:
            f.write(self.png)


_BOXES_JS = """() => {
  const out = [], W = innerWidth, H = innerHeight;
  const keep = new Set(['a','button','input','select','textarea','img','svg','canvas','label','video','progress']);
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2 || r.right <= 0 || r.bottom <= 0 || r.left >= W || r.top >= H) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || cs.display === 'none' || parseFloat(cs.opacity) === 0) continue;
    const tag = el.tagName.toLowerCase();
    let own = '';
    for (const n of el.childNodes) if (n.nodeType === 3) own += n.textContent;
    own = own.replace(/\\s+/g, ' ').trim();
    if (!own && !keep.has(tag) && !el.getAttribute('role')) continue;
    out.push({tag, text: own.slice(0, 200), x: r.left, y: r.top, w: r.width, h: r.height});
    if (out.length >= 3000) break;
  }
  return out;
}"""


class Renderer:
    """Sandboxed, pooled, cached HTML renderer.

    Every network request is aborted, file: and other schemes are refused by a
    CSP, each render has a time limit, and a crashed browser is restarted so
    that the rest of a batch still completes.
    """

    def __init__(
        self,
        pool_size: int = 4,
        timeout_s: float = 10.0,
        cache_size: int = 256,
        allow_scripts: bool = True,
        max_html_bytes: int = 5_000_000,
        retries: int = 1,
    ):
        self.pool_size = pool_size
        self.timeout_s = timeout_s
        self.cache_size = cache_size
        self.allow_scripts = allow_scripts
        self.max_html_bytes = max_html_bytes
        self.retries = retries
        self.restarts = 0
        self._cache: OrderedDict[str, RenderResult] = OrderedDict()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="wm-renderer", daemon=True)
        self._thread.start()
        self._pw = None
        self._browser = None
        self._pools: dict[float, asyncio.Queue] = {}
        self._contexts: dict[float, object] = {}
        self._live: dict[float, int] = {}
        self._lock: asyncio.Lock | None = None
        self._generation = 0
        self._closed = False

    # ---- public, synchronous -------------------------------------------------
    def render(self, html: str, viewport: Viewport) -> RenderResult:
        """Render one page; raises RenderError."""
        return self._call(self.arender(html, viewport))

    def render_many(self, items: Sequence[tuple[str, Viewport]]) -> list[RenderResult | RenderError]:
        """Render a batch concurrently; each failure comes back in its slot as a RenderError."""
        return self._call(self.arender_many(items))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(30)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- async API ----------------------------------------------------------
    async def arender_many(self, items):
        sem = asyncio.Semaphore(self.pool_size)

        async def one(html, vp):
            async with sem:
                try:
                    return await self.arender(html, vp)
                except RenderError as e:
                    return e

        return await asyncio.gather(*(one(h, v) for h, v in items))

    async def arender(self, html: str, viewport: Viewport) -> RenderResult:
        if not isinstance(html, str):
            raise RenderError("failed", f"html must be str, got {type(html).__name__}")
        size = len(html.encode("utf-8", "replace"))
        if size > self.max_html_bytes:
            raise RenderError("too_large", f"html is {size} bytes, limit is {self.max_html_bytes}")
        key = self._key(html, viewport)
        if key in self._cache:
            self._cache.move_to_end(key)
            return replace(self._cache[key], cached=True)
        last: RenderError | None = None
        for _attempt in range(self.retries + 1):
            try:
                result = await self._render_once(html, viewport)
                break
            except RenderError as e:
                last = e
                if e.reason != "crashed":
                    raise
        else:
            raise last  # type: ignore[misc]
        self._cache[key] = result
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return result

    # ---- internals ----------------------------------------------------------
    def _call(self, coro):
        if self._closed:
            coro.close()
            raise RuntimeError("renderer is closed")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def _key(self, html: str, vp: Viewport) -> str:
        h = hashlib.sha256(html.encode("utf-8", "replace"))
        h.update(f"|{vp.width}x{vp.height}@{vp.device_scale_factor}|js={self.allow_scripts}".encode())
        return h.hexdigest()

    async def _ensure_browser(self):
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._browser is not None and self._browser.is_connected():
                return
            from playwright.async_api import async_playwright

            if self._pw is None:
                self._pw = await async_playwright().start()
            if self._browser is not None:
                self.restarts += 1
                try:
                    await asyncio.wait_for(self._browser.close(), 5)
                except Exception:
                    pass
            self._pools.clear()
            self._contexts.clear()
            self._live.clear()
            self._generation += 1
            self._browser = await self._pw.chromium.launch(
                executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True
            )

    async def _context(self, scale: float):
        if scale not in self._contexts:
            ctx = await self._browser.new_context(
                viewport={"width": 360, "height": 640},
                device_scale_factor=scale,
                java_script_enabled=self.allow_scripts,
                service_workers="block",
                offline=True,
                accept_downloads=False,
            )
            await ctx.route("**/*", self._block)
            self._contexts[scale] = ctx
            self._pools[scale] = asyncio.Queue()
            self._live[scale] = 0
        return self._contexts[scale]

    async def _block(self, route):
        blocked = getattr(route.request.frame.page, "_wm_blocked", None)
        if blocked is not None:
            blocked.append(route.request.url[:200])
        await route.abort("blockedbyclient")

    async def _acquire(self, scale: float):
        ctx = await self._context(scale)
        pool = self._pools[scale]
        if pool.empty() and self._live[scale] < self.pool_size:
            self._live[scale] += 1
            try:
                page = await ctx.new_page()
            except Exception:
                self._live[scale] -= 1
                raise
            page._wm_blocked = []
            return page
        return await pool.get()

    async def _discard(self, page, scale: float, generation: int):
        if generation == self._generation:
            self._live[scale] -= 1
        try:
            await asyncio.wait_for(page.close(run_before_unload=False), 3)
        except Exception:
            # A renderer that will not even close is wedged: restart the browser.
            if generation == self._generation and self._browser is not None:
                try:
                    await asyncio.wait_for(self._browser.close(), 5)
                except Exception:
                    pass

    async def _render_once(self, html: str, vp: Viewport) -> RenderResult:
        try:
            await self._ensure_browser()
        except FileNotFoundError:
            raise
        except Exception as e:
            raise RenderError("crashed", f"could not launch chromium: {e}") from e
        generation = self._generation
        scale = vp.device_scale_factor
        try:
            page = await self._acquire(scale)
        except Exception as e:
            await self._mark_crashed()
            raise RenderError("crashed", f"could not open a page: {e}") from e
        t0 = time.perf_counter()
        page._wm_blocked = []
        try:
            png, boxes = await asyncio.wait_for(self._draw(page, html, vp), self.timeout_s)
        except asyncio.TimeoutError:
            await self._discard(page, scale, generation)
            raise RenderError("timeout", f"page did not finish within {self.timeout_s:.1f}s") from None
        except Exception as e:
            await self._discard(page, scale, generation)
            if self._browser is None or not self._browser.is_connected() or "crash" in str(e).lower():
                await self._mark_crashed()
                raise RenderError("crashed", str(e).splitlines()[0]) from e
            raise RenderError("failed", str(e).splitlines()[0]) from e
        blocked = list(page._wm_blocked)
        if generation == self._generation:
            self._pools[scale].put_nowait(page)
        return RenderResult(
            png=png,
            viewport=vp,
            boxes=[Box(**b) for b in boxes],
            elapsed_s=time.perf_counter() - t0,
            blocked_requests=blocked,
        )

    async def _mark_crashed(self):
        if self._browser is not None and self._browser.is_connected():
            try:
                await asyncio.wait_for(self._browser.close(), 5)
            except Exception:
                pass

    async def _draw(self, page, html: str, vp: Viewport):
        ms = self.timeout_s * 1000
        await page.set_viewport_size({"width": vp.width, "height": vp.height})
        await page.set_content(with_policy(html), wait_until="load", timeout=ms)
        boxes = await page.evaluate(_BOXES_JS)
        png = await page.screenshot(type="png", animations="disabled", caret="hide", timeout=ms)
        return png, boxes

    async def _shutdown(self):
        try:
            if self._browser is not None:
                await asyncio.wait_for(self._browser.close(), 10)
        except Exception:
            pass
        if self._pw is not None:
            await self._pw.stop()


_default: Renderer | None = None
_default_lock = threading.Lock()


def default_renderer() -> Renderer:
    """A process-wide renderer, started on first use."""
    global _default
    with _default_lock:
        if _default is None or _default._closed:
            _default = Renderer()
            atexit.register(_default.close)
        return _default


def render_html(html: str, viewport: Viewport | tuple[int, int] = (360, 640)) -> RenderResult:
    """Render `html` at `viewport` (a Viewport or (width, height)) with the shared renderer."""
    if not isinstance(viewport, Viewport):
        viewport = Viewport(*viewport)
    return default_renderer().render(html, viewport)
