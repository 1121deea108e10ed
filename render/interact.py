"""Act on a rendered page with real input events and capture what the browser made of them.

This is the render-level half of the `sim` world model: the browser's own physics (a click
toggles a checkbox, focuses a field or follows an in-page anchor; typed keys land in the focused
field; Tab moves focus; a wheel scrolls the box under the pointer) applied to a screen's HTML
with scripts still off, then the result captured with the corpus' own capture (render/capture.py).
An app's scripted reactions are exactly what it cannot know; a learned model composed after it
(`sim+MODEL`) is there for those.

Input is a list of plain operations in CSS pixels, so this layer needs nothing from the world
model's types:

    ("click", x, y)                  press and release the primary button
    ("hover", x, y)                  move the pointer only
    ("type", text)                   insert text into whatever has focus
    ("key", name)                    one key by its Playwright name (Enter, Tab, ArrowDown, ...)
    ("scroll", x, y, dx, dy)         scroll the scrollable box under (x, y), else the document

Before the operations the focus the capture recorded (`wm-focus`) is given back to its element
with the caret at the end, the pointer goes back over the element it hovered (`wm-hover`), and links that would leave the document lose their href for the
duration (a page that navigates away has no next screen to capture); a click on one is reported.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

from .capture import CAPTURE_JS, CAPTURE_OPTIONS, with_state_names

OPS = ("click", "hover", "type", "key", "scroll")

# The window back at its top-left at once: a page whose CSS asks for smooth scrolling would glide
# there instead, and still be moving when a screenshot, a capture or the next document comes.
SCROLL_HOME_JS = "scrollTo({left: 0, top: 0, behavior: 'instant'})"

# ---- an action as input events: the one mapping the recorder and the sim both use --------------
# Which way the finger moves for each direction (x right, y down).
DIRECTION_VECTORS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
# How far the view travels for a scroll (a wheel) and the finger for a swipe (a drag), in CSS
# pixels; how long a long press holds and a wait waits, in milliseconds.
SCROLL_PX = 300
SWIPE_PX = 150
LONG_PRESS_MS = 700
WAIT_MS = 1000


def action_events(action, scale: float, width: float, height: float) -> list[tuple]:
    """The input events (CSS pixels) that carry out `action` on a page `width` x `height`:

        ("click", x, y)              press and release the primary button
        ("press", x, y, ms)          hold the button down `ms` (a long press)
        ("wheel", x, y, dx, dy)      the wheel under (x, y): the view travels (dx, dy)
        ("drag", x, y, dx, dy)       a finger down at (x, y) moving (dx, dy), then up (a swipe)
        ("type", text)               keys typed into whatever has focus
        ("key", name)                one key by its Playwright name
        ("system", name, arg)        what only the system does: back, home, open_app (arg: the app)
        ("wait", ms)

    `action` is any object with the world model's Action fields (type, x, y in device pixels,
    finger_direction, text, key, app); `scale` is the screen's device scale factor. The recorder
    (corpus/recorder.py `perform`) plays these on a live page; the sim plays what a page with
    scripts off makes of them (`sim_ops`)."""
    x = None if action.x is None else action.x / scale
    y = None if action.y is None else action.y / scale
    t = action.type
    if t == "tap":
        return [("click", x, y)]
    if t == "long_press":
        return [("press", x, y, LONG_PRESS_MS)]
    if t in ("scroll", "swipe"):
        dx, dy = DIRECTION_VECTORS[action.finger_direction]
        cx = width / 2 if x is None else x
        cy = height / 2 if y is None else y
        if t == "scroll":
            return [
                ("wheel", cx, cy, -dx * SCROLL_PX, -dy * SCROLL_PX)
            ]  # the view travels against the finger
        return [("drag", cx, cy, dx * SWIPE_PX, dy * SWIPE_PX)]
    if t == "type":
        ops = [("click", x, y)] if x is not None and y is not None else []
        return ops + [("type", action.text or "")]
    if t == "key":
        return [("key", action.key or "Enter")]
    if t in ("back", "home", "open_app"):
        return [("system", t, getattr(action, "app", None))]
    if t == "wait":
        return [("wait", WAIT_MS)]
    raise ValueError(f"no input events for an action of type {t!r}")


def sim_ops(events: list[tuple]) -> tuple[list[tuple], str]:
    """What a page with its scripts off makes of `events`: the operations `run_ops` performs
    (OPS above) and a note for what it cannot do (no operations at all for what only the app or
    the system could change: the page stays as it is)."""
    ops, notes = [], []
    for ev in events:
        kind = ev[0]
        if kind == "click":
            ops.append(ev)
        elif kind == "press":
            ops.append(("hover", ev[1], ev[2]))
            notes.append("a long press has no effect a browser makes without the app's scripts")
        elif kind == "wheel":
            ops.append(("scroll", *ev[1:]))
        elif kind == "drag":  # the box under the finger moves with it: the view travels against it
            _, x, y, dx, dy = ev
            ops.append(("scroll", x, y, -dx, -dy))
        elif kind in ("type", "key"):
            ops.append(ev)
        else:
            what = ev[1] if kind == "system" else kind
            return (
                [],
                f"{what}: the sim leaves the page as it is (only the app or the system could change it)",
            )
    return ops, "; ".join(notes)


@dataclass
class Interaction:
    """The page's HTML after the operations, and what the browser could not do."""

    html: str
    notes: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    act_s: float = 0.0  # of elapsed_s, the operations and the capture (the rest: page and load)


