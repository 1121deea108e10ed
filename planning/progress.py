"""Progress, not presence: what an action changed on the screen, measured against the goal.

A goal's words are usually on the screen before anything happens (MiniWoB++ prints the task in a
banner), so "does the imagined screen show the goal?" rates every candidate alike. What separates
a good action is what it *changes*: a field now holding the text the goal quotes, a box the goal
names now checked, a wrong one unchecked, and, where a task shows its own reward, that reward.
`TaskState` reads those from a screen's HTML; `ProgressScorer` compares two of them.
"""

from __future__ import annotations

import re
from collections import Counter, OrderedDict
from dataclasses import dataclass, field

from bs4 import BeautifulSoup, Tag

from render import Renderer, default_renderer
from render.capture import FOCUS_CLASS
from worldmodel.goal import goal_quotes, quote_spans
from worldmodel.types import Action, Prediction, Screen

from .reading import is_hidden, norm, own_text, read_page, screen_values, wants_open
from .scorers import goal_terms

TEXT_INPUTS = {"", "text", "password", "email", "search", "tel", "url", "number"}
_TOKEN = re.compile(r"\w+", re.UNICODE)


def visible_text(text: str) -> list[str]:
    """Lower-cased word tokens of plain text, as render.metrics.visible_text gives for HTML but
    without parsing: everything here is already text, and a parse per call was most of a score."""
    return _TOKEN.findall((text or "").lower())


_REWARD_RE = re.compile(r"last reward:\s*(-?\d+(?:\.\d+)?)", re.I)
# An inline image's bytes say nothing about a task and cost the parser most of a screen's length.
_DATA_URI = re.compile(r'"data:[^"]{64,}"')


# Fields whose value the browser keeps in its own form (a date typed as 10/11/2016 is 2016-10-11).
VALUE_INPUTS = {"date", "time", "datetime-local", "month", "week"}
# Where a field has no label, the text just before it in its container says what it is for.
NEAR_CHARS = 60


@dataclass
class Field:
    hint: str  # id, name, placeholder, aria-label, title, label text or nearby text, lower-cased
    value: str
    type: str = ""


def nearby_text(el) -> str:
    """The text just before a field, lower-cased: its previous siblings' text, else its parent's,
    else (in a table) the previous cell's. What a layout puts beside a field to name it."""
    parts = []
    for sib in el.previous_siblings:
        if isinstance(sib, Tag) and (
            sib.name in ("input", "textarea", "select")
            or sib.find(["input", "textarea", "select"]) is not None
        ):
            break  # another field's: what is before it names that one
        text = sib.get_text(" ", strip=True) if isinstance(sib, Tag) else str(sib).strip()
        if text:
            parts.append(text)
        if sum(map(len, parts)) >= NEAR_CHARS:
            break
    if not parts and el.parent is not None:
        cell = el.find_parent(["td", "th"])
        prev = cell.find_previous_sibling(["td", "th"]) if cell is not None else None
        if prev is not None:
            parts.append(prev.get_text(" ", strip=True))
        elif el.parent.name not in ("body", "form") and len(el.parent.find_all(["input", "textarea"])) == 1:
            parts.append(el.parent.get_text(" ", strip=True))
    return " ".join(reversed(parts))[-NEAR_CHARS:].lower()


