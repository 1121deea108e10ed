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
from render.metrics import visible_text
from worldmodel.goal import goal_quotes, quote_spans
from worldmodel.types import Action, Prediction, Screen

from .scorers import goal_terms

TEXT_INPUTS = {"", "text", "password", "email", "search", "tel", "url", "number"}
_REWARD_RE = re.compile(r"last reward:\s*(-?\d+(?:\.\d+)?)", re.I)


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

    @classmethod
    def of(cls, html: str | None) -> TaskState:
        if not html:
            return cls()
        soup = BeautifulSoup(html, "html.parser")
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
                near = "" if label else nearby_text(el)
                st.fields.append(Field(f"{hint} {label.lower()} {near}".strip(), value, typ))
            elif typ in ("checkbox", "radio"):
                key = (label or el.get("value") or el.get("id") or f"#{len(st.checked)}").strip().lower()
                st.checked[key] = el.has_attr("checked")
        focused = soup.select(f".{FOCUS_CLASS}")
        if focused:
            f = focused[-1]
            st.focus = f"{f.name}#{f.get('id') or ''}"
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


def named_values(goal: str) -> list[NamedValue]:
    """The values a goal names (quoted strings, dates, times), each with the words of its clause
    before it and after it up to the next value or joint, and in the case the goal asks for."""
    goal = goal or ""
    spans = [(a, b, text, "text") for a, b, text in quote_spans(goal)]
    for rx, kind in ((_DATE_RE, "date"), (_TIME_RE, "time")):
        for m in rx.finditer(goal):
            if not any(a <= m.start() < b for a, b, _, _ in spans):
                spans.append((m.start(), m.end(), m.group(0), kind))
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
        if case and kind == "text":
            text = v.upper() if case.group(1).lower() == "upper" else v.lower()
        out.append(NamedValue(text, words, kind))
    return out


@dataclass
class GoalSpec:
    """What a goal asks for, as far as a screen can show it."""

    quoted: list[tuple[str, str]]  # (hint word or "", text)
    terms: set[str]
    every_field: bool = False  # "into both fields", "in all the boxes"
    values: list[NamedValue] = field(default_factory=list)

    @classmethod
    def of(cls, goal: str) -> GoalSpec:
        quoted = [(w.lower(), q) for w, q in goal_quotes(goal) if q]
        every = bool(re.search(r"\b(both|all|each|every)\b", goal or "", re.I))
        return cls(quoted, set(goal_terms(goal or "")), every, named_values(goal))


def place_values(fields: list[Field], values: list[NamedValue]) -> dict[int, list[str]]:
    """For each field (by index), the values it may hold: a value goes to the fields whose hint
    (label, placeholder, name, nearby text) shares the most words with the value's own clause of
    the goal, in whatever layout and order the fields come; a value whose clause names no field
    may go in any. Dates and times go only in fields that keep that kind, or text fields."""
    out: dict[int, list[str]] = {i: [] for i in range(len(fields))}
    for v in values:
        ok = [i for i, f in enumerate(fields) if v.kind == "text" or f.type in ("", "text", v.kind)]
        words = [(len(v.hint & set(visible_text(fields[i].hint))), i) for i in ok]
        best = max((n for n, _ in words), default=0)
        for n, i in words:
            if best == 0 or n == best:
                f = fields[i]
                out[i].append(_norm_value(v.text, v.kind) if f.type == v.kind else v.text)
    return out


def field_score(st: TaskState, g: GoalSpec) -> tuple[int, int, int]:
    """(fields holding a value the goal names for them, fields holding something else, fields)."""
    good = bad = 0
    fits = place_values(st.fields, g.values)
    for i, f in enumerate(st.fields):
        if not f.value:
            continue
        if f.value in fits[i]:
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
# How a page may mark content it does not show yet (besides style and the hidden attribute).
HIDDEN_CLASSES = {"hide", "hidden", "collapsed", "d-none", "invisible", "closed"}
# The one convention a goal leans on for a control without a name: "x" closes.
_ALIASES = {"x": {"x", "×", "✕", "✖", "close"}}


def target_box(boxes, action: Action, scale: float):
    """The smallest laid-out element under the action's point, or None."""
    if action.x is None or action.y is None:
        return None
    x, y = action.x / scale, action.y / scale
    hits = [b for b in boxes if b.x <= x <= b.x + b.w and b.y <= y <= b.y + b.h]
    return min(hits, key=lambda b: b.w * b.h) if hits else None


