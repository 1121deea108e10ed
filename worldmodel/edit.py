"""The edit language: what a world model writes when most of the screen stays as it was.

A typed word, a checked box, a new row: most actions change a few nodes of a screen whose HTML
runs to thousands of tokens. An edit says only what changes, one operation per line:

    text N "new text"              set element N's text (its children become that text; not the body's)
    attr N NAME "value"            set an attribute (value, checked, class, style, ...)
    unattr N NAME                  remove an attribute
    class N +NAME -NAME ...        add and remove classes (the others stay)
    replace N "<html>"             replace element N (outer HTML)
    remove N
    before N "<html>" | after N "<html>"       insert siblings
    prepend N "<html>" | append N "<html>"     insert inside, first or last
    css-del L COUNT                delete COUNT lines of the page stylesheet from line L
    css-ins L "rule"               insert a stylesheet line before line L
    screen "<!DOCTYPE html>..."    replace the whole screen

N numbers the current screen's body elements in document order (the body is 0); `annotate()`
shows a model those numbers; after `replace N`, N means the replacement. Numbers and stylesheet lines always mean the *current* screen, so
the lines of one edit never renumber each other. Quoted arguments are JSON strings. An edit that
is itself an HTML document (starts with `<`) replaces the screen, so a Code2World document is a
valid edit, and an empty edit means nothing changes.

`diff(current, next)` writes the edit (deterministic; falls back to `screen` when that is
shorter) and `apply(current, edit)` carries it out; a malformed edit raises `EditError` naming
its line (`line_no`). `parse_edit(text)` is the one parser of the syntax: typed `EditOp`s (op,
number, args, line_no) that apply, transplant and the reaction filter all read. Screens are read
through the one parsed form, worldmodel/doc.py's `Doc`.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass

from bs4 import BeautifulSoup, NavigableString, Tag

from .doc import Doc

# the operations addressed by an element number (the rest: stylesheet lines, the whole screen)
ELEMENT_OPS = ("text", "attr", "unattr", "class", "replace", "remove", "before", "after", "prepend", "append")
OPS = ELEMENT_OPS + ("css-del", "css-ins", "screen")
_SKIP_TEXT = re.compile(r"^\s*$")
_DECODER = json.JSONDecoder()


class EditError(ValueError):
    """An edit that cannot be applied; the message names the line, `line_no` carries it as data."""

    def __init__(self, line_no: int, line: str, why: str):
        super().__init__(f"edit line {line_no} ({line[:60]!r}): {why}")
        self.line_no = line_no
        self.line = line
        self.why = why


def annotate(html: str) -> str:
    """The screen with each body element's number as an `n` attribute: what a model addresses."""
    doc = Doc(html)
    for i, el in enumerate(doc.elements):
        el["n"] = str(i)
    return str(doc.soup)


def edit_view(html: str) -> str:
    """What a model editing `html` is shown: the numbered body first (what most edits touch,
    kept when the prompt is cut short), then the stylesheet's lines with their numbers."""
    doc = Doc(html)
    soup = doc.soup
    for i, el in enumerate(doc.elements):
        el["n"] = str(i)
    body = str(soup.body) if soup.body is not None else str(soup)
    sheet = doc.stylesheet
    if sheet is None or not sheet.string:
        return body
    lines = "\n".join(f"{i}: {ln}" for i, ln in enumerate(sheet.string.split("\n")))
    return f"{body}\nStylesheet lines:\n{lines}"


# ---- parsing ----------------------------------------------------------------------------
class Quoted(str):
    """An argument written as a JSON string: a value (text, HTML, a rule), as against a bare word
    (a number, a name, a class change). Values must be quoted, so `text 8 +wm-focus`, a model
    mixing up two operations, is an error rather than the text "+wm-focus"."""


@dataclass(frozen=True)
class EditOp:
    """One line of an edit, parsed: `op` (one of OPS); `number`, the element number (element
    operations) or stylesheet line (css-del, css-ins) written first, None where there is none or it
    is not an integer (applying it then names the line); `args`, the arguments after it (every
    argument when `number` is None), quoted ones as `Quoted`; `line_no` (1-based) and `line`."""

    op: str
    number: int | None
    args: tuple
    line_no: int
    line: str