@dataclass
class TaskState:
    """What a screen's HTML says about a task: field values, checked boxes, words, focus, reward."""

    fields: list[Field] = field(default_factory=list)
    checked: dict[str, bool] = field(default_factory=dict)  # label -> checked
    words: Counter = field(default_factory=Counter)
    focus: str = ""
    reward: float | None = None
    focus_name: str = ""  # the focused element's text (a field's: its label), lower-cased
    emphasis: list[str] = field(default_factory=list)  # text set in bold or emphasis, as written
    beside: dict[str, str] = field(default_factory=dict)  # short label, lower-cased -> text after it
    hidden: list[str] = field(default_factory=list)  # own texts inside hidden content, lower-cased
    shown: list[str] = field(default_factory=list)  # own texts outside it, lower-cased
    collapsed: set[tuple[str, str]] = field(default_factory=set)  # (tag, own text) of closed controls

    @classmethod
    def of(cls, html: str | None) -> TaskState:
        if not html:
            return cls()
        soup = BeautifulSoup(_DATA_URI.sub('""', html), "html.parser")
        for t in soup(["style", "script", "template", "head"]):
            t.decompose()
        labels = {
            lab.get("for"): lab.get_text(" ", strip=True) for lab in soup.find_all("label") if lab.get("for")
        }
        st = cls()
        for el in soup.find_all(["input", "textarea"]):
            typ = (el.get("type") or "").lower()
            own = labels.get(el.get("id"), "")
            parent = el.find_parent("label")
            label = own or (parent.get_text(" ", strip=True) if parent else "")
            if el.name == "textarea" or typ in TEXT_INPUTS or typ in VALUE_INPUTS:
                hint = " ".join(
                    str(el.get(a) or "") for a in ("id", "name", "type", "placeholder", "aria-label", "title")
                ).lower()
                value = el.get_text() if el.name == "textarea" else str(el.get("value") or "")
                named = label or any(el.get(a) for a in ("placeholder", "aria-label", "title"))
                near = "" if named else nearby_text(el)  # a field that names itself needs no neighbour
                st.fields.append(Field(f"{hint} {label.lower()} {near}".strip(), value, typ))
            elif typ in ("checkbox", "radio"):
                key = (label or el.get("value") or el.get("id") or f"#{len(st.checked)}").strip().lower()
                st.checked[key] = el.has_attr("checked")
        focused = soup.find_all(class_=FOCUS_CLASS)
        if focused:
            f = focused[-1]
            st.focus = f"{f.name}#{f.get('id') or ''}"
            parent = f.find_parent("label")
            own = labels.get(f.get("id"), "") or (parent.get_text(" ", strip=True) if parent else "")
            if f.name in ("input", "textarea", "select"):  # a field's content is not its name
                st.focus_name = _norm(own or str(f.get("placeholder") or f.get("aria-label") or ""))
            else:
                st.focus_name = _norm(own or f.get_text(" ", strip=True) or str(f.get("value") or ""))
        read_page(soup, st)
        text = soup.get_text(" ", strip=True)
        m = _REWARD_RE.search(text)
        if m:
            st.reward = float(m.group(1))
        st.words = Counter(visible_text(text))
        return st


class TaskStates:
    """Parsed TaskStates by HTML, the last `size` kept: a planner scores every candidate against
    the same current screen, which is parsed once instead of once per candidate."""

    def __init__(self, size: int = 32):
        self.size = size
        self._by_html: OrderedDict[str, TaskState] = OrderedDict()

    def of(self, html: str | None) -> TaskState:
        key = html or ""
        if key in self._by_html:
            self._by_html.move_to_end(key)
            return self._by_html[key]
        st = self._by_html[key] = TaskState.of(html)
        while len(self._by_html) > self.size:
            self._by_html.popitem(last=False)
        return st


# Values a goal names without quotes: dates and times (what a date or time field is asked to hold).
_DATE_RE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
_TIME_RE = re.compile(r"\b(\d{1,2}):(\d{2})\s*([AaPp][Mm])?")
# Words that only join a goal's clauses: they say nothing about which field a value is for.
_GLUE = {
    "and",
    "then",
    "as",
    "the",
    "a",
    "an",
    "in",
    "into",
    "to",
    "of",
    "with",
    "field",
    "fields",
    "text",
    "enter",
    "type",
    "input",
    "box",
    "press",
    "hit",
    "click",
    "submit",
    "value",
    "all",
    "letters",
}


@dataclass
class NamedValue:
    """A value the goal asks to be entered: its text as it should end up in a field, and the goal's
    words around it (`hint`) that say which field it is for."""

    text: str
    hint: set[str]
    kind: str = "text"  # text, date or time
    # the hint's words weighed by how near the value they stand (before it counts more than after)
    weights: dict[str, float] = field(default_factory=dict)
    source: str | None = None  # the hint of the field it is copied from: not the field it goes to


