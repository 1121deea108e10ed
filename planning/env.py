"""ImaginedEnv: a gymnasium environment whose dynamics are the world model.

reset() starts from a recorded screen and goal; step() applies an action by
imagining the next screen. An offline RL agent can practise here without a
device or a browser.
"""

from __future__ import annotations

import string
from collections.abc import Callable

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from PIL import Image

from render import Renderer
from worldmodel.model import WorldModel
from worldmodel.types import ACTION_TYPES, DIRECTIONS, Action, Query, Screen, Transition

from .scorers import goal_coverage

CHARSET = string.ascii_letters + string.digits + string.punctuation + " "
# (imagined html, goal) -> (reward, terminated)
TaskChecker = Callable[[str, str], tuple[float, bool]]


def goal_text_checker(html: str, goal: str, threshold: float = 1.0) -> tuple[float, bool]:
    """Reward is the share of the goal's terms on the imagined screen; done when all are there."""
    r = goal_coverage(html, goal)
    if r is None:
        return 0.0, False
    return r, r >= threshold


class ImaginedEnv(gym.Env):
    metadata = {"render_modes": ["rgb_array"]}

    def __init__(
        self,
        starts: list[Transition],
        world_model: str | WorldModel = "retrieval",
        checker: TaskChecker = goal_text_checker,
        obs_size: tuple[int, int] = (128, 128),
        max_steps: int = 5,
        renderer: Renderer | None = None,
        render_mode: str | None = None,
        mode: str | None = None,
    ):
        if not starts:
            raise ValueError("ImaginedEnv needs at least one start transition")
        self.starts = starts
        self.world_model = WorldModel.load(world_model, renderer)
        self.checker, self.obs_size, self.max_steps = checker, obs_size, max_steps
        self.renderer, self.render_mode = renderer, render_mode
        self.mode = mode  # the prediction mode: document, edit, auto; None: the world model's own
        w, h = obs_size
        self.observation_space = spaces.Dict(
            {
                "image": spaces.Box(0, 255, (h, w, 3), np.uint8),
                "goal": spaces.Text(max_length=256, charset=CHARSET),
            }
        )
        self.action_space = spaces.Dict(
            {
                "type": spaces.Discrete(len(ACTION_TYPES)),
                "point": spaces.Box(0.0, 1.0, (2,), np.float32),  # fraction of screen width, height
                "direction": spaces.Discrete(len(DIRECTIONS)),
                "text": spaces.Text(max_length=32, charset=CHARSET),
            }
        )
        self.screen: Screen | None = None
        self.history: list[Screen] = []
        self.goal = ""
        self.steps = 0

    def _obs(self) -> dict:
        img = np.asarray(self.screen.image.resize(self.obs_size, Image.BILINEAR), dtype=np.uint8)
        goal = "".join(c for c in self.goal if c in CHARSET)[:256]
        return {"image": img, "goal": goal}

    def to_action(self, a: dict) -> Action:
        """The Dict action as a world-model Action (points scaled to the current screen)."""
        t = ACTION_TYPES[int(a["type"])]
        w, h = self.screen.size
        x, y = float(a["point"][0]) * (w - 1), float(a["point"][1]) * (h - 1)
        d = DIRECTIONS[int(a["direction"])]
        text = str(a.get("text", ""))
        kw = {
            "tap": dict(x=x, y=y),
            "long_press": dict(x=x, y=y),
            "swipe": dict(x=x, y=y, direction=d),
            "scroll": dict(x=x, y=y, direction=d),
            "type": dict(x=x, y=y, text=text),
            "key": dict(key="Enter"),
            "open_app": dict(app=text or "Notes"),
        }.get(t, {})
        return Action(t, **kw)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        i = (
            int(self.np_random.integers(len(self.starts)))
            if not (options and "index" in options)
            else options["index"]
        )
        t = self.starts[i]
        self.screen, self.goal, self.steps = t.screen, t.goal, 0
        self.history = []  # the screens this episode showed before the current one
        return self._obs(), {"start": i, "app": t.app}

    def step(self, action):
        act = action if isinstance(action, Action) else self.to_action(action)
        pred = self.world_model.predict_many(
            [Query(self.screen, act, self.goal, history=tuple(self.history))], self.mode
        )[0]
        self.steps += 1
        if pred.ok:
            self.history.append(self.screen)
            self.screen = Screen(
                pred.image.resize(self.screen.size),
                html=pred.html,
                device_scale_factor=self.screen.device_scale_factor,
            )
            reward, terminated = self.checker(pred.html, self.goal)
        else:
            reward, terminated = 0.0, False
        truncated = self.steps >= self.max_steps and not terminated
        info = {"action": act.to_json(), "render_error": pred.render_error, "html": pred.html}
        return self._obs(), float(reward), bool(terminated), bool(truncated), info

    def render(self):
        return np.asarray(self.screen.image) if self.screen is not None else None
