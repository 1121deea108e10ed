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

from bs4 import BeautifulSoup

from render.capture import FOCUS_CLASS
from render.metrics import visible_text
from worldmodel.goal import goal_quotes
from worldmodel.types import Action, Prediction, Screen

from .scorers import goal_terms

TEXT_INPUTS = {"", "text", "password", "email", "search", "tel", "url", "number"}
_REWARD_RE = re.compile(r"last reward:\s*(-?\d+(?:\.\d+)?)", re.I)


@dataclass
class Field:
    hint: str  # id, name, placeholder, aria-label and label text, lower-cased
    value: str


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
            if el.name == "textarea" or typ in TEXT_INPUTS:
                hint = " ".join(
                    str(el.get(a) or "") for a in ("id", "name", "type", "placeholder", "aria-label")
                ).lower()
                value = el.get_text() if el.name == "textarea" else str(el.get("value") or "")
                st.fields.append(Field(f"{hint} {label.lower()}".strip(), value))
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


@dataclass
class GoalSpec:
    """What a goal asks for, as far as a screen can show it."""

    quoted: list[tuple[str, str]]  # (hint word or "", text)
    terms: set[str]
    every_field: bool = False  # "into both fields", "in all the boxes"

    @classmethod
    def of(cls, goal: str) -> GoalSpec:
        quoted = [(w.lower(), q) for w, q in goal_quotes(goal) if q]
        every = bool(re.search(r"\b(both|all|each|every)\b", goal or "", re.I))
        return cls(quoted, set(goal_terms(goal or "")), every)


def field_score(st: TaskState, g: GoalSpec) -> tuple[int, int, int]:
    """(fields holding a quoted goal string they may hold, fields holding something else, text fields)."""
    good = bad = 0
    # a word before a quote is a hint only when some field answers to it ("username", "password")
    known = {h for h, _ in g.quoted if h and any(h in f.hint for f in st.fields)}
    for f in st.fields:
        if not f.value:
            continue
        fits = [q for h, q in g.quoted if h not in known or h in f.hint]
        if f.value in fits:
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
    if g.quoted and st.fields:
        good, bad, n = field_score(st, g)
        want = n if g.every_field else min(n, max(len(g.quoted), 1))
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


class ProgressScorer:
    """Rates what an action changed: goal-quoted text landing in the right field, boxes the goal
    names becoming checked (others unchecked), goal terms newly shown; no change costs a little;
    a reward the imagined screen displays decides outright. Scores lie in [0, 1], 0.5 = neutral."""

    def __init__(self, noop_penalty: float = 0.1, step: float = 0.3, term_step: float = 0.05):
        self.noop_penalty, self.step, self.term_step = noop_penalty, step, term_step
        self.states = TaskStates()

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
        return min(1.0, max(0.0, s))

    def done(self, current: Screen, action: Action, imagined: Prediction, goal: str) -> bool:
        """The imagined screen shows the task's own reward: the episode is over there."""
        return imagined.ok and self.states.of(imagined.html).reward is not None