def _norm_value(text: str, kind: str) -> str:
    """A date or a time in the form a field keeps it (2016-10-11, 13:05); text as it is."""
    if kind == "date":
        m = _DATE_RE.search(text)
        return f"{m.group(3)}-{int(m.group(1)):02d}-{int(m.group(2)):02d}" if m else text
    if kind == "time":
        m = _TIME_RE.search(text)
        if not m:
            return text
        h, mi, ap = int(m.group(1)), int(m.group(2)), (m.group(3) or "").lower()
        h = (h % 12) + (12 if ap == "pm" else 0) if ap else h
        return f"{h:02d}:{mi:02d}"
    return text


# A quoted value the goal gives only a part of: what the entry starts or ends with.
_AFFIX_RE = re.compile(r"\b(?:(starts?|starting|begins?|beginning)|(ends?|ending))\s+with\s*$", re.I)


def _affix_kind(before: str) -> str:
    """The kind of a quote the goal introduces with "starts with" (prefix) or "ends with" (suffix):
    a part of the entry, not the entry; else text."""
    m = _AFFIX_RE.search(before.rstrip())
    return "text" if m is None else ("prefix" if m.group(1) else "suffix")


def affix_fit(value: str, values: list[NamedValue]) -> float | None:
    """How far a field's value meets the parts the goal gives of an entry (what it starts and ends
    with): 1.0 all of them, 0.5 the start only (typed, waiting for the rest: a list of
    suggestions), 0.0 anything else; None when the goal gives no such part."""
    pre = [v.text.lower() for v in values if v.kind == "prefix"]
    suf = [v.text.lower() for v in values if v.kind == "suffix"]
    if not pre and not suf:
        return None
    low = value.lower().strip()
    starts = all(low.startswith(p) for p in pre)
    if starts and all(low.endswith(x) for x in suf) and len(low) > max(map(len, pre + suf)):
        return 1.0
    return 0.5 if low in pre else 0.0


def _clause_weights(before: str, after: str) -> dict[str, float]:
    """The clause's words, each weighed 1/(1+d) by its distance d in words from the value, words
    after the value at half weight: "directed by Good" names Good's field more than saga's."""
    out: dict[str, float] = {}
    for k, w in enumerate(reversed(visible_text(before))):
        if w not in _GLUE:
            out[w] = max(out.get(w, 0.0), 1.0 / (1 + k))
    for k, w in enumerate(visible_text(after)):
        if w not in _GLUE:
            out[w] = max(out.get(w, 0.0), 0.5 / (1 + k))
    return out


def named_values(goal: str, state: TaskState | None = None) -> list[NamedValue]:
    """The values a goal names (quoted strings, dates, times, and with the screen's TaskState the
    text it sets apart that the goal says, or points at: planning/reading.py), each with the words
    of its clause before it and after it up to the next value or joint, in the case the goal asks."""
    goal = goal or ""
    spans = [(a, b, text, _affix_kind(goal[:a])) for a, b, text in quote_spans(goal)]
    for rx, kind in ((_DATE_RE, "date"), (_TIME_RE, "time")):
        for m in rx.finditer(goal):
            if not any(a <= m.start() < b for a, b, _, _ in spans):
                spans.append((m.start(), m.end(), m.group(0), kind))
    looked_up = screen_values(goal, state) if state is not None else []
    for text, src in looked_up:
        m = re.search(r"(?<!\w)" + re.escape(text) + r"(?!\w)", goal, re.I) if src is None else None
        if m and not any(a < m.end() and m.start() < b for a, b, _, _ in spans):
            spans.append((m.start(), m.end(), goal[m.start() : m.end()], "text"))
    spans.sort()
    case = re.search(r"\b(upper|lower)\s*-?\s*case\b", goal, re.I)
    out = []
    for k, (a, b, v, kind) in enumerate(spans):
        lo = spans[k - 1][1] if k else 0
        hi = spans[k + 1][0] if k + 1 < len(spans) else len(goal)
        before = re.split(r"[,;.]|\band\b", goal[lo:a])[-1]
        after = re.split(r"[,;.]|\band\b|\bthen\b", goal[b:hi])[0]
        words = {w for w in visible_text(before + " " + after) if w not in _GLUE}
        text = v
        if case and kind in ("text", "prefix", "suffix"):
            text = v.upper() if case.group(1).lower() == "upper" else v.lower()
        out.append(NamedValue(text, words, kind, _clause_weights(before, after)))
    have = {v.text for v in out}
    for text, src in looked_up:  # values the goal points at but does not spell out
        if text not in have and not re.search(re.escape(text), goal, re.I):
            words = {w for w in visible_text(goal) if w not in _GLUE}
            out.append(NamedValue(text, words, "text", {w: 0.1 for w in words}, src))
            have.add(text)
    return out


