"""Where an action lands on a screen's HTML: the element an edit-writing model is pointed at.

Most edits start at the element the action hits: the tapped toggle gains `on`, the field typed
into gets its value, hover and focus move up its ancestors. A model that must first find that
element among thousands of tokens of numbered HTML spends its capacity on search; told the
number (and the ancestors' numbers) up front, it only has to learn what happens there. Finding
it takes layout, so it comes from the browser's hit test; a key goes to the focused element, which
the capture marks with `wm-focus`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from render.capture import FOCUS_CLASS, STATE_CLASS

from .doc import Doc
from .types import Query

# the action types whose point (or focus) names the element they act on
POINTED = ("tap", "long_press", "type", "swipe", "scroll")
MAX_TAG_CHARS = 160  # of the target's opening tag, in the prompt's header


def own_text(el) -> str:
    return re.sub(r"\s+", " ", "".join(t for t in el.find_all(string=True, recursive=False))).strip()


def point_targets(renderer, items) -> list[int | None]:
    """For each (html, viewport, x, y) in CSS px: the number (edit.py's) of the element the
    browser's hit test finds there, or None. One batch of page loads."""
    items = list(items)
    got = renderer.hit_many([(h, vp, [(x, y)]) for h, vp, x, y in items]) if items else []
    out: list[int | None] = []
    for (html, _, _, _), hits in zip(items, got):
        n = None
        if not isinstance(hits, Exception) and hits and hits[0] is not None:
            k, tag = hits[0]
            els = Doc.of(html).elements
            if 0 <= k < len(els) and els[k].name == tag:  # the browser and bs4 numbered alike
                n = k
        out.append(n)
    return out


def focused_number(html: str) -> int | None:
    """The element the capture marked as focused (`wm-focus`), if any."""
    for i, el in enumerate(Doc.of(html).elements):
        if FOCUS_CLASS in el.get("class", []):
            return i
    return None


def action_targets(renderer, queries: Sequence[Query]) -> list[int | None]:
    """For each query, the number of the element its action acts on (None where unknown): the
    browser's hit test at the action's point, else the focused element. One batch of page loads."""
    out: list[int | None] = [None] * len(queries)
    pointed = [
        i
        for i, q in enumerate(queries)
        if q.screen.html and q.action.type in POINTED and q.action.x is not None
    ]
    if renderer is not None and pointed:
        items = []
        for i in pointed:
            q = queries[i]
            s = q.screen.device_scale_factor
            items.append((q.screen.html, q.screen.viewport(), q.action.x / s, q.action.y / s))
        for i, n in zip(pointed, point_targets(renderer, items)):
            out[i] = n
    for i, q in enumerate(queries):
        if out[i] is None and q.screen.html and q.action.type in ("type", "key"):
            out[i] = focused_number(q.screen.html)
    return out


def _label(i: int, el) -> str:
    cls = ".".join(c for c in el.get("class", []) if not STATE_CLASS.match(c))
    return f"{i} {el.name}{'#' + el['id'] if el.get('id') else ''}{'.' + cls if cls else ''}"


def focus_header(html: str, n: int | None) -> str:
    """One line naming the target element: its number, opening tag and its ancestors' numbers."""
    if n is None:
        return "Action target: none found (no element under the action, or no focused element)."
    els = Doc.of(html).elements
    if not 0 <= n < len(els):
        return "Action target: none found."
    el = els[n]
    index = {id(e): i for i, e in enumerate(els)}
    attrs = "".join(
        f' {k}="{" ".join(v) if isinstance(v, list) else v}"' for k, v in el.attrs.items() if k != "style"
    )
    tag = f"<{el.name}{attrs}>"[:MAX_TAG_CHARS]
    up = []
    p = el.parent
    while p is not None and id(p) in index:
        up.append(_label(index[id(p)], p))
        p = p.parent
    text = own_text(el)[:60]
    return (
        f"Action target: n={n} {tag}"
        + (f" text {text!r}" if text else "")
        + (f"; inside {' < '.join(up)}" if up else "")
    )


def window(view: str, n: int | None, budget: int) -> str:
    """`budget` characters of a numbered view (edit.edit_view), starting a little before element
    n so that it and what follows it are shown; the start when n is None or not found."""
    if len(view) <= budget:
        return view
    at = view.find(f' n="{n}"') if n is not None else -1
    start = 0 if at < 0 else max(0, at - budget // 4)
    start = view.rfind("<", 0, start + 1) if start else 0
    start = max(start, 0)
    cut = view[start : start + budget]
    return ("<!-- ... -->" if start else "") + cut + "<!-- truncated -->"
