"""The `sim` world model: the browser's own physics on the current screen's HTML.

Load the screen's HTML in the sandbox, perform the action with real input events, capture the
result with the corpus' capture (render/interact.py). What a browser does with no scripts, it
gets right by construction: a tap checks a checkbox, picks a radio, focuses a field or follows an
in-page anchor; typed text lands in the field; Enter, Tab, arrows and Backspace act as keys do;
scroll and swipe move the box under the finger. What an app's scripts would do (a reply after
Submit, a new page after a link) it cannot know: the screen stays as it was and the Prediction's
note says why. Compose it with a learned model (`sim+MODEL`) for those reactions.

A screen without HTML has nothing to act on: the sim then copies the screenshot and says so.
"""

from __future__ import annotations

from render import Renderer, RenderError

from ..types import DIRECTION_VECTORS, Action, Completion, Query
from .copy import CopyBackend

# How far the view travels, in CSS pixels: what the recorder's wheel and drag move a real page.
SCROLL_PX = 300
SWIPE_PX = 150


def action_ops(action: Action, scale: float, width: int, height: int) -> tuple[list[tuple], str]:
    """The input operations (CSS pixels) that carry out `action`, and a note when it has none."""
    x = None if action.x is None else action.x / scale
    y = None if action.y is None else action.y / scale
    t = action.type
    if t == "tap":
        return [("click", x, y)], ""
    if t == "long_press":
        return [("hover", x, y)], "a long press has no effect a browser makes without the app's scripts"
    if t in ("scroll", "swipe"):
        dx, dy = DIRECTION_VECTORS[action.finger_direction]
        dist = SCROLL_PX if t == "scroll" else SWIPE_PX
        cx = width / 2 if x is None else x
        cy = height / 2 if y is None else y
        return [("scroll", cx, cy, -dx * dist, -dy * dist)], ""  # the view travels against the finger
    if t == "type":
        ops = [("click", x, y)] if x is not None and y is not None else []
        return ops + [("type", action.text or "")], ""
    if t == "key":
        return [("key", action.key or "Enter")], ""
    return [], f"{t}: the sim leaves the page as it is (only the app or the system could change it)"


class SimBackend:
    """Browser physics as a backend: one concurrent batch of interactions per call."""

    name = "sim"
    OPTIONS = ("timeout_s",)

    def __init__(self, renderer: Renderer | None = None, timeout_s: float = 10.0):
        self._renderer = renderer
        self._owns = False
        self.timeout_s = timeout_s
        self._copy = CopyBackend()

    @classmethod
    def from_spec(cls, spec=None, timeout_s: float = 10.0) -> SimBackend:
        return cls(timeout_s=timeout_s)

    def use_renderer(self, renderer: Renderer) -> None:
        """Act in this renderer's browser (a WorldModel hands over its own)."""
        if self._renderer is None:
            self._renderer = renderer

    @property
    def renderer(self) -> Renderer:
        if self._renderer is None:
            self._renderer, self._owns = Renderer(timeout_s=self.timeout_s), True
        return self._renderer

    def complete(self, queries: list[Query]) -> list[str]:
        out: list[Completion | None] = [None] * len(queries)
        jobs, where = [], []
        for i, q in enumerate(queries):
            if not q.screen.html:
                text = self._copy.complete([q])[0]
                out[i] = Completion(text, "no current HTML to act on: copied the screenshot")
                continue
            vp = q.screen.viewport()
            ops, note = action_ops(q.action, vp.device_scale_factor, vp.width, vp.height)
            if not ops:
                out[i] = Completion(q.screen.html, note)
                continue
            jobs.append((q.screen.html, vp, ops))
            where.append((i, note))
        if jobs:
            for (i, note), res in zip(where, self.renderer.interact_many(jobs)):
                q = queries[i]
                if isinstance(res, RenderError):
                    out[i] = Completion(q.screen.html, f"could not act on the page ({res}): screen kept")
                else:
                    out[i] = Completion(res.html, "; ".join([n for n in [note, *res.notes] if n]))
        return out  # type: ignore[return-value]

    def close(self) -> None:
        if self._owns and self._renderer is not None:
            self._renderer.close()
            self._renderer = None
