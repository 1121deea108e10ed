"""Drive real web apps in Chromium and record (screen, action, next screen) transitions."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from render.capture import CAPTURE_JS, CAPTURE_OPTIONS
from render.interact import SCROLL_HOME_JS, action_events
from render.sandbox import CHROMIUM_ARGS, chromium_path
from worldmodel.types import Action, Screen, Transition

from .apps import ORIGIN, AppSpec, router
from .snapshot import SNAPSHOT_JS

CAPTURES = ("stylesheets", "computed")


def recorder_args(loopback: bool) -> list[str]:
    """The sandbox's flags; with `loopback`, the loopback interface is reachable (and nothing else)."""
    if not loopback:
        return list(CHROMIUM_ARGS)
    out = []
    for a in CHROMIUM_ARGS:
        if a.startswith("--host-resolver-rules="):
            a += ", EXCLUDE localhost, EXCLUDE 127.0.0.1, EXCLUDE [::1]"
        elif a == "--proxy-bypass-list=<-loopback>":
            continue  # loopback goes direct; everything else still meets the dead proxy
        out.append(a)
    return out


# Resolves once the page holds still: its scroll position unchanged over three animation frames
# and no finite animation or transition running (a spinner's endless one does not count), or
# after `maxMs`. A tapped in-page link scrolls smoothly and a navbar shrinks as it goes; a
# screenshot taken mid-way and a capture taken a moment later would not show the same screen.
_STILL_JS = """async (maxMs) => {
  const t0 = performance.now();
  const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
  const moving = () => document.getAnimations().some((a) => {
    if (a.playState !== 'running') return false;
    try { return Number.isFinite(a.effect.getComputedTiming().endTime); } catch (e) { return false; }
  });
  let last = null, same = 0;
  while (performance.now() - t0 < maxMs) {
    await frame();
    const pos = [scrollX, scrollY, document.scrollingElement ? document.scrollingElement.scrollTop : 0].join();
    if (pos === last && !moving()) { if (++same >= 3) return true; } else same = 0;
    last = pos;
  }
  return false;
}"""

_ELEMENTS_JS = """() => {
  const out = [];
  const sel = 'a,button,input,textarea,select,label,[onclick],[role=button],[data-note],[data-contact],[data-toggle],.row,#area span,#area div,#area li,#area td,#area h3';
  for (const el of document.querySelectorAll(sel)) {
    const r = el.getBoundingClientRect();
    if (r.width < 4 || r.height < 4 || r.bottom <= 0 || r.right <= 0 || r.top >= innerHeight || r.left >= innerWidth) continue;
    if (el.id === 'sync-task-cover' || el.closest('#reward-display, .info')) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || cs.display === 'none') continue;
    const cx = Math.min(Math.max(r.left + r.width / 2, 1), innerWidth - 1), cy = Math.min(Math.max(r.top + r.height / 2, 1), innerHeight - 1);
    const hit = document.elementFromPoint(cx, cy);
    if (!hit || !(hit === el || el.contains(hit) || hit.contains(el))) continue;
    const tag = el.tagName.toLowerCase(), type = (el.type || '').toLowerCase();
    const editable = (tag === 'input' && !['checkbox','radio','button','submit'].includes(type)) || tag === 'textarea';
    out.push({tag, type, editable, text: (el.innerText || el.value || el.getAttribute('aria-label') || '').trim().slice(0, 80),
              id: el.id, x: cx, y: cy, w: r.width, h: r.height,
              href: (tag === 'a' && el.href && !el.href.startsWith('javascript:')) ? el.href : '',
              scrollable: el.scrollHeight > el.clientHeight + 4 && ['auto','scroll'].includes(cs.overflowY)});
  }
  return out;
}"""


@dataclass
class Element:
    tag: str
    type: str
    editable: bool
    text: str
    id: str
    x: float
    y: float
    w: float
    h: float
    scrollable: bool
    href: str = ""


@dataclass
class StepContext:
    """What a policy sees before choosing the next action."""

    page: Any
    app: AppSpec
    screen: Screen
    goal: str
    step: int
    rng: random.Random
    elements: list[Element] = field(default_factory=list)
    history: list[Action] = field(default_factory=list)


Policy = Callable[[StepContext], "Action | None"]