@dataclass
class GoalSpec:
    """What a goal asks for, as far as a screen can show it."""

    quoted: list[tuple[str, str]]  # (hint word or "", text)
    terms: set[str]
    every_field: bool = False  # "into both fields", "in all the boxes"
    values: list[NamedValue] = field(default_factory=list)

    @classmethod
    def of(cls, goal: str, state: TaskState | None = None) -> GoalSpec:
        """What the goal asks; with the current screen's TaskState, also the values it names
        through the screen (planning/reading.py)."""
        quoted = [(w.lower(), q) for w, q in goal_quotes(goal) if q]
        every = bool(re.search(r"\b(both|all|each|every)\b", goal or "", re.I))
        return cls(quoted, set(goal_terms(goal or "")), every, named_values(goal, state))


def _stem(w: str) -> str:
    return w[:5]  # director / directed, year / years: near enough for a label


def _fit(v: NamedValue, f: Field) -> float:
    """How strongly the value's clause names the field: its weighed words found in the field's
    hint (label, placeholder, name, nearby text), whole or by their first letters."""
    hint = set(visible_text(f.hint))
    stems = {_stem(w) for w in hint}
    weights = v.weights or {w: 1.0 for w in v.hint}
    return sum(x for w, x in weights.items() if w in hint or _stem(w) in stems)


def place_values(fields: list[Field], values: list[NamedValue]) -> dict[int, list[str]]:
    """For each field (by index), the values it may hold. Values go one to a field, the most
    clearly named first: a value to the fields its clause names most strongly (by label,
    placeholder, name or nearby text, in whatever layout and order the fields come); a value
    whose clause names none of the fields left goes in any of them ("saga" in the one field left
    once "Good" has the director's and 2003 the year's). Dates and times go only in fields that
    keep that kind, or text fields; a copied value not back into the field it comes from."""
    out: dict[int, list[str]] = {i: [] for i in range(len(fields))}
    fit = {}
    for vi, v in enumerate(values):
        for i, f in enumerate(fields):
            kind_ok = v.kind in ("text", "prefix", "suffix") or f.type in ("", "text", v.kind)
            if kind_ok and (v.source is None or f.hint != v.source):
                fit[vi, i] = _fit(v, f)
    order = sorted(
        range(len(values)), key=lambda vi: -max((x for (a, _), x in fit.items() if a == vi), default=0)
    )
    taken: set[int] = set()
    for vi in order:
        v = values[vi]
        ok = [i for (a, i) in fit if a == vi]
        free = [i for i in ok if i not in taken] or ok
        best = max((fit[vi, i] for i in free), default=0.0)
        chosen = [i for i in free if fit[vi, i] == best] if best > 0 else free
        if len(chosen) == 1:
            taken.add(chosen[0])
        for i in chosen:
            f = fields[i]
            out[i].append(_norm_value(v.text, v.kind) if f.type == v.kind else v.text)
    return out


def field_score(st: TaskState, g: GoalSpec) -> tuple[float, int, int]:
    """(fields holding a value the goal names for them, fields holding something else, fields).
    A field where the goal gives parts of the entry (what it starts and ends with) counts by how
    far its value meets them: half for the start typed alone, nothing wrong either."""
    good: float = 0
    bad = 0
    fits = place_values(st.fields, g.values)
    parts = {v.text for v in g.values if v.kind in ("prefix", "suffix")}
    sources = {v.source for v in g.values if v.source is not None}
    for i, f in enumerate(st.fields):
        if not f.value or f.hint in sources:  # a field to copy from is neither
            continue
        fit = affix_fit(f.value, g.values) if parts & set(fits[i]) else None
        if fit is not None:
            good += fit
            bad += fit == 0.0
        elif f.value in fits[i]:
            good += 1
        else:
            bad += 1
    return good, bad, len(st.fields)