def parse_line(line: str, line_no: int = 1) -> EditOp:
    """One edit line as an EditOp; EditError (naming `line_no`) for an unknown operation, a bad
    quoted string or an empty line. Whether it applies to a screen is apply's to say."""
    line = line.strip()
    if not line:
        raise EditError(line_no, line, "empty line")
    op, _, rest = line.partition(" ")
    if op not in OPS:
        raise EditError(line_no, line, f"unknown operation {op!r} (one of {', '.join(OPS)})")
    args = _args(rest, line_no, line)
    number = None
    if op != "screen" and args:
        try:
            number = int(args[0])
        except ValueError:
            pass
    return EditOp(op, number, tuple(args[1:] if number is not None else args), line_no, line)


def edit_lines(edit: str) -> list[tuple[int, str]]:
    """The (line number, line) pairs of an edit that hold something: what its line numbers count."""
    return [(k, ln.strip()) for k, ln in enumerate((edit or "").strip().splitlines(), 1) if ln.strip()]


def parse_edit(edit: str) -> list[EditOp]:
    """The edit's lines as EditOps; EditError on the first line that does not parse. A whole
    document (an edit starting with `<`) is one `screen` operation; an empty edit is no operation."""
    text = (edit or "").strip()
    if text.startswith("<"):
        return [EditOp("screen", None, (Quoted(text),), 1, text[:200])]
    return [parse_line(line, k) for k, line in edit_lines(text)]


def quote(s: str) -> str:
    """A value as an edit writes it: a JSON string."""
    return json.dumps(s, ensure_ascii=False)


def _args(rest: str, line_no: int, line: str) -> list:
    out, i = [], 0
    while i < len(rest):
        if rest[i].isspace():
            i += 1
            continue
        if rest[i] == '"':
            try:
                val, end = _DECODER.raw_decode(rest, i)
            except json.JSONDecodeError as e:
                raise EditError(line_no, line, f"bad quoted string ({e.msg})") from None
            out.append(Quoted(val) if isinstance(val, str) else val)
            i = end
        else:
            m = re.compile(r"\S+").match(rest, i)
            out.append(m.group(0))
            i = m.end()
    return out


def _attached(el: Tag, soup: BeautifulSoup) -> bool:
    while el is not None:
        if el is soup:
            return True
        el = el.parent
    return False


def _fragment(html: str) -> list:
    return list(BeautifulSoup(html, "html.parser").contents)


def apply(current: str, edit: str) -> str:
    """`current` with `edit` carried out; raises EditError on the first line that cannot be."""
    return _run(current, edit, strict=True)[0]


def apply_lenient(current: str, edit: str) -> tuple[str, int, int]:
    """(`current` with every line of `edit` that applies carried out, lines applied, lines): the
    partial credit a reward can give an edit that is not yet right."""
    return _run(current, edit, strict=False)


def _run(current: str, edit: str, strict: bool) -> tuple[str, int, int]:
    text = (edit or "").strip()
    if not text:
        return current, 0, 0
    if text.startswith("<"):
        return text, 1, 1
    state = _State(current)
    lines = edit_lines(text)
    done = 0
    for line_no, line in lines:
        try:
            doc = _line(state, parse_line(line, line_no))
        except EditError:
            if strict:
                raise
            continue
        done += 1
        if doc is not None:  # the rest of the edit is moot once the screen is replaced
            return doc, len(lines), len(lines)
    return state.result(), done, len(lines)


class _State:
    """The document being edited, and the current screen's numbering it is addressed by."""

    def __init__(self, current: str):
        doc = Doc(current)  # a fresh one: the edit changes it
        self.soup = doc.soup
        self.els = doc.elements
        self.sheet = doc.stylesheet
        self.sheet_lines = doc.sheet_lines
        self.css_del: set[int] = set()
        self.css_ins: dict[int, list[str]] = {}

    def result(self) -> str:
        sheet, sheet_lines, css_del, css_ins = self.sheet, self.sheet_lines, self.css_del, self.css_ins
        if sheet_lines is not None and (css_del or css_ins):
            out = []
            for i, ln in enumerate(sheet_lines):
                out.extend(css_ins.get(i, []))
                if i not in css_del:
                    out.append(ln)
            out.extend(css_ins.get(len(sheet_lines), []))
            sheet.string = "\n".join(out)
        return str(self.soup)