class Recorder:
    """One Chromium for a whole recording session; a fresh context per episode.

    `capture` chooses how a screen becomes HTML: "stylesheets" (the page's own CSS kept, with
    its resources inlined: render/capture.py) or "computed" (per-element computed styles:
    corpus/snapshot.py). `loopback=True` lets pages reach dev servers on this machine's
    loopback interface; nothing else is ever reachable. After each action it waits `settle_ms`,
    then up to `still_ms` more until the page holds still (`_STILL_JS`), so the screenshot and
    the capture show the same screen.
    """

    def __init__(
        self,
        settle_ms: int = 350,
        capture: str = "stylesheets",
        loopback: bool = False,
        still_ms: int = 3000,
    ):
        if capture not in CAPTURES:
            raise ValueError(f"capture {capture!r} is not one of {', '.join(CAPTURES)}")
        self.settle_ms, self.capture, self.loopback = settle_ms, capture, loopback
        self.still_ms = still_ms
        self._pw = None
        self._browser = None

    def __enter__(self) -> Recorder:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self._browser = self._pw.chromium.launch(
            executable_path=chromium_path(), args=recorder_args(self.loopback)
        )
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._browser.close()
        finally:
            self._pw.stop()

    # ---------------------------------------------------------------------------------------
    def record_trajectory(
        self,
        app: AppSpec,
        policy: Policy,
        max_steps: int = 8,
        seed: int = 0,
        episode_id: str = "",
    ) -> list[Transition]:
        """Run `policy` in `app` for up to `max_steps` actions and return the transitions."""
        vp = app.viewport
        if app.loopback_origin and not self.loopback:
            raise ValueError(
                f"{app.url} is on the loopback interface: record it with Recorder(loopback=True)"
            )
        ctx = self._browser.new_context(
            viewport={"width": vp.width, "height": vp.height},
            device_scale_factor=vp.device_scale_factor,
            service_workers="block",
        )
        try:
            ctx.route("**/*", router(app))
            page = ctx.new_page()
            page.goto(app.url, wait_until="load")
            goal = self._start(page, app, seed)
            rng = random.Random(seed)
            screen = self._capture(page, app)
            out: list[Transition] = []
            history: list[Action] = []
            for step in range(max_steps):
                if app.kind == "miniwob" and page.evaluate("WOB_DONE_GLOBAL"):
                    break
                elements = [Element(**e) for e in page.evaluate(_ELEMENTS_JS)]
                sc = StepContext(page, app, screen, goal, step, rng, elements, history)
                action = policy(sc)
                if action is None:
                    break
                perform(page, action, vp.device_scale_factor)
                page.wait_for_timeout(self.settle_ms)
                nxt = self._capture(page, app)
                meta: dict[str, Any] = {}
                if app.kind == "miniwob":
                    meta["reward"] = float(page.evaluate("WOB_REWARD_GLOBAL"))
                    meta["done"] = bool(page.evaluate("WOB_DONE_GLOBAL"))
                if app.licence:
                    meta["licence"] = app.licence
                meta["source"] = app.kind
                out.append(Transition(screen, action, nxt, goal, app.name, episode_id, step, meta))
                history.append(action)
                screen = nxt
            return out
        finally:
            ctx.close()

    def _start(self, page, app: AppSpec, seed: int) -> str:
        if app.kind == "miniwob":
            page.evaluate(
                "(seed) => { Math.seedrandom(String(seed)); core.EPISODE_MAX_TIME = 1e9; core.startEpisodeReal(); }",
                seed,
            )
            page.wait_for_timeout(100)
            # MiniWoB++'s own harness shows the task in a larger window; in one the task's size a
            # widget focused on start (click-dialog's close button) scrolls the task out of view
            page.evaluate(SCROLL_HOME_JS)
            return page.evaluate("core.getUtterance()")
        page.wait_for_timeout(100)
        if app.goal:
            return app.goal
        # "phone-notes" -> "notes"; a name without a dash is the app's whole name
        return f"Explore the {app.name.split('-', 1)[-1]} app"

    def _capture(self, page, app: AppSpec) -> Screen:
        if self.still_ms:
            try:
                page.evaluate(_STILL_JS, self.still_ms)
            except Exception:  # a page navigating away: the screenshot below waits for it
                pass
        png = page.screenshot(type="png", animations="disabled", caret="hide")
        if self.capture == "stylesheets":
            html = page.evaluate(CAPTURE_JS, CAPTURE_OPTIONS)
        else:
            html = page.evaluate(SNAPSHOT_JS)
        return Screen(png, html=html, device_scale_factor=app.viewport.device_scale_factor, app=app.name)


def leaves_app(href: str, app: AppSpec) -> bool:
    """A link to anywhere but this app's own pages (which the router would refuse anyway)."""
    if not href or href.startswith("#"):
        return False
    base = app.loopback_origin or (f"{ORIGIN}/app/{app.name}/" if app.root else ORIGIN + "/")
    return not href.startswith(base)


def perform(page, action: Action, scale: float = 1.0) -> None:
    """Carry out an action on a live page (device pixels in, CSS pixels to the browser): the
    input events render/interact.py maps it to, played with Playwright's mouse and keyboard."""
    vp = page.viewport_size or {"width": 0, "height": 0}
    m = page.mouse
    for ev in action_events(action, scale, vp["width"], vp["height"]):
        kind = ev[0]
        if kind == "click":
            m.click(ev[1], ev[2])
        elif kind == "press":
            m.move(ev[1], ev[2])
            m.down()
            page.wait_for_timeout(ev[3])
            m.up()
        elif kind == "wheel":
            m.move(ev[1], ev[2])
            m.wheel(ev[3], ev[4])
        elif kind == "drag":
            _, x, y, dx, dy = ev
            m.move(x, y)
            m.down()
            m.move(x + dx, y + dy, steps=8)
            m.up()
        elif kind == "type":
            page.keyboard.type(ev[1], delay=5)
        elif kind == "key":
            page.keyboard.press(ev[1])
        elif kind == "system":
            # Apps that model a phone expose a system Back; a plain web page has none to press.
            if ev[1] == "open_app":
                page.evaluate("(n) => window.wmSystem ? wmSystem.openApp(n) : false", ev[2])
            else:
                page.evaluate(f"window.wmSystem ? wmSystem.{ev[1]}() : null")
        elif kind == "wait":
            page.wait_for_timeout(ev[1])
