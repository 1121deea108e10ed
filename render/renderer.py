"""Turn HTML into pixels with one long-lived Chromium and a pool of warm pages, isolated per render.

A new browser context per render costs ~0.3 s and a cross-document navigation ~40 ms; render-
aware RL renders thousands of completions, so pages are reused. What keeps one render from
seeing another:

- Scripts are off by default (model output is inline HTML and CSS by contract), so nothing a
  page runs can outlive it. Each pooled page holds a shell document served by the request
  router with the policy as response headers (Content-Security-Policy with a `sandbox`
  directive, Permissions-Policy); every render replaces that document's content, which keeps
  the headers' policy, so no markup can move or remove it.
- A page that navigated away from the shell, or whose render failed, is closed, never reused
  (the sandbox directive already blocks <meta refresh> without scripts). With
  `allow_scripts=True` (replaying a capture) every page is closed after one render, its scripts
  terminated first.
- Element boxes are read in an isolated JavaScript world the page cannot reach, so a page
  cannot spoof the boxes element F1 is computed from.

The browser runs on a private event-loop thread so plain synchronous code (trl reward
functions, the CLI) can call it from any thread; every call has a deadline.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import io
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace

import numpy as np
from PIL import Image

from .assets import resolve as resolve_assets
from .assets import unresolve as unresolve_assets
from .compact import COMPACT_JS, minify_styles
from .interact import (
    SCROLL_HOME_JS,
    Interaction,
    check_ops,
    hit_test,
    open_world,
    run_ops,
    run_ops_pooled,
)
from .sandbox import NO_WEBRTC_JS, SHELL_URL, chromium_args, chromium_path, shell_response
from .watchdog import MemoryWatchdog

# The default screen: a phone in CSS pixels (what the phone app, the CLI and render_html assume).
PHONE_WIDTH, PHONE_HEIGHT = 360, 640
# Pages never change size (see Renderer._context), so a corpus of several sizes keeps idle pages
# for this many sizes per scale: switching sizes then opens no page (a page takes ~80 ms to open).
SIZES_KEPT = 3
# Seconds beyond the per-render limit a caller waits before its call is abandoned.
CALL_SLACK_S = 20.0
# Pages in a row that did not open in time, the browser still connected, before it counts as
# wedged and is restarted. One slow page is as often a starved CPU's doing: restarting on it
# failed every render in flight (29-91 restarts in ten minutes of a starved soak, RESULTS #38).
WEDGED_AFTER = 3
# The failures retried on a fresh page, and what one that fails on every try is reported as: a
# crash stays one; a page that earlier renders may have spoilt ("contaminated") but fails afresh
# too was this input's own doing; a page that never opened in time is a timeout.
_RETRIED = {"crashed": "crashed", "contaminated": "failed", "slow_open": "timeout"}
PAGE_CLOSE_S = 3.0
MAX_BOXES = 3000


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
        if not (s > 0 and math.isfinite(s)):
            raise ValueError(f"device_scale_factor {s} must be a positive number")
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
    _array: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def image(self) -> np.ndarray:
        """The pixels as an RGB uint8 array, decoded once and shared by every reader."""
        if self._array is None:
            a = np.asarray(Image.open(io.BytesIO(self.png)).convert("RGB"))
            a.setflags(write=False)
            self._array = a
        return self._array

    def pil(self) -> Image.Image:
        return Image.fromarray(self.image)

    def save(self, path) -> None:
        with open(path, "wb") as f:
            f.write(self.png)


# Runs in an isolated world: the page's own prototypes and globals are not this world's.
_BOXES_JS = """(() => {
  const out = [], W = innerWidth, H = innerHeight;
  const keep = new Set(['A','BUTTON','INPUT','SELECT','TEXTAREA','IMG','SVG','CANVAS','LABEL','VIDEO','PROGRESS']);
  const body = document.body;
  if (!body) return out;
  for (const el of body.getElementsByTagName('*')) {
    // cheap tests first: only elements with their own text, a kept tag or a role are laid out
    let own = '';
    for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 3) own += n.nodeValue;
    own = own.replace(/\\s+/g, ' ').trim();
    const tag = el.tagName.toUpperCase();
    if (!own && !keep.has(tag) && !el.hasAttribute('role')) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2 || r.right <= 0 || r.bottom <= 0 || r.left >= W || r.top >= H) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || cs.display === 'none' || parseFloat(cs.opacity) === 0) continue;
    out.push({tag: tag.toLowerCase(), text: own.slice(0, 200), x: r.left, y: r.top, w: r.width, h: r.height});
    if (out.length >= MAX_BOXES) break;
  }
  return out;
})()""".replace("MAX_BOXES", str(MAX_BOXES))


def _clean(html: str) -> str:
    """Chromium cannot carry a lone surrogate; replacing it is what the parser would show anyway."""
    return html.encode("utf-8", "replace").decode("utf-8")


def _size_order(items) -> list[int]:
    """Indices of (html, viewport, ...) items with each page size's together, else in order:
    pages queue for the pool in this order, and a page only serves renders of its own size."""

    def size(i):
        vp = items[i][1]
        return (vp.width, vp.height, vp.device_scale_factor)

    return sorted(range(len(items)), key=size)


async def _each(items, make, raising: bool = False, deadline: float | None = None):
    """`make(*item)` for every item, awaited concurrently and started grouped by page size;
    results in the items' order, a RenderError in its item's slot unless `raising`. With a
    `deadline` (seconds), an item not answered by then is stopped and gets a timeout in its slot:
    the others keep their answers (the whole call used to fail, under a starved CPU, 6-7 times in
    ten minutes of benchmarks/soak.py)."""

    async def one(item):
        try:
            return await make(*item)
        except RenderError as e:
            if raising:
                raise
            return e

    order = _size_order(items)
    if deadline is None or raising or not items:
        got = await asyncio.gather(*(one(items[i]) for i in order))
    else:
        tasks = [asyncio.ensure_future(one(items[i])) for i in order]
        _done, late = await asyncio.wait(tasks, timeout=deadline)
        for t in late:
            t.cancel()
        await asyncio.gather(*late, return_exceptions=True)  # each one's own clean-up runs
        why = f"no answer within the call's {deadline:.0f}s deadline"
        got = [RenderError("timeout", why) if t in late else t.result() for t in tasks]
    out: list = [None] * len(items)
    for i, r in zip(order, got):
        out[i] = r
    return out


class _Slot:
    """One pooled page, its CDP session, and whether anything moved it off its shell document."""

    def __init__(self, page, cdp, frame: dict, generation: int, size: tuple[int, int]):
        self.page, self.cdp, self.generation, self.size = page, cdp, generation, size
        self.frame_id, self.loader_id = frame["id"], frame["loaderId"]
        self.uses = 0
        self.blocked: list[str] = []
        self.world: int | None = None  # the pooled interactions' isolated world (Renderer.ainteract)
        self.pointer_on = False  # an interaction left the pointer over the page

    async def still_on_shell(self, scripts: bool) -> bool:
        """No cross-document navigation since the shell loaded.

        Without scripts nothing can change the URL but a navigation, so Playwright's own record of
        it answers at no cost; with scripts (history.pushState changes the URL in place) the
        frame's loader, which only a new document replaces, is asked for."""
        if not scripts:
            return self.page.url.split("#")[0] == SHELL_URL
        frame = (await self.cdp.send("Page.getFrameTree"))["frameTree"]["frame"]
        return frame["loaderId"] == self.loader_id