def _line(state: _State, e: EditOp) -> str | None:
    """Carry out one line; a whole new document when the line is `screen`."""
    op, line_no, line, args = e.op, e.line_no, e.line, e.args
    if op == "screen":
        if len(args) != 1 or not isinstance(args[0], Quoted):
            raise EditError(line_no, line, 'screen takes one quoted document: screen "<html>..."')
        return args[0]
    if op.startswith("css-"):
        _css_line(state, e)
        return None
    el, n = _element(state, e)
    if op == "class":
        _classes(el, list(args), line_no, line)
        return None
    want = {"text": 1, "attr": 2, "unattr": 1, "remove": 0}.get(op, 1)
    if len(args) != want:
        raise EditError(line_no, line, f"{op} takes {want} argument(s) after the element number")
    value = args[-1] if args else None
    if op in ("text", "attr") and not isinstance(value, Quoted):
        raise EditError(
            line_no, line, f'{op} takes a quoted value: {op} {n} {"NAME " if op == "attr" else ""}"..."'
        )
    if op in ("text", "attr", "unattr", "remove"):
        _change(state, el, e)
    else:
        _insert(state, el, n, e)
    return None


def _css_line(state: _State, e: EditOp) -> None:
    """`css-del N [COUNT]` or `css-ins N "rule"`, addressed by the stylesheet's lines."""
    op, line_no, line, args, sheet_lines = e.op, e.line_no, e.line, e.args, state.sheet_lines
    if sheet_lines is None:
        raise EditError(line_no, line, "the screen has no stylesheet to edit")
    at = e.number
    if at is None:
        raise EditError(line_no, line, f"{op} needs a line number")
    if not 0 <= at <= len(sheet_lines):
        raise EditError(line_no, line, f"stylesheet line {at} is out of range (0..{len(sheet_lines)})")
    if op == "css-del":
        count = int(args[0]) if len(args) > 0 and str(args[0]).isdigit() else 1
        state.css_del.update(range(at, min(at + count, len(sheet_lines))))
    else:
        if len(args) != 1 or not isinstance(args[0], Quoted):
            raise EditError(line_no, line, 'css-ins takes a line and a quoted rule: css-ins 3 "a{color:red}"')
        state.css_ins.setdefault(at, []).append(args[0])


def _element(state: _State, e: EditOp) -> tuple[Tag, int]:
    """The element a line addresses by its number, still in the document."""
    n = e.number
    if n is None:
        raise EditError(e.line_no, e.line, f"{e.op} needs an element number first")
    if not 0 <= n < len(state.els):
        raise EditError(e.line_no, e.line, f"no element {n} (the screen has 0..{len(state.els) - 1})")
    el = state.els[n]
    if not _attached(el, state.soup):
        raise EditError(e.line_no, e.line, f"element {n} was removed or replaced by an earlier line")
    return el, n


def _change(state: _State, el: Tag, e: EditOp) -> None:
    """`text`, `attr`, `unattr` or `remove` on one element."""
    op, args = e.op, e.args
    if op == "text":
        if el is state.soup.body:
            raise EditError(e.line_no, e.line, "text would wipe the whole body (write a screen instead)")
        el.clear()
        el.append(NavigableString(str(args[0])))
    elif op == "attr":
        el[str(args[0])] = str(args[1])
    elif op == "unattr":
        if str(args[0]) in el.attrs:
            del el[str(args[0])]
    else:
        if el is state.soup.body:
            raise EditError(e.line_no, e.line, "the body cannot be removed (write a screen instead)")
        el.extract()


