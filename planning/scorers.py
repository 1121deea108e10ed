"""How good does an imagined screen look for the goal? Pluggable scorers in [0, 1]."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Protocol

from render.metrics import visible_text
from worldmodel.chat import ChatClient
from worldmodel.goal import quoted as goal_quoted
from worldmodel.types import Action, Prediction, Screen, png_data_url

_STOP = {
    "the",
    "a",
    "an",
    "and",
    "or",
    "to",
    "of",
    "on",
    "in",
    "into",
    "then",
    "click",
    "tap",
    "press",
    "select",
    "enter",
    "type",
    "field",
    "button",
    "text",
    "is",
    "it",
    "your",
    "you",
    "with",
    "for",
    "from",
    "find",
}


class Scorer(Protocol):
    def __call__(self, current: Screen, action: Action, imagined: Prediction, goal: str) -> float: ...


def goal_terms(goal: str) -> list[str]:
    """What the goal names: quoted strings first (MiniWoB style), else its content words."""
    quoted = goal_quoted(goal)
    words = visible_text(" ".join(quoted) if quoted else goal)
    return [w for w in words if w not in _STOP] or words


def goal_coverage(html: str, goal: str) -> float | None:
    """Share of the goal's terms visible in `html`; None when the goal names nothing."""
    terms = goal_terms(goal)
    if not terms:
        return None
    seen = set(visible_text(html))
    return sum(t in seen for t in terms) / len(terms)


class GoalTextScorer:
    """Does the imagined screen show what the goal names, more than the current screen does?

    Half the score is coverage of the goal's terms on the imagined screen, half
    the gain over the current screen, so an action that merely keeps the status
    quo does not win.
    """

    def __call__(self, current: Screen, action: Action, imagined: Prediction, goal: str) -> float:
        cover = goal_coverage(imagined.html, goal) if imagined.ok else None
        if cover is None:
            return 0.0
        prior = goal_coverage(current.html or "", goal)
        return 0.5 * cover + 0.5 * max(0.0, cover - prior + 0.5) / 1.5


class ValueScorer:
    """A learned value hook: any callable (screen, goal) -> float, e.g. a critic trained offline
    (planning.reward.LearnedReward is one that also reads the action)."""

    def __init__(self, value_fn: Callable[[Screen, str], float] | None = None):
        self.value_fn = value_fn

    def __call__(self, current, action, imagined: Prediction, goal: str) -> float:
        if not imagined.ok:
            return 0.0
        return float(self.value_fn(Screen(imagined.image, html=imagined.html), goal))


JUDGE_PROMPT = (
    "You judge a GUI agent's planned action. The first image is the current screen, the second the "
    "predicted screen after the action.\nGoal: {goal}\nAction: {action}\nDoes this action make progress "
    'towards the goal? Answer only with JSON: {{"valid": true or false, "confidence": 0 to 1}}.'
)


class VLMJudgeScorer:
    """Code2World's judge: an OpenAI-compatible VLM says valid/invalid with a confidence."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout_s: float = 120.0):
        self.chat = ChatClient(base_url, model, api_key, timeout_s)
        self.url = self.chat.url

    def __call__(self, current: Screen, action: Action, imagined: Prediction, goal: str) -> float:
        if not imagined.ok:
            return 0.0
        content = [
            {"type": "image_url", "image_url": {"url": png_data_url(current.image)}},
            {"type": "image_url", "image_url": {"url": png_data_url(imagined.image)}},
            {"type": "text", "text": JUDGE_PROMPT.format(goal=goal, action=action.describe())},
        ]
        return parse_judgement(self.chat.complete([{"role": "user", "content": content}], temperature=0))


def parse_judgement(text: str) -> float:
    """valid with confidence c -> c; invalid with confidence c -> 1 - c; unreadable -> 0.5."""
    m = re.search(r"\{.*\}", text or "", re.DOTALL)
    try:
        d = json.loads(m.group(0)) if m else {}
    except json.JSONDecodeError:
        d = {}
    if "valid" not in d:
        return 0.5
    c = min(1.0, max(0.0, float(d.get("confidence", 1.0))))
    return c if d["valid"] in (True, "true", "yes") else 1.0 - c


def says_done(scorer, current: Screen, action: Action, imagined: Prediction, goal: str) -> bool:
    """Whether a scorer with a `done` signal says the episode ends at `imagined` (False without one)."""
    done = getattr(scorer, "done", None)
    return bool(done(current, action, imagined, goal)) if callable(done) else False


class WeightedScorer:
    """A weighted sum of scorers, e.g. progress on the page plus a learned task reward."""

    def __init__(self, parts: list[tuple[Scorer, float]]):
        if not parts:
            raise ValueError("WeightedScorer needs at least one (scorer, weight)")
        self.parts = list(parts)

    def __call__(self, current: Screen, action: Action, imagined: Prediction, goal: str) -> float:
        return sum(w * s(current, action, imagined, goal) for s, w in self.parts)

    def done(self, current: Screen, action: Action, imagined: Prediction, goal: str) -> bool:
        """Any part that says the episode ends there."""
        return any(says_done(s, current, action, imagined, goal) for s, _ in self.parts)
