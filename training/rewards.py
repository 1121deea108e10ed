"""Render-aware rewards in trl's shape: `(prompts, completions, **kwargs) -> list[float | None]`.

The rewards of one GRPO step share one `SharedRenders`: each completion is extracted and
rendered once, its pixels decoded once, and the reference screenshots decoded once, so R_sem,
R_act, R_text and R_format all judge the same pixels for the price of one. A completion that
does not render gets the lowest reward, never an exception.

Each reward is scored against what it had to beat on its own transition, with the same
functions the evaluation reports (render/metrics.py): raw SSIM paid a blank page 0.73 and the
unchanged screen 0.82 of a perfect 1.0 on the test split, so a group's samples all scored
alike and GRPO had nothing to rank (benchmarks/RESULTS.md, tenth round). R_sem and R_text are
`normalised_gain`s (1 perfect, 0 the screen kept, -1 as bad as a blank page); R_act pays the
pixels changed where and as the real transition changed them and charges those changed
otherwise (`change_gain`: 1 the real change, 0 the screen kept, -1 all wrong).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from render import Renderer, RenderError, RenderResult, Viewport, default_renderer
from render.metrics import (
    LPIPS,
    MetricUnavailable,
    blank_like,
    blur_ssim,
    change_gain,
    content_f1,
    normalised_gain,
    ssim,
    ssim_many,
    to_array,
)
from worldmodel.edit import apply_lenient, extract_edit
from worldmodel.extract import extract_html, root_size
from worldmodel.prompt import expand_follow


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


# Most (screen, next screen) baselines SharedRenders keeps before it starts over.
BASELINE_CACHE = 4096


def _digest(value) -> int:
    """A key for an image column's cell: its bytes' hash (PNG bytes or a datasets cell), else id."""
    if isinstance(value, dict):
        value = value.get("bytes")
    if isinstance(value, (bytes, bytearray)):
        return hash(bytes(value))
    if isinstance(value, np.ndarray):
        return hash(value.tobytes())
    return id(value)


class SharedRenders:
    """The last batch's extracted documents, renders and decoded references, shared by the rewards."""

    def __init__(self, renderer: Renderer | None = None):
        self._renderer = renderer
        self._key = None
        self._value: list[tuple[str, bool, RenderResult | None]] = []
        self._refs: dict[int, np.ndarray] = {}
        self._baselines: dict[tuple, tuple[float, float]] = {}
        self._content: dict[tuple, tuple[float, float]] = {}
        self.edit_credit: list[float | None] = []  # per completion: share of its edit that applied
        self.rendered = 0  # documents sent to the renderer so far

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
            self.rendered += len(items)
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

    def baselines(self, i: int, screen, next_screen, metric=ssim) -> tuple[float, float]:
        """(copy, blank): `metric` of the current screen and of a white page against the next
        screen of completion i. A group's completions share their prompt's screens, so each pair
        is computed once (kept across batches by the screens' bytes, up to BASELINE_CACHE)."""
        key = (_digest(screen), _digest(next_screen), getattr(metric, "__name__", ""))
        got = self._baselines.get(key)
        if got is None:
            nxt = self.ref(2 * i, next_screen)
            cur = self.ref(2 * i + 1, screen)
            got = tuple(ssim_many([(cur, nxt), (blank_like(nxt), nxt)], metric=metric))
            if len(self._baselines) >= BASELINE_CACHE:
                self._baselines.clear()
            self._baselines[key] = got
        return got

    def content_baselines(self, cur_html: str | None, next_html: str) -> tuple[float, float]:
        """(copy, blank) of content_f1 against `next_html`; the copy is the blank where the
        current HTML is not known."""
        key = (hash(cur_html), hash(next_html))
        got = self._content.get(key)
        if got is None:
            blank = content_f1("", next_html)
            got = (content_f1(cur_html, next_html) if cur_html else blank, blank)
            if len(self._content) >= BASELINE_CACHE:
                self._content.clear()
            self._content[key] = got
        return got