def _insert(state: _State, el: Tag, n: int, e: EditOp) -> None:
    """`replace`, `before`, `after`, `prepend` or `append` of a quoted HTML fragment."""
    op, line_no, line, args, body = e.op, e.line_no, e.line, e.args, state.soup.body
    if not isinstance(args[0], Quoted):
        raise EditError(line_no, line, f"{op} takes quoted HTML")
    nodes = _fragment(args[0])
    if op == "replace":
        if el is body:
            raise EditError(line_no, line, "replace the body by writing a screen instead")
        for node in nodes:
            el.insert_before(node)
        el.extract()
        if nodes:  # N now means what stands in its place (an `after N` may follow)
            state.els[n] = nodes[-1]
    elif op == "before" or op == "after":
        if el is body:
            raise EditError(line_no, line, f"nothing can go {op} the body")
        if op == "before":
            for node in nodes:
                el.insert_before(node)
        else:
            for node in reversed(nodes):
                el.insert_after(node)
    elif op == "prepend":
        for k, node in enumerate(nodes):
            el.insert(k, node)
    else:
        for node in nodes:
            el.append(node)


def _classes(el: Tag, changes: list, line_no: int, line: str) -> None:
    """`class N +a -b`: the element's other classes stay, in their order; added ones go last."""
    if not changes:
        raise EditError(line_no, line, "class takes +NAME or -NAME changes after the element number")
    have = list(el.get("class", []))
    for c in changes:
        c = str(c)
        if len(c) < 2 or c[0] not in "+-" or any(ch.isspace() or ch in "\"'" for ch in c):
            raise EditError(line_no, line, f"class change {c!r} is not +NAME or -NAME")
        if c[0] == "+" and c[1:] not in have:
            have.append(c[1:])
        elif c[0] == "-" and c[1:] in have:
            have.remove(c[1:])
    if have:
        el["class"] = have
    elif "class" in el.attrs:
        del el["class"]


def extract_edit(completion: str) -> str:
    """The edit inside a model's completion: code fences and a leading "edit:" label removed."""
    text = (completion or "").strip()
    m = re.search(r"```[a-zA-Z]*\n(.*?)```", text, re.S)
    if m:
        text = m.group(1).strip()
    return re.sub(r"^(edit|Edit|EDIT)\s*:\s*", "", text)


def try_apply(current: str, edit: str) -> tuple[str | None, str | None]:
    """(html, None) or (None, the error): for rewards and evaluation, which never raise."""
    try:
        return apply(current, edit), None
    except EditError as e:
        return None, str(e)
    except Exception as e:  # a parser corner case is still a malformed edit, not a crash
        return None, f"edit could not be applied: {type(e).__name__}: {e}"


# ---- diffing ----------------------------------------------------------------------------
def _kids(el: Tag) -> list:
    return [
        c
        for c in el.children
        if isinstance(c, Tag) or (isinstance(c, NavigableString) and not _SKIP_TEXT.match(c))
    ]


def _sig(node) -> str:
    if isinstance(node, Tag):
        return f"{node.name}#{node.get('id', '')}.{' '.join(node.get('class', []))}"
    return "#text"


def _sig_text(node) -> str:
    """Matches an element by tag, id and what it says: a row whose class changed (selected,
    hovered) is still the same row, where `_sig` would see one removed and another inserted."""
    if isinstance(node, Tag):
        return f"{node.name}#{node.get('id', '')}:{' '.join(node.get_text(' ').split())[:80]}"
    return "#text"


# How children of the two screens are paired up; diff tries each and keeps the shortest edit.
_KEYS = (_sig, _sig_text)


def _attrs(el: Tag) -> dict[str, str]:
    return {k: " ".join(v) if isinstance(v, list) else str(v) for k, v in el.attrs.items()}