def check_ops(ops) -> list[tuple]:
    """The operations as tuples; a ValueError names the first malformed one."""
    out = []
    for i, op in enumerate(ops):
        op = tuple(op)
        if not op or op[0] not in OPS:
            raise ValueError(f"operation {i} ({op!r}) is not one of {', '.join(OPS)}")
        n = {"click": 3, "hover": 3, "type": 2, "key": 2, "scroll": 5}[op[0]]
        if len(op) != n:
            raise ValueError(f"operation {i} ({op!r}) needs {n - 1} argument(s)")
        out.append(op)
    return out


# Runs in an isolated world (the page's scripts, if any, cannot see or undo it).
_PREPARE_JS = """(() => {
  const here = location.href.split('#')[0];
  for (const a of document.querySelectorAll('a[href], area[href]')) {
    let url = '';
    try { url = new URL(a.getAttribute('href'), document.baseURI).href; } catch (e) {}
    if (url.split('#')[0] !== here) { a.setAttribute('data-wm-href', a.getAttribute('href')); a.removeAttribute('href'); }
  }
  const focused = [...document.querySelectorAll('.' + __WM_FOCUS__)].pop();
  if (focused && focused.focus) {
    focused.focus({preventScroll: true});
    try { const n = (focused.value || '').length; focused.setSelectionRange(n, n); } catch (e) {}
  }
  const hovered = [...document.querySelectorAll('.' + __WM_HOVER__)].pop();
  if (!hovered) return null;
  const r = hovered.getBoundingClientRect();
  return r.width && r.height ? [r.left + r.width / 2, r.top + r.height / 2] : null;
})()"""
_PREPARE_JS = with_state_names(_PREPARE_JS)

_RESTORE_JS = """(() => {
  for (const a of document.querySelectorAll('[data-wm-href]')) {
    a.setAttribute('href', a.getAttribute('data-wm-href')); a.removeAttribute('data-wm-href');
  }
  return true;
})()"""

_LEAVING_LINK_JS = """((x, y) => {
  const el = document.elementFromPoint(x, y);
  const a = el && el.closest('[data-wm-href]');
  return a ? a.getAttribute('data-wm-href') : '';
})"""

_SCROLL_JS = """((x, y, dx, dy) => {
  let el = document.elementFromPoint(x, y);
  const root = document.scrollingElement || document.documentElement;
  for (; el && el !== document.body && el !== document.documentElement; el = el.parentElement) {
    const cs = getComputedStyle(el);
    const canY = /(auto|scroll)/.test(cs.overflowY) && el.scrollHeight > el.clientHeight + 1;
    const canX = /(auto|scroll)/.test(cs.overflowX) && el.scrollWidth > el.clientWidth + 1;
    if ((dy && canY) || (dx && canX)) break;
  }
  const target = (!el || el === document.body || el === document.documentElement) ? root : el;
  const before = [target.scrollLeft, target.scrollTop];
  target.scrollBy({left: dx, top: dy, behavior: 'instant'});
  return before[0] !== target.scrollLeft || before[1] !== target.scrollTop;
})"""


