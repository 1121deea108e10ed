"""Render-aware rewards in trl's shape: `(prompts, completions, **kwargs) -> list[float]`.

The three rewards of one GRPO step share one `SharedRenders`: each completion is extracted and
rendered once, its pixels decoded once, and the reference screenshots decoded once, so R_sem,
R_act and R_format all judge the same pixels for the price of one. A completion that does not
render gets the lowest reward, never an exception.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from render import Renderer, RenderError, RenderResult, Viewport, default_renderer
from render.metrics import (
    LPIPS,
    MetricUnavailable,
    blur_ssim,
    pixels_off,
    ssim,
    ssim_many,
    text_f1,
    to_array,
    visible_text,
)
from worldmodel.dataset import as_action
from worldmodel.edit import apply_lenient, extract_edit
from worldmodel.extract import extract_html, root_size
from worldmodel.prompt import expand_follow
from worldmodel.types import Action


def completion_text(c) -> str:
    """trl passes plain strings, or conversational [{'role': 'assistant', 'content': ...}] lists."""
    if isinstance(c, str):
        return c
    if isinstance(c, list) and c:
        content = c[-1].get("content", "")
        if isinstance(content, list):
            return "".join(p.get("text", "") for p in content if isinstance(p, dict))
        return str(content)
    return ""


def _apply_edit(base: str, completion: str) -> tuple[str, float]:
    """(the edited screen, share of the edit's lines that applied); never raises."""
    try:
        html, done, total = apply_lenient(base, extract_edit(completion))
    except Exception:  # a parser corner case is a malformed edit, not a crash
        return "", 0.0
    return html, (done / total if total else 1.0)


class SharedRenders:
    """The last batch's extracted documents, renders and decoded references, shared by the rewards."""

    def __init__(self, renderer: Renderer | None = None):
        self._renderer = renderer
        self._key = None
        self._value: list[tuple[str, bool, RenderResult | None]] = []
        self._refs: dict[int, np.ndarray] = {}
        self.edit_credit: list[float | None] = []  # per completion: share of its edit that applied

    @property
    def renderer(self) -> Renderer:
        return self._renderer or default_renderer()

    def renders(
        self, completions, width, height, scale, edits_html=None, hints=None
    ) -> list[tuple[str, bool, RenderResult | None]]:
        """(html, repaired, render or None) per completion. Where `edits_html[i]` is a current
        screen's HTML, completion i is an edit of it: applied first (a `follow` line stands for
        `hints[i]`, the hint its prompt showed), and one that does not apply renders nothing
        (every reward then scores it 0)."""
        texts = [completion_text(c) for c in completions]
        bases = list(edits_html) if edits_html is not None else [""] * len(texts)
        if hints is not None:
            texts = [expand_follow(t, h) if b else t for t, h, b in zip(texts, hints, bases)]
        key = (tuple(texts), tuple(width), tuple(height), tuple(scale), tuple(bases))
        if key != self._key:
            docs, self.edit_credit = [], []
            for t, base in zip(texts, bases):
                if base:
                    html, share = _apply_edit(base, t)
                    docs.append((html if share == 1.0 else "", share < 1.0))
                    self.edit_credit.append(share)
                else:
                    docs.append(extract_html(t))
                    self.edit_credit.append(None)
            # an edit that did not apply has nothing to render (its rewards are 0)
            todo = [i for i, ((_, failed), base) in enumerate(zip(docs, bases)) if not (base and failed)]
            items = [(docs[i][0], Viewport(int(width[i]), int(height[i]), float(scale[i]))) for i in todo]
            results: list = [None] * len(docs)
            for i, res in zip(todo, self.renderer.render_many(items, boxes=False)):  # pixels only
                results[i] = None if isinstance(res, RenderError) else res
            self._value = [(h, r, res) for (h, r), res in zip(docs, results)]
            self._key, self._refs = key, {}
        return self._value

    def ref(self, i: int, value) -> np.ndarray:
        """Reference image i of the current batch, decoded once."""
        if i not in self._refs:
            self._refs[i] = to_array(value)
        return self._refs[i]


class _RenderedReward:
    def __init__(self, renderer: Renderer | None = None, shared: SharedRenders | None = None):
        self.shared = shared or SharedRenders(renderer)

    @property
    def renderer(self) -> Renderer:
        return self.shared.renderer

    def _render_all(
        self, completions, width, height, scale, kw
    ) -> list[tuple[str, bool, RenderResult | None]]:
        return self.shared.renders(completions, width, height, scale, kw.get("edits_html"), kw.get("hint"))


class SemanticReward(_RenderedReward):
    """R_sem: visual fidelity of the rendered completion to the real next screenshot, in [0, 1]."""

    __name__ = "r_sem"

    def __init__(
        self,
        renderer: Renderer | None = None,
        ssim_share: float = 1.0,
        lpips: LPIPS | None = None,
        shared: SharedRenders | None = None,
        metric: str = "ssim",
    ):
        super().__init__(renderer, shared)
        if metric not in SEM_METRICS:
            raise ValueError(f"R_sem metric {metric!r} is not one of {', '.join(SEM_METRICS)}")
        self.metric = SEM_METRICS[metric]
        self.ssim_share = ssim_share
        self.lpips = lpips
        if ssim_share < 1.0 and lpips is None:
            try:
                self.lpips = LPIPS()
            except MetricUnavailable as e:
                raise MetricUnavailable(f"R_sem asks for an LPIPS share of {1 - ssim_share:.2f}: {e}") from e

    def __call__(self, prompts, completions, next_screen, width, height, scale, **kw) -> list[float]:
        rendered = self._render_all(completions, width, height, scale, kw)
        ok = [i for i, (_, _, res) in enumerate(rendered) if res is not None]
        refs = {i: self.shared.ref(2 * i, next_screen[i]) for i in ok}
        scores = dict(zip(ok, ssim_many([(rendered[i][2].image, refs[i]) for i in ok], metric=self.metric)))
        out = []
        for i in range(len(rendered)):
            if i not in scores:
                out.append(0.0)
                continue
            v = self.ssim_share * max(0.0, scores[i])
            if self.lpips is not None and self.ssim_share < 1.0:
                v += (1 - self.ssim_share) * max(0.0, 1.0 - self.lpips(rendered[i][2].image, refs[i]))
            out.append(float(v))
        return out


SEM_METRICS = {"ssim": ssim, "blur_ssim": blur_ssim}


def _as_action(a) -> Action | None:
    """The action as trl hands a column over (worldmodel.dataset.as_action), None when it is not
    one: a reward never raises."""
    try:
        return as_action(a)
    except (ValueError, TypeError):
        return None


def _changed(a: np.ndarray, b: np.ndarray, box=None) -> float:
    """Share of pixels (in box) that differ noticeably between two screens (render.metrics.pixels_off)."""
    if a.shape != b.shape:
        b = np.asarray(Image.fromarray(b).resize((a.shape[1], a.shape[0])))
    if box is not None:
        x0, y0, x1, y1 = box
        a, b = a[y0:y1, x0:x1], b[y0:y1, x0:x1]
    return pixels_off(a, b) if a.size else 0.0


class ActionReward(_RenderedReward):
    """R_act: the imagined screen changed where, and as much as, the real one did; typed text shows up.

    Around the touched point (a window a fifth of the screen wide) and over the
    whole screen, the fraction of pixels that changed from the current screen is
    compared between the real next screen and the render: 1 when they agree.
    """

    __name__ = "r_act"

    def __call__(
        self, prompts, completions, screen, next_screen, action, width, height, scale, **kw
    ) -> list[float]:
        out = []
        rendered = self._render_all(completions, width, height, scale, kw)
        for i, ((html, _, res), cur, nxt, a) in enumerate(zip(rendered, screen, next_screen, action)):
            if res is None:
                out.append(0.0)
                continue
            act = _as_action(a)  # None: the whole screen is scored, no window around a point
            cur, nxt, pred = self.shared.ref(2 * i + 1, cur), self.shared.ref(2 * i, nxt), res.image
            if pred.shape != cur.shape:
                pred = np.asarray(Image.fromarray(pred).resize((cur.shape[1], cur.shape[0])))
            parts = [1.0 - abs(_changed(cur, nxt) - _changed(cur, pred))]
            if act is not None and act.x is not None and act.y is not None:
                h, w = cur.shape[:2]
                rx, ry = max(8, w // 10), max(8, h // 10)
                box = (
                    max(0, int(act.x) - rx),
                    max(0, int(act.y) - ry),
                    min(w, int(act.x) + rx),
                    min(h, int(act.y) + ry),
                )
                parts.append(1.0 - abs(_changed(cur, nxt, box) - _changed(cur, pred, box)))
            if act is not None and act.type == "type" and act.text:
                want = visible_text(f"<p>{act.text}</p>")
                have = set(visible_text(html))
                parts.append(sum(w in have for w in want) / max(1, len(want)))
            out.append(float(np.mean(parts)))
        return out


class TextReward(_RenderedReward):
    """R_text: the imagined screen says what the real one says (bag-of-words F1 of the visible text
    against the real next screen's HTML). Pixels barely punish a wrong word or a blanked label, and
    blanking text that moves can even raise SSIM; this reward does. None (left out of trl's sum)
    where the next HTML was not recorded."""

    __name__ = "r_text"

    def __call__(self, prompts, completions, width, height, scale, **kw) -> list[float | None]:
        rendered = self._render_all(completions, width, height, scale, kw)
        nexts = kw.get("next_html") or [""] * len(rendered)
        return [
            None if not ref else (text_f1(html, ref) if res is not None else 0.0)
            for (html, _, res), ref in zip(rendered, nexts)
        ]


# The most R_format gives an edit that does not apply as a whole (R_sem and R_act give it 0).
EDIT_PARTIAL = 0.5


class FormatReward(_RenderedReward):
    """R_format: one renderable HTML document whose root is sized to the screen, needing no repair;
    for an edit target, an edit that parses and applies to the current screen and renders."""

    __name__ = "r_format"

    def __call__(self, prompts, completions, width, height, scale, **kw) -> list[float]:
        out = []
        rendered = self._render_all(completions, width, height, scale, kw)
        for (html, repaired, res), w, h, credit in zip(rendered, width, height, self.shared.edit_credit):
            if credit is not None and credit < 1.0:
                # an edit that does not apply: up to EDIT_PARTIAL for the share of its lines that
                # would, so a group of not-yet-right edits still has a direction to learn
                out.append(EDIT_PARTIAL * credit)
                continue
            if res is None:
                out.append(0.0)
                continue
            if credit is not None:
                out.append(1.0)
                continue
            size = root_size(html)
            sized = size is not None and abs(size[0] - w) <= 2 and abs(size[1] - h) <= 2
            out.append(0.4 + 0.3 * (not repaired) + 0.3 * sized)
        return out


def reward_functions(
    renderer: Renderer | None = None, ssim_share: float = 1.0, sem_metric: str = "ssim", text: bool = False
):
    """R_sem, R_act, R_format (and R_text when asked) sharing one batch of renders."""
    shared = SharedRenders(renderer)
    out = [
        SemanticReward(ssim_share=ssim_share, shared=shared, metric=sem_metric),
        ActionReward(shared=shared),
        FormatReward(shared=shared),
    ]
    return out + [TextReward(shared=shared)] if text else out