def check_score(st: TaskState, g: GoalSpec) -> tuple[int, int]:
    """(checked boxes whose label the goal names, checked boxes it does not name)."""
    named = wrong = 0
    for label, on in st.checked.items():
        if not on:
            continue
        words = set(visible_text(label))
        if words and words <= g.terms | {q.lower() for _, q in g.quoted}:
            named += 1
        else:
            wrong += 1
    return named, wrong


def requirements_met(st: TaskState, g: GoalSpec) -> float:
    """Share of what the goal asks the screen to hold that it holds (1.0 when it asks nothing)."""
    parts = []
    if g.values and st.fields:
        good, bad, n = field_score(st, g)
        want = n if g.every_field else min(n, max(len(g.values), 1))
        parts.append(max(0.0, (good - bad) / want))
    if st.checked:
        named, wrong = check_score(st, g)
        wanted = sum(1 for label in st.checked if set(visible_text(label)) & g.terms)
        parts.append(max(0.0, (named - wrong) / wanted) if wanted else float(wrong == 0))
    return min(1.0, sum(parts) / len(parts)) if parts else 1.0


def changed(a: TaskState, b: TaskState) -> bool:
    return (
        [f.value for f in a.fields] != [f.value for f in b.fields]
        or a.checked != b.checked
        or a.words != b.words
        or a.focus != b.focus
    )


# What a control that ends a form says (a tap on it when everything asked is in place is progress).
SUBMIT_WORDS = {"submit", "login", "log", "sign", "ok", "search", "next", "done", "go", "send", "save"}
# The one convention a goal leans on for a control without a name: "x" closes.
_ALIASES = {"x": {"x", "×", "✕", "✖", "close"}}
# What a control without a name shows when it opens something (a menu, a section, a wheel).
OPENER_GLYPHS = {"+", "▸", "▶", "►", "›", "»", "☰", "≡", "⋮", "…", "...", "▾", "▼", "⌄"}


# What a control that shows the next page of a list says.
PAGERS = {">", "›", "»", ">>", "next", "next page", "older", "more results"}


def is_submit(tag: str, name: str) -> bool:
    """A control that ends a form: a button or link with a submit word ("Log in"), or any element
    whose words are all such words (a div reading "Submit"); not a title that has one ("Movie
    Search")."""
    words = set(visible_text(name))
    if not words:
        return False
    if tag in ("button", "input", "a"):
        return bool(words & SUBMIT_WORDS)
    return words <= SUBMIT_WORDS | {"in", "up", "me", "it"}


def target_box(boxes, action: Action, scale: float):
    """The smallest laid-out element under the action's point, or None."""
    if action.x is None or action.y is None:
        return None
    x, y = action.x / scale, action.y / scale
    hits = [b for b in boxes if b.x <= x <= b.x + b.w and b.y <= y <= b.y + b.h]
    return min(hits, key=lambda b: b.w * b.h) if hits else None


_norm, _own_text, _hidden = norm, own_text, is_hidden  # one home: planning/reading.py


def _within(term: str, text: str) -> bool:
    """The term is the text or one of its phrases, punctuation aside ("submit" in "click submit.")."""
    loose = " " + re.sub(r"[.,;:!?()\"']+", " ", text) + " "
    return term == text or f" {term} " in f" {text} " or f" {term} " in loose


def on_screen(term: str, shown: list[str], goal: str) -> bool:
    """The term is the text (or a phrase of the text) of an element shown, besides the instruction
    where a page prints it: shown more times than the goal says it."""
    word = re.compile(r"(?<!\w)" + re.escape(term) + r"(?!\w)")
    return sum(len(word.findall(x)) for x in shown) > len(word.findall(_norm(goal)))