# Which element each point lands on, as its number in document order with the body as 0 (the
# numbering worldmodel/edit.py addresses) and its tag, so a caller can check it parsed the same.
# A shadow root counts where its declarative <template shadowrootmode> stood in the HTML (the
# host's first child, render/capture.py): one number for the template, then the root's elements.
_HIT_JS = """((points) => {
  const all = [];
  const visit = (el) => {
    all.push(el);
    if (el.shadowRoot) { all.push(null); for (const c of el.shadowRoot.children) visit(c); }
    for (const c of el.children) visit(c);
  };
  visit(document.body);
  const index = new Map();
  all.forEach((el, i) => { if (el) index.set(el, i); });
  const up = (el) => el.parentNode instanceof ShadowRoot ? el.parentNode.host : el.parentElement;
  return points.map(([x, y]) => {
    let el = document.elementFromPoint(x, y);
    while (el && el.shadowRoot) {
      const inner = el.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === el) break;
      el = inner;
    }
    while (el && !index.has(el)) el = up(el);
    return el ? [index.get(el), el.localName] : null;
  });
})"""


async def hit_test(cdp, frame_id: str, points: list[tuple[float, float]]) -> list:
    """For each (x, y) in CSS px: [number, tag] of the element there (body = 0), or None."""
    ctx = await open_world(cdp, frame_id, "wm-hit")
    pts = json.dumps([[float(x), float(y)] for x, y in points])
    return await _eval(cdp, ctx, f"{_HIT_JS}({pts})")


async def _eval(cdp, context_id: int, expression: str, await_promise: bool = False):
    got = await cdp.send(
        "Runtime.evaluate",
        {
            "expression": expression,
            "contextId": context_id,
            "returnByValue": True,
            "awaitPromise": await_promise,
        },
    )
    if "exceptionDetails" in got:
        d = got["exceptionDetails"]
        raise RuntimeError((d.get("exception") or {}).get("description") or d.get("text") or "script error")
    return got.get("result", {}).get("value")


async def open_world(cdp, frame_id: str, name: str) -> int:
    """A fresh isolated JavaScript world in the frame: the page's own scripts and prototypes are
    not this world's, so nothing the page defines can spoof what runs there. Its context id."""
    world = await cdp.send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": name})
    return world["executionContextId"]


async def run_ops(page, cdp, frame_id: str, ops: list[tuple]) -> tuple[str, list[str]]:
    """Apply `ops` to the page's current document and capture it: (html, notes)."""
    ctx = await open_world(cdp, frame_id, "wm-sim")
    notes: list[str] = []
    pointer = await _eval(cdp, ctx, _PREPARE_JS)
    m = page.mouse
    if pointer:  # the pointer is back where the capture saw it hovering
        await m.move(float(pointer[0]), float(pointer[1]))
    for op in ops:
        kind = op[0]
        if kind in ("click", "hover"):
            x, y = float(op[1]), float(op[2])
            href = await _eval(cdp, ctx, f"{_LEAVING_LINK_JS}({x}, {y})")
            if kind == "click" and href:
                notes.append(f"link to another page ({href[:80]}): the sim keeps this screen")
            await m.move(x, y)
            if kind == "click":
                await m.down()
                await m.up()
        elif kind == "type":
            await page.keyboard.type(str(op[1]))
        elif kind == "key":
            await page.keyboard.press(str(op[1]))
        elif kind == "scroll":
            _, x, y, dx, dy = (float(v) if i else v for i, v in enumerate(op))
            moved = await _eval(cdp, ctx, f"{_SCROLL_JS}({x}, {y}, {dx}, {dy})")
            if not moved:
                notes.append("nothing there can scroll that way")
    await _eval(cdp, ctx, _RESTORE_JS)
    html = await _eval(cdp, ctx, f"({CAPTURE_JS})({json.dumps(CAPTURE_OPTIONS)})", await_promise=True)
    if not isinstance(html, str):
        raise RuntimeError("the capture returned nothing")
    return html, notes


# The pooled path's two scripts: what _PREPARE_JS and the first point's _LEAVING_LINK_JS do, in
# one call; then _RESTORE_JS, the capture, and focus dropped and the window scrolled home (a
# pooled page must serve the next document as a fresh one would), in one call.
# It first waits for the document's load event (Renderer._load with keep_pointer does not), and
# it also says whether typed text may be inserted as one input event: the element the first point
# lands on (else the focused one) is a plain text field, where insertion and keys give one value.
_PREPARE_AT_JS = """(async (point) => {
  if (document.readyState !== 'complete') await new Promise((r) => addEventListener('load', r, {once: true}));
  const pointer = PREPARE;
  let href = '', el = document.activeElement;
  if (point) {
    el = document.elementFromPoint(point[0], point[1]);
    const a = el && el.closest('[data-wm-href]');
    href = a ? a.getAttribute('data-wm-href') : '';
  }
  const plain = !!el && (el.localName === 'textarea' || (el.localName === 'input' &&
    ['text', 'password', 'email', 'search', 'tel', 'url'].includes(el.type)));
  return [pointer, href, plain];
})""".replace("PREPARE", _PREPARE_JS)

