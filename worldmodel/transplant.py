"""Transplant an edit from one screen onto another: a world model with no weights that can beat copy.

The nearest recorded transition rarely has the same screen, but often the same kind of change:
a box checked, a word typed, a class moved to the tapped item. Its edit (worldmodel/edit.py)
names elements by *its* screen's numbers; this re-addresses each line onto the current screen:
the element the recorded action hit becomes the element the current action hits, others are
found by tag, id, classes and text (nearest in document order), stylesheet lines by their text
(a new rule only beside the line it followed there, so only between screens of one sheet),
and the recorded action's typed text becomes the current action's. Lines that find no home are
dropped; an edit with none left is empty, which is copy.
"""

from __future__ import annotations

import re
from dataclasses import replace

from bs4 import Tag

from render.capture import RING_ATTR, STATE_CLASS

from .doc import Doc
from .edit import EditError, EditOp, apply, edit_lines, parse_line, quote
from .focus import own_text

MAX_REPAIRS = 8


def _sig(el: Tag) -> tuple:
    cls = tuple(c for c in el.get("class", []) if not STATE_CLASS.match(c))
    return (el.name, el.get("id", ""), cls, own_text(el)[:60])


def _physics(e: EditOp, el: Tag) -> bool:
    """A line that only repeats what the browser does to the element an action touches."""
    if _state_only(e, el):
        return True
    return (
        e.op in ("attr", "unattr")
        and len(e.args) > 0
        and str(e.args[0]) in ("value", "checked", "selected", "style")
    )


_RING = re.compile(r"^outline(-[a-z]+)?$")


def _unringed(style: str) -> list[str]:
    """A style attribute's declarations other than the focus ring's (outline*)."""
    decls = [d.strip() for d in str(style or "").split(";") if d.strip()]
    return sorted(d for d in decls if not _RING.match(d.partition(":")[0].strip().lower()))


def _state_only(e: EditOp, el: Tag) -> bool:
    """A line that only moves the browser's own state markers on `el` (the capture's wm-* hover,
    focus and active classes, its focus ring), which no app's script writes."""
    args = e.args
    if e.op == "class":
        return len(args) > 0 and all(STATE_CLASS.match(str(c)[1:]) for c in args)
    if e.op not in ("attr", "unattr") or len(args) < 1:
        return False
    name, value = str(args[0]), str(args[1]) if len(args) > 1 else ""
    if name == RING_ATTR:
        return True
    if name == "class":
        keep = lambda v: sorted(c for c in str(v).split() if not STATE_CLASS.match(c))  # noqa: E731
        return keep(value) == keep(" ".join(el.get("class", [])))
    if name == "style":
        return _unringed(value) == _unringed(el.get("style", ""))
    return False


def reaction(edit: str, html: str) -> str:
    """`edit` (of `html`) without its lines that only move the browser's state markers: what is
    left of it once the browser (the sim) has carried the action out is the app's reaction.
    Where the sim's run and the recording's left hover or focus on different elements, those
    lines are the two runs' difference, not anything the app did."""
    if not edit or not html:
        return edit
    els = Doc.of(html).elements
    out = []
    for k, line in enumerate(edit.splitlines(), 1):
        try:
            e = parse_line(line, k)
        except EditError:
            e = None
        if e is not None and e.op in ("class", "attr", "unattr"):
            n = -1 if e.number is None else e.number
            if 0 <= n < len(els) and _state_only(e, els[n]):
                continue
        out.append(line)
    return "\n".join(out)


def _home(n: int, src: list[Tag], dst_sigs: list[tuple], anchors: dict[int, int]) -> int | None:
    """Where element n of the recorded screen lives on this one (`dst_sigs`: its elements' _sig)."""
    if n in anchors:
        return anchors[n]
    if not 0 <= n < len(src):
        return None
    if n == 0:
        return 0
    s = _sig(src[n])
    for match in (
        lambda e: e == s,
        lambda e: e[:3] == s[:3],
        lambda e: s[3] and (e[0], e[3]) == (s[0], s[3]),
    ):
        found = [j for j, e in enumerate(dst_sigs) if j and match(e)]
        if found:
            where = n / len(src)
            return min(found, key=lambda j: abs(j / len(dst_sigs) - where))
    return None


