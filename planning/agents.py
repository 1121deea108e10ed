"""Example agent for MiniWoB++ tasks: candidates read off the screen's laid-out elements."""

from __future__ import annotations

import re

from render import Renderer, default_renderer
from worldmodel.goal import quoted as goal_quoted
from worldmodel.types import Action, Screen

from .lookahead import Candidate
from .scorers import goal_terms

_CLICKABLE = {"button", "a", "span", "label", "input", "textarea", "li", "td", "h3", "div", "p"}


class MiniWoBAgent:
    """Proposes a tap on each visible element and typing each of the goal's quoted strings into each field.

    Its confidence is a weak prior: elements whose text the goal names rank
    higher, fields get the quoted text, a Submit button is always an option.
    It is deliberately myopic, which is where lookahead can help.
    """

    def __init__(self, renderer: Renderer | None = None, max_candidates: int = 12):
        self.renderer = renderer
        self.max_candidates = max_candidates

    def __call__(self, screen: Screen, goal: str) -> list[Candidate]:
        if not screen.html:
            return [Candidate(Action("wait"), 0.0)]
        r = self.renderer or default_renderer()
        boxes = r.render(screen.html, screen.viewport()).boxes
        s = screen.device_scale_factor
        terms = set(goal_terms(goal))
        quoted = goal_quoted(goal)
        out: list[Candidate] = []
        for b in boxes:
            if b.tag not in _CLICKABLE or b.y < 50 / s and b.tag in ("div", "p", "span"):  # the query banner
                continue
            x, y = (b.x + b.w / 2) * s, (b.y + b.h / 2) * s
            words = set(re.findall(r"\w+", b.text.lower()))
            if b.tag in ("input", "textarea"):
                # every quoted string into every field: which goes where is for lookahead to find
                for k, q in enumerate(dict.fromkeys(quoted)):
                    out.append(Candidate(Action("type", x=x, y=y, text=q), 0.35 - 0.02 * k))
                out.append(Candidate(Action("tap", x=x, y=y), 0.2))
                continue
            match = len(words & terms) / max(1, len(words)) if words else 0.0
            conf = 0.2 + 0.3 * match + (0.1 if b.text.lower() in ("submit", "login") else 0.0)
            out.append(Candidate(Action("tap", x=x, y=y), conf))
        out.sort(key=lambda c: -c.confidence)
        return out[: self.max_candidates]


def recorder_policy(agent, lookahead=None, max_actions: int = 4):
    """Drive a live page with an agent (optionally through a Lookahead) via corpus.Recorder."""

    def policy(ctx):
        if ctx.step >= max_actions:
            return None
        cands = agent(ctx.screen, ctx.goal)
        if not cands:
            return None
        if lookahead is None:
            return max(cands, key=lambda c: c.confidence).action
        return lookahead.choose(ctx.screen, ctx.goal, cands)

    return policy
