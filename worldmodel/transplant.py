"""Transplant an edit from one screen onto another: a world model with no weights that can beat copy.

The nearest recorded transition rarely has the same screen, but often the same kind of change:
a box checked, a word typed, a class moved to the tapped item. Its edit (worldmodel/edit.py)
names elements by *its* screen's numbers; this re-addresses each line onto the current screen:
the element the recorded action hit becomes the element the current action hits, others are
found by tag, id, classes and text (nearest in document order), stylesheet lines by their text
(a new rule only beside the line it followed there, so only between screens of one sheet),
and the recorded action's typed text becomes the current action's. The words of the element
the recorded action hit become the words of the one the current action hits (a tap on another
row of a list opens that row's page: its name, not the recorded row's), where the two
elements hold their words alike (the same number of text pieces under the same tags, at most
MAX_SWAPPED_PIECES). Where the recorded edit removed every element of a kind from one parent
(a list's rows, when the app opened another page), this screen's elements of that kind there go
too, however many more it holds. Lines that find no home are dropped; an edit with none left is
empty, which is copy.
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
MAX_SWAPPED_PIECES = 4  # a row or a button holds a few words; a whole list's are not one thing's


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
    if 0 <= anchors.get(n, -1) < len(dst_sigs):  # an anchor past its elements was made for other HTML
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
    pair = _Pair(src_html, dst_html, anchors, text_from, text_to)
    out = []
    physics = 0  # lines left to the browser (reaction_only): not the reaction, not counted
    lines = [line for line in text.splitlines() if line.strip()]
    removed: set[int] = set()  # the recorded screen's elements the edit removes
    for k, line in edit_lines(text):
        try:
            e = parse_line(line, k)
        except EditError:
            continue
        typed_into = pair.typed_into(e)
        args = list(e.args)
        if not typed_into:
            args = [pair.swapped(a) if isinstance(a, str) and not a.isdigit() else a for a in args]
        if e.number is None:
            continue
        if e.op in ("css-del", "css-ins"):
            out.extend(pair.css_lines(e.op, e.number, args))
            continue
        if e.op == "remove":
            removed.add(e.number)
        n = _home(e.number, pair.src, pair.dst_sigs, pair.anchors)
        if n is None:
            continue
        if reaction_only and _physics(replace(e, args=tuple(args)), pair.dst[n]):
            physics += 1
            continue
        moved = _element_line(e.op, n, args, pair.dst[n], text_to if typed_into else None)
        if moved is not None:
            out.append(moved)
    gone = {line for line in out if line.startswith("remove ")}
    out += [line for line in pair.every_one_removed(removed) if line not in gone]
    out = _applicable(out, dst_html)
    if stats is not None:
        stats.update(lines=len(lines) - physics, carried=len(out))
    return "\n".join(out)


class _Pair:
    """The recorded screen and the current one, read once: their elements, the current
    screen's element signatures, both stylesheets' lines, and the text swap."""

    def __init__(self, src_html: str, dst_html: str, anchors, text_from, text_to):
        self.da, self.db = da, db = Doc.of(src_html), Doc.of(dst_html)  # read only
        self.src, self.dst = da.elements, db.elements
        self.dst_sigs = [_sig(e) for e in self.dst]
        sheet_a, sheet_b = da.stylesheet, db.stylesheet
        self.lines_a = (sheet_a.string or "").split("\n") if sheet_a is not None else []
        self.lines_b = (sheet_b.string or "").split("\n") if sheet_b is not None else []
        self.anchors = dict(anchors or {})
        self.text_from, self.text_to = text_from, text_to
        self.swap = bool(text_from) and text_to is not None and text_from != text_to
        self.words = [
            w
            for a, b in self.anchors.items()
            if 0 <= a < len(self.src) and 0 <= b < len(self.dst)
            for w in _word_pairs(self.src[a], self.dst[b])
        ]

    def swapped(self, arg: str) -> str:
        """A text argument with the recorded action's typed text and the recorded element's
        words put as this action's and this element's."""
        if self.swap:
            arg = arg.replace(self.text_from, self.text_to)
        return _swap_words(arg, self.words) if self.words else arg

    def every_one_removed(self, removed: set[int]) -> list[str]:
        """`remove` lines for this screen's elements of a kind the recorded edit removed every
        one of (two or more children of one parent, alike in tag, id and classes: a list's rows
        when the app opened another page): this screen's list may hold more rows than that one."""
        kinds: dict[tuple, set[int]] = {}
        for n in removed:
            if 0 < n < len(self.src) and self.src[n].parent is not None:
                kinds.setdefault((self.da.number(self.src[n].parent), _sig(self.src[n])[:3]), set()).add(n)
        out = []
        for (parent, kind), ns in kinds.items():
            if parent is None or len(ns) < 2:
                continue
            children = self.src[parent].find_all(recursive=False)
            if {self.da.number(c) for c in children if _sig(c)[:3] == kind} != ns:
                continue  # some of the kind stayed: not the whole list
            home = _home(parent, self.src, self.dst_sigs, self.anchors)
            if home is None:
                continue
            out += [
                f"remove {self.db.number(c)}"
                for c in self.dst[home].find_all(recursive=False)
                if _sig(c)[:3] == kind and self.db.number(c) is not None
            ]
        return out

    def typed_into(self, e: EditOp) -> bool:
        """An `attr N value` line that is the recorded action's text typed after what the field
        held: on this screen the field gets this action's text after what it holds."""
        args, text_from = e.args, self.text_from
        if not (e.op == "attr" and len(args) == 2 and args[0] == "value" and text_from):
            return False
        if self.text_to is None:
            return False
        try:
            before = self.src[e.number].get("value", "") if e.number is not None else None
        except IndexError:
            before = None
        return before is not None and args[1] == before + text_from

    def css_lines(self, op: str, at: int, args: list) -> list[str]:
        """A stylesheet line re-addressed by its text onto this screen's sheet."""
        lines_a, lines_b = self.lines_a, self.lines_b
        if op == "css-del":
            count = int(args[0]) if args and str(args[0]).isdigit() else 1
            return [
                f"css-del {lines_b.index(rule)} 1" for rule in lines_a[at : at + count] if rule in lines_b
            ]
        if not args:
            return []
        rule = str(args[0])
        # A rule goes in only beside the line it went in beside there: a screen styled by
        # the same sheet. Another app's rule pasted into this app's sheet styles what this
        # app's author never wrote for (a dark theme's rule turned a whole page dark).
        if at < len(lines_a) and lines_a[at] in lines_b:
            where = lines_b.index(lines_a[at])
        elif at >= len(lines_a) and lines_a and lines_a[-1] in lines_b:
            where = lines_b.index(lines_a[-1]) + 1
        else:
            return []
        return [] if rule in lines_b else [f"css-ins {where} {quote(rule)}"]