@dataclass
class Sight:
    """What a screen shows of a goal's targets: the names of the controls that would reveal a
    target the goal names but the screen hides (a collapsed section, a closed folder, a menu)."""

    revealers: set[tuple[str, str]] = field(default_factory=set)  # (tag, own text) of each control

    @classmethod
    def of(cls, html: str | None, boxes, goal: str, state: TaskState | None = None) -> Sight:
        """With `boxes` (a render's layout) what is shown is what was laid out; with `boxes`
        None, what the DOM does not hide (planning/reading.py), read without a render."""
        g = GoalSpec.of(goal, state)
        targets = [_norm(v.text) for v in g.values] or sorted(g.terms)
        if boxes is None:
            state = state if state is not None else TaskState.of(html)
            shown = state.shown
        else:
            shown = [_norm(b.text) for b in boxes]
        hidden = [t for t in targets if t and not on_screen(t, shown, goal)]
        out = cls()
        if state is not None:  # none of them in hidden content: nothing to reveal, no parse
            hidden = [t for t in hidden if any(_within(t, x) for x in state.hidden)]
        if not html or not hidden:
            return out
        soup = BeautifulSoup(html, "html.parser")
        for t in soup(["style", "script", "template", "head"]):
            t.decompose()
        context = {w for w in g.terms if not any(w in _norm(t) for t in hidden)}
        found = []
        for el in soup.find_all(True):
            own = _own_text(el)
            if not own or not any(t == own or f" {t} " in f" {own} " for t in hidden):
                continue
            box = None  # the outermost hidden ancestor: what must be revealed first
            for anc in [el, *el.parents]:
                if getattr(anc, "name", None) in (None, "[document]", "body", "html"):
                    break
                if _hidden(anc):
                    box = anc
            if box is None:
                continue
            near = 0  # how far up the nearest text the goal names besides the target is (0: none)
            for k, anc in enumerate(box.parents):
                if context and context & set(visible_text(anc.get_text(" ", strip=True))):
                    near = k + 1
                    break
            found.append((near, box))
        if any(n for n, _ in found):  # only the hidden content beside what else the goal names
            best = min(n for n, _ in found if n)
            found = [(n, b) for n, b in found if n == best]
        for _, box in found:
            prev = box.find_previous_sibling(True)
            for el in [prev, *(prev.find_all(True) if prev is not None else [])]:
                if el is not None and _own_text(el):
                    out.revealers.add((el.name, _own_text(el)))
        return out


