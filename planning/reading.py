"""What a screen's DOM says about a goal where the goal's text alone does not: read, not rendered.

Why: a proposer can only offer the right action if it knows the value to type, and a scorer can
only rate progress if it knows what was asked. Goals often name values without quotes ("Search
for saga movies directed by Good from year 2003", with the values set in bold in the page's own
instruction), point at a value on the screen ("Enter the value of Color", the value sitting in a
table beside "Color"), or ask for text the page holds ("Copy the text in the textarea"). And a
goal's target may sit in content the page hides until a control is opened. All of this is in the
HTML the world model already holds, so it is read there, without a render: pixels add nothing.
"""

from __future__ import annotations

import re

# How a page may mark content it does not show yet (besides style and the hidden attribute).
HIDDEN_CLASSES = {"hide", "hidden", "collapsed", "d-none", "invisible", "closed"}
# Elements that act on their own: inside a closed header, they are not the header.
CONTROLS = {"button", "a", "input", "select", "textarea", "label"}
# Elements that set text apart inside an instruction.
EMPHASIS_TAGS = {"b", "strong", "em", "mark", "i", "u"}
# A label is short; what sits beside it is its value (a table row, a definition, "Name: value").
LABEL_CHARS = 30
# Words by which a goal asks for something shown only once it is opened.
OPEN_WORDS = re.compile(r"\b(expand|open|show|reveal|unfold|switch|toggle)\b", re.I)
COPY_WORDS = re.compile(r"\b(copy|copied|paste|same text)\b", re.I)


def norm(text: str) -> str:
    return " ".join((text or "").split()).lower()


def own_text(el) -> str:
    return norm("".join(str(c) for c in el.children if isinstance(c, str)))


def is_hidden(el) -> bool:
    style = (el.get("style") or "").replace(" ", "").lower()
    classes = {c.lower() for c in el.get("class") or []}
    return (
        "display:none" in style
        or "visibility:hidden" in style
        or el.has_attr("hidden")
        or el.get("aria-hidden") == "true"
        or bool(classes & HIDDEN_CLASSES)
    )


def _closed(el) -> bool:
    """A control that says it is closed: aria-expanded false, or a class naming it collapsed."""
    classes = " ".join(el.get("class") or []).lower()
    return el.get("aria-expanded") == "false" or (
        "collapsed" in classes and el.name not in ("div", "section", "ul", "ol")
    )


def read_page(soup, st) -> None:
    """Fill a TaskState's reading of the page: emphasised text, label -> neighbour pairs, own
    texts shown and hidden (by an ancestor's style, attribute or class), closed controls."""
    hidden_roots: set[int] = set()
    for el in soup.find_all(True):
        hide = is_hidden(el) or (el.parent is not None and id(el.parent) in hidden_roots)
        if hide:
            hidden_roots.add(id(el))
        own = own_text(el)
        if own:
            (st.hidden if hide else st.shown).append(own)
        if hide:
            continue
        classes = " ".join(el.get("class") or []).lower()
        if el.name in EMPHASIS_TAGS or "bold" in classes:
            text = " ".join(el.get_text(" ", strip=True).split())
            if text and len(text) <= 60:
                st.emphasis.append(text)
        if own and len(own) <= LABEL_CHARS and el.name not in ("button", "a", "option", "label"):
            nxt = el.find_next_sibling(True)
            value = " ".join(nxt.get_text(" ", strip=True).split()) if nxt is not None else ""
            if value and len(value) <= 80:
                st.beside.setdefault(own.rstrip(":").strip(), value)
        if _closed(el):
            inner = [x for x in el.find_all(True) if x.name not in CONTROLS]  # not a control of its own
            for sub in [el, *inner]:
                if own_text(sub):
                    st.collapsed.add((sub.name, own_text(sub)))


def screen_values(goal: str, st) -> list[tuple[str, str | None]]:
    """Values the goal names through the screen: (text, source field hint or None).

    - text the screen sets apart (bold, emphasis) that the goal also says, word for word;
    - the text beside a label the goal names ("the value of Color": the cell after "Color"),
      when the screen has a field to put it in;
    - when the goal asks to copy, the text a field already holds (to go into another field)."""
    low = (goal or "").lower()
    out: list[tuple[str, str | None]] = []
    pointers = set()  # labels the goal names to point at their value: not values themselves
    if st.fields:
        for label, value in st.beside.items():
            if len(label) >= 2 and re.search(r"(?<!\w)" + re.escape(label) + r"(?!\w)", low):
                if value.lower() not in low:
                    out.append((value, None))
                    pointers.add(label)
    # A goal that quotes its values marks them by quotes: its emphasis names keys ("the *username*
    # "riley""). Emphasis that names a field (its label, placeholder, name) is a key too.
    keys = " ".join(f.hint for f in st.fields)
    quoted = bool(re.search(r"[\"“”]", goal or ""))
    for text in [] if quoted else st.emphasis:
        t = text.lower()
        if t in pointers or re.search(r"(?<!\w)" + re.escape(t) + r"(?!\w)", keys):
            continue
        if re.search(r"(?<!\w)" + re.escape(t) + r"(?!\w)", low):
            out.append((text, None))
    if COPY_WORDS.search(goal or ""):
        for f in st.fields:
            if f.value.strip():
                out.append((f.value, f.hint))
    seen, uniq = set(), []
    for text, src in out:
        if text not in seen:
            seen.add(text)
            uniq.append((text, src))
    return uniq


def wants_open(goal: str) -> bool:
    return bool(OPEN_WORDS.search(goal or ""))
