"""The typed records every stage passes around: Screen, Action, Transition, Prediction.

Coordinates are device pixels of the screenshot, origin top-left, so an action
recorded on a phone and one recorded in a browser mean the same thing.
"""

from __future__ import annotations

import base64
import io
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

# Screen-space unit vector of each direction (y grows downwards), written once with the action ->
# input events mapping (render/interact.py); re-exported.
from render.interact import DIRECTION_VECTORS  # noqa: F401
from render.renderer import read_html  # noqa: F401 - re-exported: the one HTML-file reader

ACTION_TYPES = (
    "tap",
    "long_press",
    "swipe",
    "scroll",
    "type",
    "key",
    "back",
    "home",
    "open_app",
    "wait",
)
DIRECTIONS = ("up", "down", "left", "right")
_ALIASES = {
    "click": "tap",
    "long_click": "long_press",
    "input_text": "type",
    "navigate_back": "back",
    "navigate_home": "home",
    "press_back": "back",
    "press_home": "home",
    "keyboard_enter": "key",
    "enter": "key",
}
_NEEDS_POINT = {"tap", "long_press", "swipe"}


@dataclass(frozen=True)
class Action:
    """One GUI action in a single schema for web and Android.

    `swipe.direction` is the way the finger moves; `scroll.direction` is the way
    the view travels (scroll down shows what is below, so the finger moves up).
    """

    type: str
    x: float | None = None
    y: float | None = None
    direction: str | None = None
    text: str | None = None
    key: str | None = None
    app: str | None = None

    def __post_init__(self):
        t = _ALIASES.get(self.type, self.type)
        object.__setattr__(self, "type", t)
        if t == "key" and self.key is None:
            object.__setattr__(self, "key", "Enter")
        if t not in ACTION_TYPES:
            raise ValueError(f"action type {self.type!r} is not one of {', '.join(ACTION_TYPES)}")
        if t in _NEEDS_POINT and (self.x is None or self.y is None):
            raise ValueError(f"action {t!r} needs x and y")
        for name in ("x", "y"):
            v = getattr(self, name)
            if v is None:
                continue
            # bool is an int subclass: {"x": true} is a mistake, not the coordinate 1
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise ValueError(f"action {name}={v!r} must be a number, not {type(v).__name__}")
            if not np.isfinite(v) or v < 0:
                raise ValueError(f"action {name}={v!r} must be a finite, non-negative number")
            if isinstance(v, np.generic):
                object.__setattr__(self, name, v.item())
        for name in ("direction", "text", "key", "app"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, str):
                raise ValueError(f"action {name}={v!r} must be a string, not {type(v).__name__}")
        if t in ("swipe", "scroll") and self.direction not in DIRECTIONS:
            raise ValueError(f"action {t!r} needs direction in {DIRECTIONS}, got {self.direction!r}")
        if t == "type" and not isinstance(self.text, str):
            raise ValueError("action 'type' needs text")
        if t == "open_app" and not self.app:
            raise ValueError("action 'open_app' needs app")

    def check_within(self, size: tuple[int, int] | None) -> Action:
        """Raise ValueError unless the action's point lies on a screen of `size` (width, height) pixels."""
        if size is None or self.x is None or self.y is None:
            return self
        w, h = size
        if not (self.x <= w and self.y <= h):
            raise ValueError(f"action point ({self.x:g}, {self.y:g}) is outside the {w}x{h} screen")
        return self

    @property
    def finger_direction(self) -> str | None:
        """Which way the finger moves on the glass (what the prompt arrow shows)."""
        if self.type == "swipe":
            return self.direction
        if self.type == "scroll":
            return {"up": "down", "down": "up", "left": "right", "right": "left"}[self.direction]
        return None

    def describe(self) -> str:
        """A one-line English description for the prompt."""
        at = f" at ({self.x:.0f}, {self.y:.0f})" if self.x is not None and self.y is not None else ""
        if self.type == "tap":
            return f"Tap{at}."
        if self.type == "long_press":
            return f"Long press{at}."
        if self.type == "swipe":
            return f"Swipe {self.direction}{at}."
        if self.type == "scroll":
            return f"Scroll {self.direction}{at} (finger moves {self.finger_direction})."
        if self.type == "type":
            return f"Type {self.text!r}{at}."
        if self.type == "key":
            return f"Press the {self.key} key."
        if self.type == "back":
            return "Press the system Back button."
        if self.type == "home":
            return "Press the system Home button."
        if self.type == "open_app":
            return f"Open the app {self.app!r}."
        return "Wait for the screen to update."

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Action:
        if not isinstance(d, dict):
            raise ValueError(f"action must be a JSON object, got {type(d).__name__}")
        d = dict(d)
        t = d.pop("type", None) or d.pop("action_type", None)
        if t is None:
            raise ValueError("action is missing 'type'")
        if "app_name" in d:
            d["app"] = d.pop("app_name")
        unknown = set(d) - {"x", "y", "direction", "text", "key", "app"}
        if unknown:
            raise ValueError(f"action has unknown field(s): {', '.join(sorted(unknown))}")
        return cls(type=t, **d)

    @classmethod
    def from_json(cls, s: str) -> Action:
        try:
            d = json.loads(s)
        except json.JSONDecodeError as e:
            raise ValueError(f"action is not valid JSON: {e}") from e
        return cls.from_dict(d)