class ProgressScorer:
    """Rates what an action changed: a value the goal names landing in the field it is for (by
    the field's label, placeholder, name or nearby text, in any layout and order), boxes the goal
    names becoming checked (others unchecked), goal terms newly shown; no change costs a little;
    a reward the imagined screen displays decides outright. Scores lie in [0, 1], 0.5 = neutral.

    It also rates what a tap targets, which a world model without the app's scripts cannot show
    the effect of: a control named exactly as the goal quotes it, a control that reveals a
    target the goal names but the screen hides (a sub-goal: the section's header, the folder, the
    menu item before it), a closed control when the goal asks to open or expand one, and a
    submit-like control once everything the goal asks for is in place.

    Everything is read off the DOMs the imagination already holds (values, checked states,
    focus, what is hidden), never rendered: the tap's target is the element the imagined screen
    newly focuses. Only a tap on something that takes no focus (a span, a header) needs the
    current screen's layout, rendered once per screen and cached (a planner's agent has usually
    rendered it already, through the same renderer's cache)."""

    def __init__(
        self,
        noop_penalty: float = 0.1,
        step: float = 0.3,
        term_step: float = 0.05,
        renderer: Renderer | None = None,
        targets: bool = True,
    ):
        self.noop_penalty, self.step, self.term_step = noop_penalty, step, term_step
        self.states = TaskStates()
        self._renderer = renderer
        self.targets = targets
        self._boxes: OrderedDict[tuple, list] = OrderedDict()
        self._specs: OrderedDict[tuple, GoalSpec] = OrderedDict()
        self._sights: OrderedDict[tuple, Sight] = OrderedDict()
        self.renders = 0  # current screens this scorer had to lay out itself

    def spec(self, current: Screen, goal: str) -> GoalSpec:
        """The goal as the current screen names it (cached per screen)."""
        key = (goal, current.html)
        if key not in self._specs:
            self._specs[key] = GoalSpec.of(goal, self.states.of(current.html))
            while len(self._specs) > 32:
                self._specs.popitem(last=False)
        return self._specs[key]

    def sight(self, current: Screen, goal: str) -> Sight:
        """What the current screen hides of the goal's targets (cached per screen)."""
        key = (goal, current.html)
        if key not in self._sights:
            self._sights[key] = Sight.of(current.html, None, goal, self.states.of(current.html))
            while len(self._sights) > 32:
                self._sights.popitem(last=False)
        return self._sights[key]

    def unseen(self, current: Screen, goal: str) -> bool:
        """Some value the goal names in full is the text of no element the current screen shows
        (a field's value and the printed instruction aside): a search result on a later page."""
        shown = self.states.of(current.html).shown
        named = {_norm(v.text) for v in self.spec(current, goal).values if v.kind == "text"}
        return any(t and not on_screen(t, shown, goal) for t in named)

    def layout(self, current: Screen) -> list:
        key = (current.html, current.size, current.device_scale_factor)
        if key not in self._boxes:
            r = self._renderer or default_renderer()
            try:
                self._boxes[key] = r.render(current.html, current.viewport()).boxes
            except Exception:
                self._boxes[key] = []
            self.renders += 1
            while len(self._boxes) > 16:
                self._boxes.popitem(last=False)
        return self._boxes[key]

    def target(self, current: Screen, action: Action, before: TaskState, after: TaskState):
        """(tag, name) of what a tap lands on: the element the imagined screen newly focuses,
        else the element under the point in the current screen's layout; None if nothing."""
        if after.focus and after.focus != before.focus:
            return after.focus.split("#")[0], after.focus_name
        box = target_box(self.layout(current), action, current.device_scale_factor)
        return (box.tag, _norm(box.text)) if box is not None else None

    def target_bonus(
        self, current: Screen, action: Action, goal: str, before: TaskState, after=None
    ) -> float:
        """What tapping the action's target is worth, read off the current and imagined DOMs."""
        if not self.targets or action.type != "tap" or not current.html:
            return 0.0
        hit = self.target(current, action, before, after if after is not None else before)
        if hit is None:
            return 0.0
        g, sight = self.spec(current, goal), self.sight(current, goal)
        tag, name = hit
        names = set()
        for v in g.values:
            names |= _ALIASES.get(_norm(v.text), {_norm(v.text)})
        bonus = 0.0
        if name and (name in names or affix_fit(name, g.values) == 1.0):
            bonus += self.step  # what the goal names, or an entry that meets the parts it gives
        if name and name in {n for _, n in sight.revealers}:
            bonus += self.step
        elif name and not sight.revealers and wants_open(goal):
            if name in {n for _, n in before.collapsed} or name in OPENER_GLYPHS:
                bonus += self.step  # "expand the section": a closed control is the way in
        if name in PAGERS and self.unseen(current, goal):
            bonus += self.step  # what the goal names is on no element here: the next page
        asked = bool(g.values and before.fields) or bool(before.checked)
        if asked and is_submit(tag, name) and requirements_met(before, g) >= 1.0:
            bonus += self.step
        return bonus

    def __call__(self, current: Screen, action: Action, imagined: Prediction, goal: str) -> float:
        if not imagined.ok:
            return 0.0
        a, b = self.states.of(current.html), self.states.of(imagined.html)
        g = self.spec(current, goal)
        if b.reward is not None and b.reward != a.reward:
            return min(1.0, max(0.0, 0.5 + 0.5 * b.reward))
        fa, fb = field_score(a, g), field_score(b, g)
        ca, cb = check_score(a, g), check_score(b, g)
        delta = (fb[0] - fb[1]) - (fa[0] - fa[1]) + (cb[0] - cb[1]) - (ca[0] - ca[1])
        new_terms = sum(1 for t in g.terms if b.words[t] > a.words[t])
        s = 0.5 + self.step * delta + self.term_step * new_terms
        if not changed(a, b):
            s -= self.noop_penalty
        s += self.target_bonus(current, action, goal, a, b)
        return min(1.0, max(0.0, s))

    def done(self, current: Screen, action: Action, imagined: Prediction, goal: str) -> bool:
        """The imagined screen shows the task's own reward: the episode is over there."""
        return imagined.ok and self.states.of(imagined.html).reward is not None