def _diff_el(a: Tag, b: Tag, num: dict[int, int], out: list[str], key=_sig) -> None:
    n = num[id(a)]
    aa, ba = _attrs(a), _attrs(b)
    for k in sorted(set(aa) | set(ba)):
        if k == "class" and k in ba:
            line = _class_line(n, aa.get(k, ""), ba[k])
            if line:
                out.append(line)
        elif k not in ba:
            out.append(f"unattr {n} {k}")
        elif aa.get(k) != ba[k]:
            out.append(f"attr {n} {k} {quote(ba[k])}")
    ka, kb = _kids(a), _kids(b)
    if [key(x) for x in ka] == [key(x) for x in kb]:
        texts_differ = any(
            not isinstance(x, Tag) and str(x).strip() != str(y).strip() for x, y in zip(ka, kb)
        )
        if texts_differ:
            if len(ka) == 1 and not isinstance(ka[0], Tag):
                out.append(f"text {n} {quote(str(kb[0]))}")
                return
            if a.name == "body":
                raise _Whole()
            out.append(f"replace {n} {quote(str(b))}")
            return
        for x, y in zip(ka, kb):
            if isinstance(x, Tag):
                _diff_el(x, y, num, out, key)
        return
    if any(not isinstance(x, Tag) for x in ka + kb):
        # mixed text and elements changed shape: the element is rewritten whole
        if a.name == "body":
            raise _Whole()
        out.append(f"replace {n} {quote(str(b))}")
        return
    sm = difflib.SequenceMatcher(a=[key(x) for x in ka], b=[key(x) for x in kb], autojunk=False)
    last_kept = None  # the current screen's last child still standing: where inserts go after
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            for x, y in zip(ka[i1:i2], kb[j1:j2]):
                if x.name == y.name:
                    _diff_el(x, y, num, out, key)
                    last_kept = x
                else:
                    out.append(f"replace {num[id(x)]} {quote(str(y))}")
            continue
        for x in ka[i1:i2]:
            out.append(f"remove {num[id(x)]}")
        if j2 > j1:
            html = "".join(str(y) for y in kb[j1:j2])
            if last_kept is not None:
                out.append(f"after {num[id(last_kept)]} {quote(html)}")
            else:
                out.append(f"prepend {n} {quote(html)}")


def _class_line(n: int, before: str, after: str) -> str | None:
    """The shorter of `class N +a -b` and `attr N class "..."` (the class list as a whole, which
    also keeps a changed order exactly), or None when the list is the same."""
    a, b = before.split(), after.split()
    if a == b:
        return None
    changes = [f"-{c}" for c in a if c not in b] + [f"+{c}" for c in b if c not in a]
    kept = [c for c in a if c in b]
    whole = f"attr {n} class {quote(after)}"
    if kept != [c for c in b if c in a]:  # the kept classes changed order
        return whole
    short = f"class {n} {' '.join(changes)}"
    return short if len(short) <= len(whole) and (kept + [c for c in b if c not in a]) == b else whole


class _Whole(Exception):
    """The change is best written as the whole screen."""


def _diff_css(a: Tag | None, b: Tag | None, out: list[str]) -> None:
    la = (a.string or "").split("\n") if a is not None else None
    lb = (b.string or "").split("\n") if b is not None else None
    if la == lb:
        return
    if la is None or lb is None:
        raise _Whole()
    sm = difflib.SequenceMatcher(a=la, b=lb, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            out.append(f"css-del {i1} {i2 - i1}")
        for line in lb[j1:j2]:
            out.append(f"css-ins {i2 if tag == 'replace' else i1} {quote(line)}")


def diff(current: str, nxt: str) -> str:
    """The edit that turns `current` into `nxt` (empty when they are the same document)."""
    if current == nxt:
        return ""
    whole = f"screen {quote(nxt)}"
    try:
        da, db = Doc.of(current), Doc.of(nxt)  # read only
        sa, sb = da.soup, db.soup
        if sa.body is None or sb.body is None:
            return whole
        head_a = [
            _sig(x) + str(_attrs(x)) for x in (sa.head.find_all(True) if sa.head else []) if x.name != "style"
        ]
        head_b = [
            _sig(x) + str(_attrs(x)) for x in (sb.head.find_all(True) if sb.head else []) if x.name != "style"
        ]
        if head_a != head_b or (sa.html and sb.html and _attrs(sa.html) != _attrs(sb.html)):
            return whole
        css: list[str] = []
        _diff_css(da.stylesheet, db.stylesheet, css)
        num = {id(el): i for i, el in enumerate(da.elements)}
    except (_Whole, RecursionError):
        return whole
    best = whole
    for key in _KEYS:
        out = list(css)
        try:
            _diff_el(sa.body, sb.body, num, out, key)
        except (_Whole, RecursionError):
            continue
        edit = "\n".join(out)
        if len(edit) < len(best):
            best = edit
    return best