def png_bytes(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def png_data_url(image: Image.Image) -> str:
    """How images travel in HTML and in OpenAI-style chat messages."""
    return "data:image/png;base64," + base64.b64encode(png_bytes(image)).decode()


# A screenshot larger than this is refused before it is decoded (a 4K tablet at 2x is ~35 Mpx).
MAX_SCREEN_PIXELS = 40_000_000


def _open_image(src, name: str) -> Image.Image:
    """Decode an image file or bytes; ValueError naming `name` when it is not a usable image."""
    try:
        im = Image.open(src)
        w, h = im.size
        if w * h > MAX_SCREEN_PIXELS:
            raise ValueError(
                f"{name}: image is {w}x{h} = {w * h / 1e6:.0f} Mpx, over the {MAX_SCREEN_PIXELS / 1e6:.0f} Mpx limit"
            )
        return im.convert("RGB")
    except (Image.DecompressionBombError, Image.UnidentifiedImageError) as e:
        raise ValueError(f"{name}: not a readable PNG/JPEG image ({type(e).__name__})") from None
    except OSError as e:  # truncated or corrupt pixel data
        raise ValueError(f"{name}: image data is damaged ({e})") from None


def _to_pil(image) -> Image.Image:
    if isinstance(image, Image.Image):
        return image.convert("RGB")
    if isinstance(image, np.ndarray):
        return Image.fromarray(image.astype(np.uint8)).convert("RGB")
    if isinstance(image, (bytes, bytearray)):
        return _open_image(io.BytesIO(image), "image bytes")
    if isinstance(image, (str, Path)):
        if not Path(image).is_file():
            raise ValueError(f"{image}: no such image file")
        return _open_image(image, str(image))
    if isinstance(image, dict) and image.get("bytes"):
        return _to_pil(image["bytes"])
    raise TypeError(f"cannot make a screen image from {type(image).__name__}")


@dataclass
class Screen:
    """What the agent sees: a screenshot and, when known, the HTML that renders to it."""

    image: Image.Image
    html: str | None = None
    device_scale_factor: float = 1.0
    app: str | None = None

    def __post_init__(self):
        self.image = _to_pil(self.image)

    @property
    def size(self) -> tuple[int, int]:
        return self.image.size

    @property
    def array(self) -> np.ndarray:
        return np.asarray(self.image)

    def png(self) -> bytes:
        return png_bytes(self.image)

    def data_url(self) -> str:
        return png_data_url(self.image)

    def viewport(self):
        from render import Viewport

        return Viewport.for_screen(*self.size, self.device_scale_factor)

    @classmethod
    def from_path(cls, path: str | Path, html_path: str | Path | None = None, **kw) -> Screen:
        html = read_html(html_path) if html_path else None
        return cls(image=path, html=html, **kw)


@dataclass
class Transition:
    """One recorded step: screen, action, the real next screen, and context."""

    screen: Screen
    action: Action
    next_screen: Screen
    goal: str = ""
    app: str = ""
    episode_id: str = ""
    step: int = 0
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Query:
    """One thing to imagine: the action taken on the screen, with the task's goal when known."""

    screen: Screen
    action: Action
    goal: str | None = None
    # True when an earlier stage (e.g. the sim) already carried the action out on `screen`:
    # what is left to predict is the app's own reaction
    applied: bool = False
    # the screen the caller gave, when an earlier stage's result replaced it as `screen` (a
    # backend that looks the recorded screen up, like `memory`, keys on this one)
    origin: Screen | None = None
    # the screens this episode showed before `screen`, oldest first: an agent's real past screens
    # or an imagined rollout's. A step back or to a tab seen before lands on the episode's own
    # state (its notes, its selection), which no other episode's recording holds
    history: tuple[Screen, ...] = ()

    def __post_init__(self):
        if not isinstance(self.screen, Screen):
            raise TypeError(f"screen must be a worldmodel Screen, got {type(self.screen).__name__}")
        if not isinstance(self.action, Action):
            raise TypeError(f"action must be a worldmodel Action, got {type(self.action).__name__}")


@dataclass(frozen=True)
class Completion:
    """What a backend wrote for one query: the raw text (a document or an edit), a note on how it
    was made when there is one to tell (e.g. the sim falling back to copy because the screen had
    no HTML), and, from a model that knows it, its mean log-probability per generated token.

    `settled`: the text is a recording of this very screen and action (memory's exact or
    destination hit), so later stages of a composed model keep it instead of writing over it.
    `known` False: the backend had nothing for this step and gave the screen back as it was
    (memory with no recording like it), which a stage after it tells apart from an answer of
    "nothing changes".

    A backend may return a plain str instead: it stands for `Completion(text)`."""

    text: str
    note: str = ""
    confidence: float | None = None
    settled: bool = False
    known: bool = True

    def __post_init__(self):
        if not isinstance(self.text, str):
            raise TypeError(f"a completion's text is a str, got {type(self.text).__name__}")

    @classmethod
    def of(cls, value: Completion | str) -> Completion:
        """`value` as a Completion (a str is its text); TypeError for anything else."""
        if isinstance(value, Completion):
            return value
        if isinstance(value, str):
            return cls(value)
        raise TypeError(f"a completion is a Completion or a str, got {type(value).__name__}")


@dataclass
class Prediction:
    """The world model's imagined next screen: the HTML it wrote and what that renders to."""

    html: str
    image: Image.Image | None
    completion: str = ""
    render_error: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    repaired: bool = False
    boxes: list = field(default_factory=list)  # laid-out elements of the render (render.Box)
    note: str = ""  # how the backend made it, when it had to say (fallbacks, actions it cannot model)
    edit: str | None = None  # in edit mode: the edit of the current screen that `html` applies
    edit_error: str | None = None  # the edit's lines that could not be applied (first one named)
    # the last stage's mean log-probability per token of what it wrote, where it knows one (hf)
    confidence: float | None = None
    # a stage answered from a recording of this very screen and action; later stages kept it
    settled: bool = False

    @property
    def ok(self) -> bool:
        return self.image is not None

    def as_screen(self, like: Screen) -> Screen:
        """The imagined screen as the next state after `like` (same scale and app): what a
        rollout, a later stage or a planner steps from."""
        return Screen(self.image, html=self.html, device_scale_factor=like.device_scale_factor, app=like.app)


@dataclass(frozen=True)
class BackendSpec:
    """One stage of a model spec (worldmodel/spec.py), parsed: what a backend's `from_spec` gets."""

    kind: str  # one of worldmodel.spec.KINDS
    arg: str = ""  # corpus path, checkpoint path or base URL
    model: str = ""  # the served model's name, for openai

    def __str__(self) -> str:
        if self.kind == "openai":
            return f"openai:{self.arg}#{self.model}"
        return f"{self.kind}:{self.arg}" if self.arg else self.kind
