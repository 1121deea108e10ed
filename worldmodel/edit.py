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
its line.
"""

from __future__ import annotations

import difflib
import json
import re

from bs4 import BeautifulSoup, NavigableString, Tag

# the operations addressed by an element number (the rest: stylesheet lines, the whole screen)
ELEMENT_OPS = ("text", "attr", "unattr", "class", "replace", "remove", "before", "after", "prepend", "append")
OPS = ELEMENT_OPS + ("css-del", "css-ins", "screen")
_SKIP_TEXT = re.compile(r"^\s*$")
_DECODER = json.JSONDecoder()


class EditError(ValueError):
    """An edit that cannot be applied; the message names the line."""

    def __init__(self, line_no: int, line: str, why: str):
        super().__init__(f"edit line {line_no} ({line[:60]!r}): {why}")
        self.line_no = line_no


def _soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def _numbered(soup: BeautifulSoup) -> list[Tag]:
    body = soup.body
    if body is None:
        return []
    return [body, *body.find_all(True)]


def _stylesheet(soup: BeautifulSoup) -> Tag | None:
    return soup.head.find("style") if soup.head is not None else None


def annotate(html: str) -> str:
    """The screen with each body element's number as an `n` attribute: what a model addresses."""
    soup = _soup(html)
    for i, el in enumerate(_numbered(soup)):
        el["n"] = str(i)
    return str(soup)


def edit_view(html: str) -> str:
    """What a model editing `html` is shown: the numbered body first (what most edits touch,
    kept when the prompt is cut short), then the stylesheet's lines with their numbers."""
    soup = _soup(html)
    for i, el in enumerate(_numbered(soup)):
        el["n"] = str(i)
    body = str(soup.body) if soup.body is not None else str(soup)
    sheet = _stylesheet(soup)
    if sheet is None or not sheet.string:
        return body
    lines = "\n".join(f"{i}: {ln}" for i, ln in enumerate(sheet.string.split("\n")))
    return f"{body}\nStylesheet lines:\n{lines}"


# ---- applying ---------------------------------------------------------------------------
class _Quoted(str):
    """An argument written as a JSON string: a value (text, HTML, a rule), as against a bare word
    (a number, a name, a class change). Values must be quoted, so `text 8 +wm-focus`, a model
    mixing up two operations, is an error rather than the text "+wm-focus"."""


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
            out.append(_Quoted(val) if isinstance(val, str) else val)
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
    return list(_soup(html).contents)


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
    lines = [(k, ln.strip()) for k, ln in enumerate(text.splitlines(), 1) if ln.strip()]
    done = 0
    for line_no, line in lines:
        try:
            doc = _line(state, line_no, line)
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
        self.soup = _soup(current)
        self.els = _numbered(self.soup)
        self.sheet = _stylesheet(self.soup)
        s = self.sheet
        self.sheet_lines = s.string.split("\n") if s is not None and s.string is not None else None
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