def _pieces(el: Tag) -> list[tuple[str, str]]:
    """(parent tag, text) of each piece of text under `el`, in document order."""
    return [
        (t.parent.name, " ".join(t.split()))
        for t in el.find_all(string=True)
        if t.strip() and t.parent.name not in ("script", "style")
    ]


def _word_pairs(src: Tag, dst: Tag) -> list[tuple[str, str]]:
    """(recorded words, current words) of two elements that hold their words alike: the pieces
    that differ, paired in order; [] where they do not hold them alike."""
    a, b = _pieces(src), _pieces(dst)
    if not a or len(a) != len(b) or len(a) > MAX_SWAPPED_PIECES or [t for t, _ in a] != [t for t, _ in b]:
        return []
    return [(x, y) for (_, x), (_, y) in zip(a, b) if x != y]


def _swap_words(arg: str, words: list[tuple[str, str]]) -> str:
    """`arg` with each recorded piece of `words` put as the current one, in one pass (a swap is
    not swapped again): the whole argument, a word-bounded run of two or more characters, or a
    one-character piece that is a whole text node of markup (an avatar's initial)."""
    whole = dict(words)
    if arg.strip() in whole:
        return arg.replace(arg.strip(), whole[arg.strip()])
    longer = sorted((x for x in whole if len(x) > 1), key=len, reverse=True)
    single = [x for x in whole if len(x) == 1]
    alts = []
    if longer:
        alts.append(rf"(?<!\w)(?P<run>{'|'.join(map(re.escape, longer))})(?!\w)")
    if single:
        alts.append(rf"(?P<open>>\s*)(?P<one>{'|'.join(map(re.escape, single))})(?P<close>\s*<)")

    def put(m: re.Match) -> str:
        if m.groupdict().get("run"):
            return whole[m.group("run")]
        return m.group("open") + whole[m.group("one")] + m.group("close")

    return re.sub("|".join(alts), put, arg)


def _element_line(op: str, n: int, args: list, el: Tag, typed: str | None) -> str | None:
    """One element line written for element `n` of this screen (`el`); `typed`: the current
    action's text, appended to what the field holds (Pair.typed_into)."""
    if op == "remove":
        return f"remove {n}"
    if op == "class" and len(args) > 0:
        return f"class {n} {' '.join(str(c) for c in args)}"
    if op == "unattr" and len(args) == 1:
        return f"unattr {n} {args[0]}"
    if op == "attr" and len(args) == 2:
        value = el.get("value", "") + typed if typed is not None else str(args[1])
        return f"attr {n} {args[0]} {quote(value)}"
    if len(args) == 1 and isinstance(args[0], str):
        return f"{op} {n} {quote(args[0])}"
    return None


def _applicable(out: list[str], dst_html: str) -> list[str]:
    """`out` less the lines the current screen cannot take (e.g. two that found the same home),
    dropped one at a time; [] when it still fails after MAX_REPAIRS."""
    out = list(out)
    for _ in range(MAX_REPAIRS):
        try:
            apply(dst_html, "\n".join(out))
            return out
        except EditError as e:
            del out[e.line_no - 1]
        except Exception:  # noqa: BLE001 - a parser corner case: nothing carries over
            break
    return []