def _norm(text: str) -> str:
    return " ".join((text or "").split()).lower()


def _own_text(el) -> str:
    return _norm("".join(str(c) for c in el.children if isinstance(c, str)))


def _hidden(el) -> bool:
    style = (el.get("style") or "").replace(" ", "").lower()
    classes = {c.lower() for c in el.get("class") or []}
    return (
        "display:none" in style
        or "visibility:hidden" in style
        or el.has_attr("hidden")
        or el.get("aria-hidden") == "true"
        or bool(classes & HIDDEN_CLASSES)
    )


@dataclass
class Sight:
    """What a screen shows of a goal's targets: the names of the controls that would reveal a
    target the goal names but the screen hides (a collapsed section, a closed folder, a menu)."""

    revealers: set[tuple[str, str]] = field(default_factory=set)  # (tag, own text) of each control

    @classmethod
    def of(cls, html: str | None, boxes, goal: str) -> Sight:
        g = GoalSpec.of(goal)
        targets = [_norm(v.text) for v in g.values] or sorted(g.terms)
        shown = [_norm(b.text) for b in boxes]
        hidden = [t for t in targets if t and not any(t == x or f" {t} " in f" {x} " for x in shown)]
        out = cls()
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

    With the current screen's layout (rendered once per screen) it also rates what the action
    targets, which a world model without the app's scripts cannot show the effect of: a control
    named exactly as the goal quotes it, a control that reveals a target the goal names but the
    screen hides (a sub-goal: the section's header, the folder, the menu item before it), and a
    submit-like control once everything the goal asks for is in place."""

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
        self._sights: OrderedDict[tuple, tuple[list, Sight]] = OrderedDict()

    def _sight(self, current: Screen, goal: str) -> tuple[list, Sight]:
        key = (current.html, current.size, current.device_scale_factor, goal)
        if key not in self._sights:
            r = self._renderer or default_renderer()
            try:
                boxes = r.render(current.html, current.viewport()).boxes
            except Exception:
                boxes = []
            self._sights[key] = (boxes, Sight.of(current.html, boxes, goal))
            while len(self._sights) > 16:
                self._sights.popitem(last=False)
        return self._sights[key]

    def target_bonus(self, current: Screen, action: Action, goal: str, before: TaskState) -> float:
        """What tapping the action's target is worth, read off the current screen."""
        if not self.targets or action.type != "tap" or not current.html:
            return 0.0
        boxes, sight = self._sight(current, goal)
        box = target_box(boxes, action, current.device_scale_factor)
        if box is None:
            return 0.0
        g = GoalSpec.of(goal)
        name = _norm(box.text)
        names = set()
        for v in g.values:
            names |= _ALIASES.get(_norm(v.text), {_norm(v.text)})
        bonus = 0.0
        if name and name in names:
            bonus += self.step
        if (box.tag, name) in sight.revealers:
            bonus += self.step
        asked = bool(g.values and before.fields) or bool(before.checked)
        if asked and set(visible_text(name)) & SUBMIT_WORDS and requirements_met(before, g) >= 1.0:
            bonus += self.step
        return bonus

    def __call__(self, current: Screen, action: Action, imagined: Prediction, goal: str) -> float:
        if not imagined.ok:
            return 0.0
        g = GoalSpec.of(goal)
        a, b = self.states.of(current.html), self.states.of(imagined.html)
        if b.reward is not None and b.reward != a.reward:
            return min(1.0, max(0.0, 0.5 + 0.5 * b.reward))
        fa, fb = field_score(a, g), field_score(b, g)
        ca, cb = check_score(a, g), check_score(b, g)
        delta = (fb[0] - fb[1]) - (fa[0] - fa[1]) + (cb[0] - cb[1]) - (ca[0] - ca[1])
        new_terms = sum(1 for t in g.terms if b.words[t] > a.words[t])
        s = 0.5 + self.step * delta + self.term_step * new_terms
        if not changed(a, b):
            s -= self.noop_penalty
        s += self.target_bonus(current, action, goal, a)
        return min(1.0, max(0.0, s))

    def done(self, current: Screen, action: Action, imagined: Prediction, goal: str) -> bool:
        """The imagined screen shows the task's own reward: the episode is over there."""
        return imagined.ok and self.states.of(imagined.html).reward is not None