def _line(state: _State, line_no: int, line: str) -> str | None:
    """Carry out one line; a whole new document when the line is `screen`."""
    soup, els, sheet_lines = state.soup, state.els, state.sheet_lines
    css_del, css_ins = state.css_del, state.css_ins
    line = line.strip()
    if not line:
        return None
    op, _, rest = line.partition(" ")
    if op not in OPS:
        raise EditError(line_no, line, f"unknown operation {op!r} (one of {', '.join(OPS)})")
    args = _args(rest, line_no, line)
    if op == "screen":
        if len(args) != 1 or not isinstance(args[0], _Quoted):
            raise EditError(line_no, line, 'screen takes one quoted document: screen "<html>..."')
        return args[0]
    if op.startswith("css-"):
        if sheet_lines is None:
            raise EditError(line_no, line, "the screen has no stylesheet to edit")
        try:
            at = int(args[0])
        except (IndexError, ValueError):
            raise EditError(line_no, line, f"{op} needs a line number") from None
        if not 0 <= at <= len(sheet_lines):
            raise EditError(line_no, line, f"stylesheet line {at} is out of range (0..{len(sheet_lines)})")
        if op == "css-del":
            count = int(args[1]) if len(args) > 1 and str(args[1]).isdigit() else 1
            css_del.update(range(at, min(at + count, len(sheet_lines))))
        else:
            if len(args) != 2 or not isinstance(args[1], _Quoted):
                raise EditError(
                    line_no, line, 'css-ins takes a line and a quoted rule: css-ins 3 "a{color:red}"'
                )
            css_ins.setdefault(at, []).append(args[1])
        return None
    try:
        n = int(args[0])
    except (IndexError, ValueError):
        raise EditError(line_no, line, f"{op} needs an element number first") from None
    if not 0 <= n < len(els):
        raise EditError(line_no, line, f"no element {n} (the screen has 0..{len(els) - 1})")
    el = els[n]
    if not _attached(el, soup):
        raise EditError(line_no, line, f"element {n} was removed or replaced by an earlier line")
    if op == "class":
        _classes(el, args[1:], line_no, line)
        return None
    want = {"text": 2, "attr": 3, "unattr": 2, "remove": 1}.get(op, 2)
    if len(args) != want:
        raise EditError(line_no, line, f"{op} takes {want - 1} argument(s) after the element number")
    value = args[-1]
    if op in ("text", "attr") and not isinstance(value, _Quoted):
        raise EditError(
            line_no, line, f'{op} takes a quoted value: {op} {n} {"NAME " if op == "attr" else ""}"..."'
        )
    if op == "text":
        if el is soup.body:
            raise EditError(line_no, line, "text would wipe the whole body (write a screen instead)")
        el.clear()
        el.append(NavigableString(str(args[1])))
    elif op == "attr":
        el[str(args[1])] = str(args[2])
    elif op == "unattr":
        if str(args[1]) in el.attrs:
            del el[str(args[1])]
    elif op == "remove":
        if el is soup.body:
            raise EditError(line_no, line, "the body cannot be removed (write a screen instead)")
        el.extract()
    else:
        if not isinstance(args[1], _Quoted):
            raise EditError(line_no, line, f"{op} takes quoted HTML")
        nodes = _fragment(args[1])
        if op == "replace":
            if el is soup.body:
                raise EditError(line_no, line, "replace the body by writing a screen instead")
            for node in nodes:
                el.insert_before(node)
            el.extract()
            if nodes:  # N now means what stands in its place (an `after N` may follow)
                els[n] = nodes[-1]
        elif op == "before" or op == "after":
            if el is soup.body:
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
    return None


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
def _q(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


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
            out.append(f"attr {n} {k} {_q(ba[k])}")
    ka, kb = _kids(a), _kids(b)
    if [key(x) for x in ka] == [key(x) for x in kb]:
        texts_differ = any(
            not isinstance(x, Tag) and str(x).strip() != str(y).strip() for x, y in zip(ka, kb)
        )
        if texts_differ:
            if len(ka) == 1 and not isinstance(ka[0], Tag):
                out.append(f"text {n} {_q(str(kb[0]))}")
                return
            if a.name == "body":
                raise _Whole()
            out.append(f"replace {n} {_q(str(b))}")
            return
        for x, y in zip(ka, kb):
            if isinstance(x, Tag):
                _diff_el(x, y, num, out, key)
        return
    if any(not isinstance(x, Tag) for x in ka + kb):
        # mixed text and elements changed shape: the element is rewritten whole
        if a.name == "body":
            raise _Whole()
        out.append(f"replace {n} {_q(str(b))}")
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
                    out.append(f"replace {num[id(x)]} {_q(str(y))}")
            continue
        for x in ka[i1:i2]:
            out.append(f"remove {num[id(x)]}")
        if j2 > j1:
            html = "".join(str(y) for y in kb[j1:j2])
            if last_kept is not None:
                out.append(f"after {num[id(last_kept)]} {_q(html)}")
            else:
                out.append(f"prepend {n} {_q(html)}")


def _class_line(n: int, before: str, after: str) -> str | None:
    """The shorter of `class N +a -b` and `attr N class "..."` (the class list as a whole, which
    also keeps a changed order exactly), or None when the list is the same."""
    a, b = before.split(), after.split()
    if a == b:
        return None
    changes = [f"-{c}" for c in a if c not in b] + [f"+{c}" for c in b if c not in a]
    kept = [c for c in a if c in b]
    whole = f"attr {n} class {_q(after)}"
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
            out.append(f"css-ins {i2 if tag == 'replace' else i1} {_q(line)}")


def diff(current: str, nxt: str) -> str:
    """The edit that turns `current` into `nxt` (empty when they are the same document)."""
    if current == nxt:
        return ""
    whole = f"screen {_q(nxt)}"
    try:
        sa, sb = _soup(current), _soup(nxt)
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
        _diff_css(_stylesheet(sa), _stylesheet(sb), css)
        num = {id(el): i for i, el in enumerate(_numbered(sa))}
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