def transplant(
    edit: str,
    src_html: str,
    dst_html: str,
    anchors: dict[int, int] | None = None,
    text_from: str | None = None,
    text_to: str | None = None,
    reaction_only: bool = False,
    stats: dict | None = None,
) -> str:
    """`edit` (written for `src_html`) re-addressed onto `dst_html`; "" when nothing carries over.

    `reaction_only`: the action was already carried out on `dst_html` (by the sim), so what the
    browser itself does (field values, checked and selected states, hover/focus classes) is not
    carried over again, only the app's reaction. `stats`, when given, receives "lines" (the
    edit's lines that were to carry over: all but those left to the browser) and "carried"
    (those that did): their ratio is how well the two screens agree."""
    if stats is not None:
        stats.update(lines=0, carried=0)
    text = (edit or "").strip()
    if not text or text.startswith("<") or text.startswith("screen "):
        return ""  # a whole other screen is not a change to this one
    da, db = Doc.of(src_html), Doc.of(dst_html)  # read only
    src, dst = da.elements, db.elements
    dst_sigs = [_sig(e) for e in dst]
    sheet_a, sheet_b = da.stylesheet, db.stylesheet
    lines_a = (sheet_a.string or "").split("\n") if sheet_a is not None else []
    lines_b = (sheet_b.string or "").split("\n") if sheet_b is not None else []
    anchors = dict(anchors or {})
    swap = bool(text_from) and text_to is not None and text_from != text_to
    out = []
    physics = 0  # lines left to the browser (reaction_only): not the reaction, not counted
    lines = [line for line in text.splitlines() if line.strip()]
    for k, line in edit_lines(text):
        try:
            e = parse_line(line, k)
        except EditError:
            continue
        op, num, args = e.op, e.number, list(e.args)
        typed_into = False
        if op == "attr" and len(args) == 2 and args[0] == "value" and text_from and text_to is not None:
            try:
                before = src[num].get("value", "") if num is not None else None
            except IndexError:
                before = None
            # typing appends: this screen's field gets this action's text after what it holds
            typed_into = before is not None and args[1] == before + text_from
        if swap and not typed_into:
            args = [
                a.replace(text_from, text_to) if isinstance(a, str) and not a.isdigit() else a for a in args
            ]
        if num is None:
            continue
        if op == "css-del":
            at, count = num, int(args[0]) if args and str(args[0]).isdigit() else 1
            for rule in lines_a[at : at + count]:
                if rule in lines_b:
                    out.append(f"css-del {lines_b.index(rule)} 1")
            continue
        if op == "css-ins":
            if not args:
                continue
            at, rule = num, str(args[0])
            # A rule goes in only beside the line it went in beside there: a screen styled by
            # the same sheet. Another app's rule pasted into this app's sheet styles what this
            # app's author never wrote for (a dark theme's rule turned a whole page dark).
            if at < len(lines_a) and lines_a[at] in lines_b:
                where = lines_b.index(lines_a[at])
            elif at >= len(lines_a) and lines_a and lines_a[-1] in lines_b:
                where = lines_b.index(lines_a[-1]) + 1
            else:
                continue
            if rule not in lines_b:
                out.append(f"css-ins {where} {quote(rule)}")
            continue
        n = _home(num, src, dst_sigs, anchors)
        if n is None:
            continue
        if reaction_only and _physics(replace(e, args=tuple(args)), dst[n]):
            physics += 1
            continue
        if op == "remove":
            out.append(f"remove {n}")
        elif op == "class" and len(args) > 0:
            out.append(f"class {n} {' '.join(str(c) for c in args)}")
        elif op == "unattr" and len(args) == 1:
            out.append(f"unattr {n} {args[0]}")
        elif op == "attr" and len(args) == 2:
            value = dst[n].get("value", "") + text_to if typed_into else str(args[1])
            out.append(f"attr {n} {args[0]} {quote(value)}")
        elif len(args) == 1 and isinstance(args[0], str):
            out.append(f"{op} {n} {quote(args[0])}")
    # drop lines the current screen cannot take (e.g. two that found the same home), one at a time
    for _ in range(MAX_REPAIRS):
        try:
            apply(dst_html, "\n".join(out))
            if stats is not None:
                stats.update(lines=len(lines) - physics, carried=len(out))
            return "\n".join(out)
        except EditError as e:
            del out[e.line_no - 1]
        except Exception:  # noqa: BLE001 - a parser corner case: nothing carries over
            break
    if stats is not None:
        stats.update(lines=len(lines) - physics, carried=0)
    return ""