class Renderer:
    """Sandboxed, pooled, cached HTML renderer.

    Every network request is refused (headers policy, request router, dead proxy and resolver),
    each render has a time limit and a fresh document, a renderer process over
    `max_renderer_mb` is killed (`too_large`), and a crashed browser is restarted so the rest of
    a batch still completes.
    """

    def __init__(
        self,
        pool_size: int = 4,
        timeout_s: float = 10.0,
        cache_size: int = 256,
        allow_scripts: bool = False,
        max_html_bytes: int = 5_000_000,
        retries: int = 1,
        max_renderer_mb: int = 2048,
    ):
        if pool_size < 1 or timeout_s <= 0 or retries < 0:
            raise ValueError("pool_size must be >= 1, timeout_s > 0 and retries >= 0")
        self.pool_size = pool_size
        self.timeout_s = timeout_s
        self.cache_size = cache_size
        self.allow_scripts = allow_scripts
        self.max_html_bytes = max_html_bytes
        self.retries = retries
        self.max_renderer_mb = max_renderer_mb
        self.restarts = 0
        self.pages_opened = 0  # pages the pool has opened, idle ones reused not counted
        self._slow_opens = 0  # pages in a row that did not open in time (WEDGED_AFTER)
        self._cache: OrderedDict[str, RenderResult] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="wm-renderer", daemon=True)
        self._thread.start()
        self._pw = None
        self._browser = None
        self._contexts: dict[tuple[int, int, float], object] = {}
        self._idle: dict[float, list[_Slot]] = {}
        self._sems: dict[float, asyncio.Semaphore] = {}
        self._lock: asyncio.Lock | None = None
        self._page_lock: asyncio.Lock | None = None
        self._generation = 0
        # scripts are the only way a page's memory outgrows its (size-capped) markup
        self._watchdog = MemoryWatchdog(max_renderer_mb if allow_scripts else None)
        self._closed = False

    # ---- public, synchronous -------------------------------------------------
    def render(self, html: str, viewport: Viewport, boxes: bool = True) -> RenderResult:
        """Render one page; raises RenderError. `boxes=False` skips reading element boxes (pixels only)."""
        return self._call(self.arender(html, viewport, boxes), 1)

    def render_many(
        self, items: Sequence[tuple[str, Viewport]], boxes: bool = True
    ) -> list[RenderResult | RenderError]:
        """Render a batch concurrently; each failure comes back in its slot as a RenderError."""
        return self._each_slot(list(items), lambda h, v: self.arender(h, v, boxes))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(30)
        except Exception:
            pass
        finally:
            self._watchdog.stop()
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- async API ----------------------------------------------------------
    async def arender_many(self, items, boxes: bool = True):
        return await _each(list(items), lambda h, v: self.arender(h, v, boxes))

    async def arender(self, html: str, viewport: Viewport, boxes: bool = True) -> RenderResult:
        self._admit(html)
        key = self._key(html, viewport, boxes)
        with self._cache_lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return replace(self._cache[key], cached=True)
        clean = _clean(resolve_assets(html))
        result = await self._retrying(lambda: self._render_once(clean, viewport, boxes))
        with self._cache_lock:
            self._cache[key] = result
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return result

    # ---- internals ----------------------------------------------------------
    def _admit(self, html) -> None:
        """A RenderError for what no page should be asked to load: not text, or over the size cap."""
        if not isinstance(html, str):
            raise RenderError("failed", f"html must be str, got {type(html).__name__}")
        size = len(html.encode("utf-8", "surrogatepass"))
        if size > self.max_html_bytes:
            raise RenderError("too_large", f"html is {size} bytes, limit is {self.max_html_bytes}")

    async def _retrying(self, attempt):
        """`await attempt()`, again on a fresh page after a failure `_RETRIED` names; when every
        try fails, the reason it names for the last one."""
        last: RenderError | None = None
        for _attempt in range(self.retries + 1):
            try:
                return await attempt()
            except RenderError as e:
                last = e
                if e.reason not in _RETRIED:
                    raise
        reported = _RETRIED[last.reason]  # type: ignore[union-attr]  (one try at least)
        if reported == last.reason:  # type: ignore[union-attr]
            raise last  # type: ignore[misc]
        raise RenderError(reported, str(last).split(": ", 1)[1])

    async def _load(self, slot: _Slot, html: str, vp: Viewport, keep_pointer: bool = False) -> None:
        """Replace the slot's document with `html` (the slot came from `_take(vp)`, already that size).

        The window's scroll outlives a document written over it: it goes back to the top first, so
        a page is shown where it opens (a capture's kept scroll, render/capture.py, is set by the
        page itself), never where the page before it was scrolled to. A pointer a pooled
        interaction left over the page moves off it too, unless `keep_pointer` (the next
        interaction places it itself): it would hover what the new document puts there. With
        `keep_pointer` the document is written in one call (document.open/write/close, as
        Playwright's set_content does) without waiting for its load event: run_ops_pooled's first
        script waits for it."""
        world = (
            slot.world if slot.world is not None else await open_world(slot.cdp, slot.frame_id, "wm-reset")
        )
        await slot.cdp.send("Runtime.evaluate", {"expression": SCROLL_HOME_JS, "contextId": world})
        if slot.pointer_on and not keep_pointer:
            await slot.cdp.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": -1, "y": -1})
            slot.pointer_on = False
        if keep_pointer:  # a pooled interaction: one call, its first script waits for the load event
            await slot.cdp.send("Page.setDocumentContent", {"frameId": slot.frame_id, "html": html})
            return
        await slot.page.set_content(html, wait_until="load", timeout=self.timeout_s * 1000)

    def _deadline(self, n_items: int) -> float:
        """Seconds a call of `n_items` may take: each wave of the pool at its per-render limit on
        every try, and CALL_SLACK_S."""
        waves = math.ceil(max(1, n_items) / self.pool_size)
        return waves * self.timeout_s * (self.retries + 1) + CALL_SLACK_S

    def _each_slot(self, items: list, make) -> list:
        """`make(*item)` for each item (`_each`): a RenderError in the slot of each one that
        failed or was not answered by the call's deadline; the call itself waits CALL_SLACK_S
        more, for the late ones' clean-up, before it gives up as a whole."""
        deadline = self._deadline(len(items))
        return self._call(_each(items, make, deadline=deadline), len(items), CALL_SLACK_S)

    def _call(self, coro, n_items: int, backstop: float = 0.0):
        if self._closed:
            coro.close()
            raise RuntimeError("renderer is closed")
        deadline = self._deadline(n_items) + backstop
        fut = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return fut.result(timeout=deadline)
        except FutureTimeout:
            fut.cancel()
            raise RenderError("timeout", f"no answer within the call's {deadline:.0f}s deadline") from None

    def _key(self, html: str, vp: Viewport, boxes: bool = True) -> str:
        # surrogatepass keeps lone surrogates distinct: two different inputs never share a key
        h = hashlib.sha256(html.encode("utf-8", "surrogatepass"))
        h.update(
            f"|{vp.width}x{vp.height}@{vp.device_scale_factor}|js={self.allow_scripts}|b={boxes}".encode()
        )
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
            self._contexts.clear()
            self._idle.clear()
            self._generation += 1
            self._browser = await self._pw.chromium.launch(
                executable_path=chromium_path(), args=chromium_args(self.max_renderer_mb), headless=True
            )
            self._watchdog.start()

    async def _context(self, vp: Viewport):
        """The browser context for pages of `vp`'s size and scale: one per size, so pages of
        different sizes never share a renderer process. Sharing one, a screenshot now and then
        came back as the page's corner tiled at the other page's width (2 of 120 renders
        alternating a 160x210 and a 360x640 page; none of 640 with a context per size)."""
        key = (vp.width, vp.height, vp.device_scale_factor)
        if key not in self._contexts:
            for k, old in list(self._contexts.items()):  # sizes no page uses any more
                if not old.pages:
                    del self._contexts[k]
                    await self._close_context_quietly(old)
            ctx = await self._browser.new_context(
                viewport={"width": vp.width, "height": vp.height},
                device_scale_factor=vp.device_scale_factor,
                java_script_enabled=self.allow_scripts,
                service_workers="block",
                offline=True,
                accept_downloads=False,
            )
            await ctx.route("**/*", self._route)
            if self.allow_scripts:
                await ctx.add_init_script(NO_WEBRTC_JS)
            self._contexts[key] = ctx
        return self._contexts[key]

    @staticmethod
    async def _close_context_quietly(ctx) -> None:
        try:
            await asyncio.wait_for(ctx.close(), PAGE_CLOSE_S)
        except Exception:
            pass

    def _sem(self, scale: float) -> asyncio.Semaphore:
        if scale not in self._sems:
            self._sems[scale] = asyncio.Semaphore(self.pool_size)
        return self._sems[scale]

    async def _route(self, route):
        req = route.request
        if req.url == SHELL_URL and req.is_navigation_request():
            status, headers, body = shell_response(self.allow_scripts)
            await route.fulfill(status=status, headers=headers, body=body)
            return
        slot = getattr(req.frame.page, "_wm_slot", None)
        if slot is not None:
            slot.blocked.append(req.url[:200])
        await route.abort("blockedbyclient")

    async def _new_slot(self, vp: Viewport) -> _Slot:
        # One page at a time: pages that start navigating together are put in one renderer
        # process, where their renders then queue on one main thread (measured: 0.65x throughput).
        if self._page_lock is None:
            self._page_lock = asyncio.Lock()
        async with self._page_lock:
            return await self._open_slot(vp)

    async def _open_slot(self, vp: Viewport) -> _Slot:
        ctx = await self._context(vp)
        page = await ctx.new_page()  # born at its context's size: never resized (see _context)
        # a popup the page opens (only possible with scripts on) is closed at once
        page.on("popup", lambda p: asyncio.ensure_future(self._close_quietly(p)))
        cdp = await ctx.new_cdp_session(page)
        await page.goto(SHELL_URL, wait_until="load", timeout=self.timeout_s * 1000)
        tree = await cdp.send("Page.getFrameTree")
        slot = _Slot(page, cdp, tree["frameTree"]["frame"], self._generation, (vp.width, vp.height))
        page._wm_slot = slot
        self.pages_opened += 1
        return slot

    async def _take(self, vp: Viewport) -> _Slot:
        """An idle page of `vp`'s size, else a new one; the idle page of another size that served
        least recently makes way for it once the scale holds `pool_size * SIZES_KEPT` pages."""
        idle = self._idle.setdefault(vp.device_scale_factor, [])
        key = (vp.width, vp.height)
        live = [s for s in idle if s.generation == self._generation and not s.page.is_closed()]
        same = [s for s in live if s.size == key]
        idle[:] = [s for s in live if s.size != key] + same[:-1]
        if same:
            return same[-1]
        scale = vp.device_scale_factor
        pages = sum(len(c.pages) for k, c in self._contexts.items() if k[2] == scale)
        if idle and pages >= self.pool_size * SIZES_KEPT:
            await self._discard(idle.pop(0))
        return await self._new_slot(vp)

    def _late_slot(self, taking: asyncio.Future, scale: float) -> None:
        """A page that opened after its render gave up on it: idle in the pool, for the next
        render of its size (dropped where the browser was restarted meanwhile)."""
        if taking.cancelled() or taking.exception() is not None:
            return
        slot = taking.result()
        if slot.generation == self._generation and not slot.page.is_closed():
            self._idle.setdefault(scale, []).append(slot)

    async def _close_quietly(self, page, slot: _Slot | None = None) -> bool:
        """Close a page; stop its scripts first. False when even that did not answer."""
        try:
            if slot is not None and self.allow_scripts:
                await asyncio.wait_for(slot.cdp.send("Runtime.terminateExecution"), 1)
        except Exception:
            pass
        try:
            await asyncio.wait_for(page.close(run_before_unload=False), PAGE_CLOSE_S)
            return True
        except Exception:
            return False

    async def _discard(self, slot: _Slot) -> None:
        if not await self._close_quietly(slot.page, slot) and slot.generation == self._generation:
            await self._mark_crashed()  # a renderer that will not even close is wedged

    async def _render_once(self, html: str, vp: Viewport, want_boxes: bool = True) -> RenderResult:
        (png, boxes), blocked, elapsed = await self._on_slot(
            vp, lambda slot: self._draw(slot, html, vp, want_boxes), reuse=True
        )
        return RenderResult(
            png=png,
            viewport=vp,
            boxes=[Box(**b) for b in boxes],
            elapsed_s=elapsed,
            blocked_requests=blocked,
        )

    async def _on_slot(self, vp: Viewport, work, reuse: bool):
        """Run `work(slot)` on a pooled page under the time limit: (its result, blocked requests,
        seconds). A failure becomes a RenderError; the page goes back to the pool only when
        `reuse` and nothing moved it off its shell."""
        try:
            await self._ensure_browser()
        except FileNotFoundError as e:
            raise RenderError("failed", str(e)) from None
        except Exception as e:
            raise RenderError("crashed", f"could not launch chromium: {e}") from e
        scale = vp.device_scale_factor
        async with self._sem(scale):
            kills = self._watchdog.kills
            taking = asyncio.ensure_future(self._take(vp))
            try:
                # shielded: an open cancelled half way left its half-made page in the context
                # until the next restart; one that outlives the time limit joins the pool instead
                slot = await asyncio.wait_for(asyncio.shield(taking), self.timeout_s)
                self._slow_opens = 0
            except asyncio.TimeoutError:
                taking.add_done_callback(lambda t: self._late_slot(t, scale))
                self._slow_opens += 1
                connected = self._browser is not None and self._browser.is_connected()
                if not connected or self._slow_opens >= WEDGED_AFTER:
                    self._slow_opens = 0
                    await self._mark_crashed()
                raise RenderError("slow_open", f"could not open a page within {self.timeout_s:g}s") from None
            except Exception as e:
                await self._mark_crashed()
                raise RenderError(
                    "crashed", f"could not open a page: {(str(e) or type(e).__name__).splitlines()[0]}"
                ) from e
            t0 = time.perf_counter()
            slot.blocked = []
            # a failure on a page that served earlier renders may be their doing: retry on a fresh one
            suspect = "contaminated" if slot.uses else "failed"
            slot.uses += 1
            try:
                out = await asyncio.wait_for(work(slot), self.timeout_s)
            except asyncio.CancelledError:  # the call's deadline passed: the page may be mid-work
                await self._discard(slot)
                raise
            except asyncio.TimeoutError:
                await self._discard(slot)
                raise RenderError("timeout", f"page did not finish within {self.timeout_s:.1f}s") from None
            except Exception as e:
                await self._discard(slot)
                msg = str(e).splitlines()[0] if str(e) else type(e).__name__
                if self._watchdog.kills > kills:
                    raise RenderError("too_large", f"renderer went over {self.max_renderer_mb} MB") from e
                if self._browser is None or not self._browser.is_connected() or "crash" in msg.lower():
                    await self._mark_crashed()
                    raise RenderError("crashed", msg) from e
                raise RenderError(suspect, msg) from e
            if not await slot.still_on_shell(self.allow_scripts):
                await self._discard(slot)  # something moved the page: the pixels are not this HTML's
                raise RenderError(suspect, "the page navigated away during its render")
            blocked = list(slot.blocked)
            if not reuse or self.allow_scripts or slot.generation != self._generation or "#" in slot.page.url:
                await self._discard(slot)
            else:
                self._idle[scale].append(slot)
        return out, blocked, time.perf_counter() - t0

    # ---- compacting (render/compact.py) --------------------------------------
    def compact_many(self, items: Sequence[tuple[str, Viewport]]) -> list[str]:
        """Each page's HTML made shorter where its screenshot stays identical, else as it was."""
        items = list(items)

        async def all_():
            return await _each(items, self._acompact, raising=True)

        return self._call(all_(), 3 * len(items))

    async def _acompact(self, html: str, vp: Viewport) -> str:
        async def strip(slot):
            await self._load(slot, html, vp)
            world = await open_world(slot.cdp, slot.frame_id, "wm-compact")
            got = await slot.cdp.send(
                "Runtime.evaluate", {"expression": COMPACT_JS, "contextId": world, "returnByValue": True}
            )
            return got.get("result", {}).get("value")

        try:
            original = (await self.arender(html, vp, boxes=False)).image
            stripped, _, _ = await self._retrying(lambda: self._on_slot(vp, strip, reuse=False))
        except RenderError:
            return html
        for candidate in (
            (minify_styles(stripped), minify_styles(html)) if stripped else (minify_styles(html),)
        ):
            if len(candidate) >= len(html):
                continue
            try:
                if np.array_equal((await self.arender(candidate, vp, boxes=False)).image, original):
                    return candidate
            except RenderError:
                continue
        return html

    # ---- acting on a page (the sim world model) -------------------------------
    def interact(self, html: str, viewport: Viewport, ops) -> Interaction:
        """Load `html`, apply input operations (render/interact.py), capture the result; raises RenderError."""
        return self._call(self.ainteract(html, viewport, ops), 1)

    def interact_many(self, items, pooled: bool = False) -> list[Interaction | RenderError]:
        """Several (html, viewport, ops) concurrently; each failure comes back in its slot.
        `pooled`: act on pooled pages and keep them (see ainteract) instead of a fresh page each."""
        return self._each_slot(list(items), lambda h, v, o: self.ainteract(h, v, o, pooled))

    async def ainteract(self, html: str, viewport: Viewport, ops, pooled: bool = False) -> Interaction:
        """Without `pooled` the page is closed afterwards (what acting left on it cannot reach the
        next render). With it, the page goes back to the pool with the pointer moved off it and
        the window scrolled home (render/interact.py's leave_page), unless an in-page anchor gave
        its URL a fragment (`:target` would then style the next document): opening a page costs
        more than the whole interaction."""
        self._admit(html)
        try:
            ops = check_ops(ops)
        except ValueError as e:
            raise RenderError("failed", str(e)) from None

        async def act(slot):
            t0 = time.perf_counter()
            if not pooled:
                return await run_ops(slot.page, slot.cdp, slot.frame_id, ops), time.perf_counter() - t0
            if slot.world is None:  # an isolated world outlives the documents loaded into the page
                slot.world = await open_world(slot.cdp, slot.frame_id, "wm-sim")
            slot.pointer_on = True
            return await run_ops_pooled(slot.page, slot.cdp, slot.world, ops), time.perf_counter() - t0

        # an in-page anchor changes the URL's fragment: such a page is never pooled again
        ((out_html, notes), act_s), _, elapsed = await self._on_page(
            html, viewport, act, pooled, keep_pointer=pooled
        )
        return Interaction(unresolve_assets(out_html), notes, elapsed, act_s)

    def hit_many(self, items) -> list[list | RenderError]:
        """Several (html, viewport, points): for each point in CSS px, [number, tag] of the element
        it lands on (numbered in document order, the body 0), or None; failures in their slots."""

        async def one(html, vp, points):
            self._admit(html)
            hits, _, _ = await self._on_page(
                html, vp, lambda slot: hit_test(slot.cdp, slot.frame_id, list(points)), reuse=True
            )
            return hits

        return self._each_slot(list(items), one)

    async def _on_page(self, html: str, vp: Viewport, act, reuse: bool, keep_pointer: bool = False):
        """Load `html` (already admitted) on a pooled page and run `act(slot)` there, retried as a
        render is: (its result, blocked requests, seconds)."""
        clean = _clean(resolve_assets(html))

        async def work(slot):
            await self._load(slot, clean, vp, keep_pointer)
            return await act(slot)

        return await self._retrying(lambda: self._on_slot(vp, work, reuse=reuse))

    async def _mark_crashed(self):
        if self._browser is not None and self._browser.is_connected():
            try:
                await asyncio.wait_for(self._browser.close(), 5)
            except Exception:
                pass

    async def _draw(self, slot: _Slot, html: str, vp: Viewport, want_boxes: bool = True):
        ms = self.timeout_s * 1000
        await self._load(slot, html, vp)
        boxes = []
        if want_boxes:
            world = await open_world(slot.cdp, slot.frame_id, "wm")
            got = await slot.cdp.send(
                "Runtime.evaluate", {"expression": _BOXES_JS, "contextId": world, "returnByValue": True}
            )
            boxes = got.get("result", {}).get("value") or []
        png = await slot.page.screenshot(type="png", animations="disabled", caret="hide", timeout=ms)
        # No pending <meta refresh> can outlive this render: the shell's CSP sandbox blocks refresh
        # without scripts, pages that ran scripts are closed, and a navigation is caught after it.
        return png, boxes

    async def _shutdown(self):
        try:
            if self._browser is not None:
                await asyncio.wait_for(self._browser.close(), 10)
        except Exception:
            pass
        if self._pw is not None:
            try:
                await asyncio.wait_for(self._pw.stop(), 10)
            except Exception:
                pass


def read_html(path) -> str:
    """An HTML file as text; ValueError naming it when it is missing, empty, binary or not UTF-8."""
    from pathlib import Path

    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{p}: no such HTML file")
    data = p.read_bytes()
    if not data.strip():
        raise ValueError(f"{p} is empty")
    if b"\x00" in data[:65536]:
        raise ValueError(f"{p} is binary, not HTML")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{p} is not UTF-8 text (byte {e.start})") from None


_default: Renderer | None = None
_default_lock = threading.Lock()


def default_renderer() -> Renderer:
    """A process-wide renderer, started on first use (for one-off calls; hold your own for batches)."""
    global _default
    with _default_lock:
        if _default is None or _default._closed:
            _default = Renderer()
            atexit.register(_default.close)
        return _default


def render_html(
    html: str, viewport: Viewport | tuple[int, int] = (PHONE_WIDTH, PHONE_HEIGHT)
) -> RenderResult:
    """Render `html` at `viewport` (a Viewport or (width, height)) with the shared renderer."""
    if not isinstance(viewport, Viewport):
        viewport = Viewport(*viewport)
    return default_renderer().render(html, viewport)
