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

import json
from dataclasses import dataclass, field

from .capture import CAPTURE_JS, CAPTURE_OPTIONS

OPS = ("click", "hover", "type", "key", "scroll")


@dataclass
class Interaction:
    """The page's HTML after the operations, and what the browser could not do."""

    html: str
    notes: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0


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
  const focused = [...document.querySelectorAll('.wm-focus')].pop();
  if (focused && focused.focus) {
    focused.focus({preventScroll: true});
    try { const n = (focused.value || '').length; focused.setSelectionRange(n, n); } catch (e) {}
  }
  const hovered = [...document.querySelectorAll('.wm-hover')].pop();
  if (!hovered) return null;
  const r = hovered.getBoundingClientRect();
  return r.width && r.height ? [r.left + r.width / 2, r.top + r.height / 2] : null;
})()"""

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
