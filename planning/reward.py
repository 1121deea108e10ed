"""A learned task reward: will this action, on this screen, win the task (and end it)?

Browser physics (the `sim` world model) shows what a click or a keystroke does to the page, but
not what a task's script makes of a Submit: that reaction is the task's verdict. The corpus keeps
it: every MiniWoB++ transition carries the task's reward and done flag. This model learns them
from a few readable features of (screen, action, goal): what the action targets (a submit-like
button, an element the goal names, a field), what it types (the goal's quoted text or not), and
how much of what the goal asks the screen already holds. Two logistic heads (reward > 0, done)
fitted with L2 on the training split; small enough to read, save as JSON and run anywhere.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from render import Renderer, RenderError
from render.metrics import visible_text
from worldmodel.files import write_whole
from worldmodel.types import Action, Prediction, Screen, Transition

from .progress import SUBMIT_WORDS, GoalSpec, TaskState, TaskStates, requirements_met, target_box
from .scorers import ValueScorer

FEATURES = (
    "bias",
    "tap",
    "type",
    "key_enter",
    "target_submit",
    "target_named",
    "target_field",
    "requirements_met",
    "all_met_and_submit",
    "types_quoted",
    "named_tap",
)
L2 = 1e-2
STEPS = 3000
LR = 0.5


def features(screen: Screen, boxes, action: Action, goal: str, state: TaskState | None = None) -> np.ndarray:
    """The feature vector (FEATURES' order); `state` is the screen's parsed TaskState if known."""
    g = GoalSpec.of(goal)
    st = state if state is not None else TaskState.of(screen.html)
    tgt = target_box(boxes, action, screen.device_scale_factor)
    words = set(visible_text(tgt.text)) if tgt is not None else set()
    tag = tgt.tag if tgt is not None else ""
    submit = float(bool(words & SUBMIT_WORDS) and tag in ("button", "input", "a", "span", "div"))
    named = len(words & g.terms) / len(words) if words else 0.0
    met = requirements_met(st, g)
    tap = float(action.type == "tap")
    f = {
        "bias": 1.0,
        "tap": tap,
        "type": float(action.type == "type"),
        "key_enter": float(action.type == "key" and (action.key or "") == "Enter"),
        "target_submit": submit,
        "target_named": named,
        "target_field": float(tag in ("input", "textarea")),
        "requirements_met": met,
        "all_met_and_submit": float(met >= 1.0) * submit,
        "types_quoted": float(action.type == "type" and any(q == action.text for _, q in g.quoted)),
        "named_tap": named * tap * (1.0 - submit),
    }
    return np.array([f[k] for k in FEATURES], dtype=np.float64)


def _fit_logistic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    w = np.zeros(x.shape[1])
    pos = max(1.0, y.sum())
    neg = max(1.0, len(y) - y.sum())
    weight = np.where(y > 0, len(y) / (2 * pos), len(y) / (2 * neg))  # balance the rare wins
    for _ in range(STEPS):
        p = 1 / (1 + np.exp(-(x @ w)))
        grad = x.T @ ((p - y) * weight) / len(y) + L2 * np.r_[0.0, w[1:]]
        w -= LR * grad
    return w


class LearnedReward(ValueScorer):
    """P(the task rewards this action) and P(it ends the episode), from (screen, action, goal).

    Use it as a scorer (`Lookahead(..., scorer=...)`) or wrapped in `ValueScorer`; it reads the
    current screen (the state the action is taken in), so it works with any world model.
    """

    def __init__(self, reward_w=None, done_w=None, renderer: Renderer | None = None):
        super().__init__(None)
        self.reward_w = None if reward_w is None else np.asarray(reward_w, dtype=np.float64)
        self.done_w = None if done_w is None else np.asarray(done_w, dtype=np.float64)
        self._renderer = renderer
        self._owns = False
        self.states = TaskStates()  # the current screen, parsed once for all its candidates
        self._last: tuple[tuple, tuple[float, float]] | None = None  # score and done ask alike
        self.trained_on = 0

    @property
    def renderer(self) -> Renderer:
        if self._renderer is None:
            self._renderer, self._owns = Renderer(), True
        return self._renderer

    # ---- learning ------------------------------------------------------------
    def fit(self, transitions: Iterable[Transition]) -> LearnedReward:
        """Fit both heads on the transitions that carry a task reward (meta['reward'])."""
        ts = [t for t in transitions if "reward" in t.meta and t.screen.html]
        if not ts:
            raise ValueError("no transitions with a task reward (meta['reward']) to learn from")
        renders = self.renderer.render_many([(t.screen.html, t.screen.viewport()) for t in ts])
        x, y_r, y_d = [], [], []
        for t, res in zip(ts, renders):
            boxes = [] if isinstance(res, Exception) else res.boxes
            x.append(features(t.screen, boxes, t.action, t.goal))
            y_r.append(float(t.meta["reward"] > 0))
            y_d.append(float(bool(t.meta.get("done"))))
        x = np.stack(x)
        self._last = None
        self.reward_w = _fit_logistic(x, np.array(y_r))
        self.done_w = _fit_logistic(x, np.array(y_d))
        self.trained_on = len(ts)
        return self

    # ---- using ---------------------------------------------------------------
    def predict(self, screen: Screen, action: Action, goal: str) -> tuple[float, float]:
        """(P(reward > 0), P(done)) for taking `action` on `screen`."""
        if self.reward_w is None:
            raise RuntimeError(
                "this LearnedReward is not fitted: call fit(transitions) or LearnedReward.load(path)"
            )
        key = (screen.html, screen.size, screen.device_scale_factor, action.to_json(), goal)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        try:
            boxes = self.renderer.render(screen.html, screen.viewport()).boxes if screen.html else []
        except RenderError:  # a screen that does not render has no target to read, as in fit()
            boxes = []
        f = features(screen, boxes, action, goal, self.states.of(screen.html))
        sig = lambda w: 1 / (1 + math.exp(-float(f @ w)))  # noqa: E731
        out = (sig(self.reward_w), sig(self.done_w))
        self._last = (key, out)
        return out

    def __call__(self, current: Screen, action: Action, imagined: Prediction, goal: str) -> float:
        """The scorer protocol: P(reward) of taking `action` on `current`. An unfitted model raises
        (RuntimeError): scoring every candidate 0 would look like a verdict."""
        return self.predict(current, action, goal)[0]

    def done(self, current: Screen, action: Action, imagined: Prediction, goal: str) -> bool:
        """The task would end with this action (the done head says so)."""
        return self.predict(current, action, goal)[1] > 0.5

    # ---- files ---------------------------------------------------------------
    def save(self, path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "features": list(FEATURES),
            "reward": self.reward_w.tolist(),
            "done": self.done_w.tolist(),
            "trained_on": self.trained_on,
        }
        return write_whole(path, json.dumps(data, indent=1))

    @classmethod
    def load(cls, path, renderer: Renderer | None = None) -> LearnedReward:
        data = json.loads(Path(path).read_text())
        if data.get("features") != list(FEATURES):
            raise ValueError(
                f"{path}: saved for features {data.get('features')}, this version has {FEATURES}"
            )
        m = cls(data["reward"], data["done"], renderer)
        m.trained_on = data.get("trained_on", 0)
        return m

    def close(self) -> None:
        if self._owns and self._renderer is not None:
            self._renderer.close()
            self._renderer = None