_CAPTURE_AND_LEAVE_JS = (
    """(async (opts) => {
  RESTORE;
  const html = await (CAPTURE)(opts);
  if (document.activeElement && document.activeElement.blur) document.activeElement.blur();
  SCROLL_HOME;
  return html;
})""".replace("RESTORE", _RESTORE_JS)
    .replace("CAPTURE", CAPTURE_JS)
    .replace("SCROLL_HOME", SCROLL_HOME_JS)
)


def _mouse(kind: str, x: float, y: float, pressed: bool = False) -> dict:
    """Input.dispatchMouseEvent's parameters as Playwright's mouse sends them (primary button)."""
    ev = {"type": kind, "x": x, "y": y, "modifiers": 0, "button": "none", "buttons": 0}
    if kind != "mouseMoved":
        ev.update(button="left", clickCount=1, buttons=1 if kind == "mousePressed" else 0)
    elif pressed:
        ev.update(button="left", buttons=1)
    return ev


async def run_ops_pooled(page, cdp, world: int, ops: list[tuple]) -> tuple[str, list[str]]:
    """run_ops for a page that goes back to the pool, in a few round trips to the browser: a
    round trip costs as much as the page's own work here. The same input events in the same
    order and the same scripts, with these differences:

    - `world` is an isolated world opened on the page before (it outlives a new document);
    - the input events between two scripts are sent at once, in order, and awaited together;
    - typed text without control characters is inserted as one input event into a plain text
      field (with scripts off no key event has a listener; the field's value is the same); into
      anything else (a date, a number) it is typed key by key as run_ops types it;
    - afterwards nothing has focus and the window is scrolled home, and the pointer stays where
      the last operation left it: the caller moves it off the page before a render reads hover."""
    notes: list[str] = []
    first = ops[0] if ops and ops[0][0] in ("click", "hover") else None
    point = [float(first[1]), float(first[2])] if first else None
    pointer, first_href, plain = await _eval(cdp, world, f"{_PREPARE_AT_JS}({json.dumps(point)})", True)
    # the pointer goes back where the capture saw it hovering, else off the page
    x0, y0 = (float(pointer[0]), float(pointer[1])) if pointer else (-1.0, -1.0)
    batch: list[tuple[str, dict]] = [("Input.dispatchMouseEvent", _mouse("mouseMoved", x0, y0))]

    async def flush():
        if batch:
            await asyncio.gather(*(cdp.send(method, params) for method, params in batch))
            batch.clear()

    for k, op in enumerate(ops):
        kind = op[0]
        if kind in ("click", "hover"):
            x, y = float(op[1]), float(op[2])
            if k == 0:
                href = first_href
            else:
                await flush()
                href = await _eval(cdp, world, f"{_LEAVING_LINK_JS}({x}, {y})")
            if kind == "click" and href:
                notes.append(f"link to another page ({href[:80]}): the sim keeps this screen")
            moves = ["mouseMoved"] + (["mousePressed", "mouseReleased"] if kind == "click" else [])
            batch += [("Input.dispatchMouseEvent", _mouse(m, x, y)) for m in moves]
        elif kind == "type" and plain and str(op[1]) and str(op[1]).isprintable():
            batch.append(("Input.insertText", {"text": str(op[1])}))
        elif kind in ("type", "key"):  # control characters and keys act as keys do
            await flush()
            if kind == "type":
                await page.keyboard.type(str(op[1]))
            else:
                await page.keyboard.press(str(op[1]))
        elif kind == "scroll":
            await flush()
            _, x, y, dx, dy = (float(v) if i else v for i, v in enumerate(op))
            moved = await _eval(cdp, world, f"{_SCROLL_JS}({x}, {y}, {dx}, {dy})")
            if not moved:
                notes.append("nothing there can scroll that way")
    await flush()
    html = await _eval(
        cdp, world, f"{_CAPTURE_AND_LEAVE_JS}({json.dumps(CAPTURE_OPTIONS)})", await_promise=True
    )
    if not isinstance(html, str):
        raise RuntimeError("the capture returned nothing")
    return html, notes
