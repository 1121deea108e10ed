"""Example agent for MiniWoB++ tasks: candidates read off the screen's laid-out elements."""

from __future__ import annotations

import re

from render import Renderer, default_renderer
from worldmodel.types import Action, Screen

from .lookahead import Candidate
from .progress import PAGERS, TaskStates, named_values
from .scorers import goal_terms

_CLICKABLE = {
    "button",
    "a",
    "span",
    "label",
    "input",
    "textarea",
    "li",
    "td",
    "h3",
    "div",
    "p",
    "text",
    "tspan",
}


def typed_values(goal: str, state=None) -> list[str]:
    """What to type for each value the goal names (quoted strings, dates, times; in the case the
    goal asks for; with the screen's TaskState also what the goal names through the screen:
    emphasised values, a value beside a label the goal names, text to copy). A date or time is also offered as the keys a date or time field takes, each
    part in two digits (1/5/2016 as 01052016, 1:27 PM as 0127P): such a field moves to its next
    part after two digits, and a lone 1 waits for a second."""
    out = []
    for v in named_values(goal, state):
        out.append(v.text)
        if v.kind in ("date", "time"):
            parts = re.findall(r"\d+", v.text)
            keys = "".join(p.zfill(2) for p in parts[:-1]) + parts[-1].zfill(2)
            out.append(keys + ("".join(c for c in v.text if c in "AaPp")[:1]).upper())
    return list(dict.fromkeys(out))


class MiniWoBAgent:
    """Proposes a tap on each visible element and typing each value the goal names into each field.

    Its confidence is a weak prior: elements whose text the goal names rank
    higher, fields get the quoted text, a Submit button is always an option.
    It is deliberately myopic, which is where lookahead can help.
    """

    def __init__(self, renderer: Renderer | None = None, max_candidates: int = 12):
        self.renderer = renderer
        self.max_candidates = max_candidates
        self.states = TaskStates()

    def __call__(self, screen: Screen, goal: str) -> list[Candidate]:
        if not screen.html:
            return [Candidate(Action("wait"), 0.0)]
        r = self.renderer or default_renderer()
        boxes = r.render(screen.html, screen.viewport()).boxes
        s = screen.device_scale_factor
        terms = set(goal_terms(goal))
        quoted = typed_values(goal, self.states.of(screen.html))
        out: list[Candidate] = []
        for b in boxes:
            if b.tag not in _CLICKABLE or b.y < 50 / s and b.tag in ("div", "p", "span"):  # the query banner
                continue
            x, y = (b.x + b.w / 2) * s, (b.y + b.h / 2) * s
            words = set(re.findall(r"\w+", b.text.lower()))
            if b.tag in ("input", "textarea"):
                # every value the goal names into every field: which goes where is for lookahead to find;
                # typed after a tap where a field's text starts (a date field's first part)
                tx = (b.x + min(b.w / 2, 6)) * s
                for k, q in enumerate(dict.fromkeys(quoted)):
                    out.append(Candidate(Action("type", x=tx, y=y, text=q), 0.35 - 0.02 * k))
                out.append(Candidate(Action("tap", x=x, y=y), 0.2))
                continue
            match = len(words & terms) / max(1, len(words)) if words else 0.0
            conf = 0.2 + 0.3 * match + (0.1 if b.text.lower() in ("submit", "login") else 0.0)
            conf += 0.05 if b.text.strip().lower() in PAGERS else 0.0  # past the items on this page
            out.append(Candidate(Action("tap", x=x, y=y), conf))
        out.sort(key=lambda c: -c.confidence)
        return out[: self.max_candidates]


def recorder_policy(agent, lookahead=None, max_actions: int = 4):
    """Drive a live page with an agent (optionally through a Lookahead) via corpus.Recorder; the
    lookahead is told the steps taken so far in the episode."""
    taken: list = []

    def policy(ctx):
        if ctx.step == 0:
            taken.clear()
        if ctx.step >= max_actions:
            return None
        cands = agent(ctx.screen, ctx.goal)
        if not cands:
            return None
        if lookahead is None:
            return max(cands, key=lambda c: c.confidence).action
        action = lookahead.choose(ctx.screen, ctx.goal, cands, taken=list(taken))
        if action is not None:
            taken.append((ctx.screen, action))
        return action

    return policy