def _never_raises(call):
    """A reward that fails on a batch (a column it needs missing or unreadable) answers None for
    each completion, which trl leaves out of its sum, and says why once; GRPO goes on."""

    @functools.wraps(call)
    def safe(self, prompts, completions, *args, **kw):
        try:
            return call(self, prompts, completions, *args, **kw)
        except Exception as e:  # a reward never raises (trl's contract, the project's rule)
            if not getattr(self, "_warned", False):
                self._warned = True
                warnings.warn(
                    f"{self.__name__} left out of this batch: {type(e).__name__}: {e}", stacklevel=2
                )
            return [None] * len(completions)

    return safe


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
    """R_sem: visual fidelity of the rendered completion to the real next screenshot, as its
    normalised gain over keeping the current screen (`screen`), in [-1, 1]; with
    `normalised=False` (or no `screen` column) the raw score in [0, 1]."""

    __name__ = "r_sem"

    def __init__(
        self,
        renderer: Renderer | None = None,
        ssim_share: float = 1.0,
        lpips: LPIPS | None = None,
        shared: SharedRenders | None = None,
        metric: str = "ssim",
        normalised: bool = True,
    ):
        super().__init__(renderer, shared)
        self.normalised = normalised
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

    @_never_raises
    def __call__(
        self, prompts, completions, next_screen, width, height, scale, screen=None, **kw
    ) -> list[float]:
        rendered = self._render_all(completions, width, height, scale, kw)
        ok = [i for i, (_, _, res) in enumerate(rendered) if res is not None]
        refs = {i: self.shared.ref(2 * i, next_screen[i]) for i in ok}
        scores = dict(zip(ok, ssim_many([(rendered[i][2].image, refs[i]) for i in ok], metric=self.metric)))
        out = []
        for i in range(len(rendered)):
            if i not in scores:
                out.append(-1.0 if self.normalised and screen is not None else 0.0)
                continue
            v = self.ssim_share * max(0.0, scores[i])
            if self.lpips is not None and self.ssim_share < 1.0:
                v += (1 - self.ssim_share) * max(0.0, 1.0 - self.lpips(rendered[i][2].image, refs[i]))
            if self.normalised and screen is not None:
                copy, blank = self.shared.baselines(i, screen[i], next_screen[i], self.metric)
                v = normalised_gain(v, copy, blank)
            out.append(float(v))
        return out


SEM_METRICS = {"ssim": ssim, "blur_ssim": blur_ssim}


class ActionReward(_RenderedReward):
    """R_act: the imagined screen changed where, and as, the real one did (render.metrics.change_gain
    of the current screen, the render and the real next screen), in [-1, 1].

    Keeping the screen scores 0; a change drawn where and as the real one is pays, a change
    anywhere else or drawn otherwise costs, up to -1 for one that is all wrong (and for a
    completion that does not render). None (left out of trl's sum) where the real transition
    changed no pixel: there is no change to land, and R_sem already pays for leaving the screen
    alone. The older rule (the share of changed pixels near the tap agreeing) paid the unchanged
    screen most of its maximum."""

    __name__ = "r_act"

    @_never_raises
    def __call__(
        self, prompts, completions, screen, next_screen, width, height, scale, **kw
    ) -> list[float | None]:
        out: list[float | None] = []
        rendered = self._render_all(completions, width, height, scale, kw)
        for i, ((_, _, res), cur, nxt) in enumerate(zip(rendered, screen, next_screen)):
            try:
                cur, nxt = self.shared.ref(2 * i + 1, cur), self.shared.ref(2 * i, nxt)
                if change_gain(cur, cur, nxt) is None:
                    out.append(None)
                    continue
                out.append(-1.0 if res is None else float(change_gain(cur, res.image, nxt) or 0.0))
            except (TypeError, ValueError, OSError):  # an unreadable screenshot: nothing to judge
                out.append(None)
        return out


class TextReward(_RenderedReward):
    """R_text: the imagined screen says and holds what the real one does (render.metrics.content_f1:
    the visible words' F1 and the elements' F1 against the real next HTML), as its normalised
    gain over the current screen's HTML (0 keeping it, -1 a blank page, 1 perfect). Pixels barely
    punish a wrong word or a blanked label, and blanking text that moves can even raise SSIM;
    this reward does. None (left out of trl's sum) where the next HTML was not recorded."""

    __name__ = "r_text"

    @_never_raises
    def __call__(self, prompts, completions, width, height, scale, **kw) -> list[float | None]:
        rendered = self._render_all(completions, width, height, scale, kw)
        nexts = kw.get("next_html") or [""] * len(rendered)
        curs = kw.get("edits_html") or [""] * len(rendered)
        shown = kw.get("screen_html") or [""] * len(rendered)
        out: list[float | None] = []
        for (html, _, res), ref, cur, seen in zip(rendered, nexts, curs, shown):
            if not ref:
                out.append(None)
                continue
            copy, blank = self.shared.content_baselines(cur or seen, ref)
            score = content_f1(html, ref) if res is not None else blank
            out.append(-1.0 if res is None else normalised_gain(score, copy, blank))
        return out


# The most R_format gives an edit that does not apply as a whole (R_sem and R_act give it 0).
EDIT_PARTIAL = 0.5


class FormatReward(_RenderedReward):
    """R_format: one renderable HTML document whose root is sized to the screen, needing no repair;
    for an edit target, an edit that parses and applies to the current screen and renders."""

    __name__ = "r_format"

    @_never_raises
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
