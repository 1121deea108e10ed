"""Render-aware rewards in trl's shape: `(prompts, completions, **kwargs) -> list[float | None]`.

The rewards of one GRPO step judge one `RenderBatch`, built once: each completion extracted (an
edit applied to its screen first) and rendered once, and each prompt's screenshots decoded once,
so R_sem, R_act, R_text and R_format all judge the same pixels for the price of one. The batch
is a frozen value passed to each reward, never state a reward leaves for the next: GRPO's
trainer (training/train.py) builds it from the step's columns and hands it to every reward as
one more column (`render_batch`); a reward called without one (trl's own trainer, a script)
builds its own from the columns. `reward.score(batch)` is the reward itself. A completion that
does not render gets the lowest reward, never an exception.

Each reward is scored against what it had to beat on its own transition, with the rules the
evaluation reports (worldmodel/score.py): raw SSIM paid a blank page 0.73 and the unchanged
screen 0.82 of a perfect 1.0 on the test split, so a group's samples all scored alike and GRPO
had nothing to rank (benchmarks/log/). R_sem and R_text are normalised gains (1 perfect, 0 the
screen kept, -1 as bad as a blank page); R_act pays the pixels changed where and as the real
transition changed them and charges those changed otherwise (1 the real change, 0 the screen
kept, -1 all wrong).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from render import Renderer, RenderError, RenderResult, Viewport, default_renderer
from render.metrics import LPIPS, MetricUnavailable, blur_ssim, ssim, to_array
from worldmodel.edit import apply_lenient, extract_edit
from worldmodel.extract import extract_html, root_size
from worldmodel.prompt import expand_follow
from worldmodel.score import (
    change_score,
    changes,
    content_baselines,
    content_gain,
    pixel_baselines,
    pixel_scores,
    sem_gain,
)


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


def _digest(value) -> int:
    """A key for an image column's cell: its bytes' hash (PNG bytes or a datasets cell), else id."""
    if isinstance(value, dict):
        value = value.get("bytes")
    if isinstance(value, (bytes, bytearray)):
        return hash(bytes(value))
    if isinstance(value, np.ndarray):
        return hash(value.tobytes())
    return id(value)


@dataclass(frozen=True)
class Target:
    """One prompt's side of a batch (its group of completions shares it): the screenshots its
    completions are judged against, decoded once, the HTML and the screen's size."""

    screen: np.ndarray | None  # the current screenshot (None: no `screen` column, or unreadable)
    next_screen: np.ndarray | None  # the real next screenshot (None: no column, or unreadable)
    screen_error: str  # why a `screen` cell could not be read ("" where it could, or none given)
    next_error: str
    next_html: str  # the real next HTML ("" where it was not recorded)
    kept_html: str  # what keeping the screen says: the HTML an edit applies to, else the one shown
    width: float
    height: float
    scale: float
    changes: bool | None  # the real transition changed some pixel (None: a screenshot missing)


@dataclass(frozen=True)
class Rendered:
    """One completion as the rewards see it."""

    html: str  # the document it stands for: extracted, or its edit applied ("" where that failed)
    repaired: bool  # extracting it needed a repair, or its edit did not apply in full
    render: RenderResult | None  # None: it did not render (or, an edit, did not apply)
    edit_credit: float | None  # an edit: the share of its lines that applied; None: a document
    target: Target


@dataclass(frozen=True)
class RenderBatch:
    """One GRPO step's completions, rendered, and what each is judged against."""

    completions: tuple[Rendered, ...]
    columns: frozenset[str]  # the screenshot columns it was built with ("screen", "next_screen")

    def __len__(self) -> int:
        return len(self.completions)

    def __iter__(self):
        return iter(self.completions)

    def targets(self) -> dict[int, Target]:
        """Each distinct Target once, by id (a group's completions share theirs)."""
        return {id(c.target): c.target for c in self.completions}


def _decode(cell, cache: dict) -> tuple[np.ndarray | None, str]:
    """(the image, "") or (None, why it cannot be read); each distinct cell decoded once."""
    key = _digest(cell)
    if key not in cache:
        try:
            cache[key] = (to_array(cell), "")
        except Exception as e:  # an unreadable screenshot: the rewards that need it say so
            cache[key] = (None, f"{type(e).__name__}: {e}")
    return cache[key]


class RenderBatches:
    """Builds each step's RenderBatch with one renderer (this process' own Chromium), and counts
    the documents it sent to it (training/train.py's RankLog reports the count)."""

    def __init__(self, renderer: Renderer | None = None):
        self._renderer = renderer
        self.rendered = 0

    @property
    def renderer(self) -> Renderer:
        return self._renderer or default_renderer()

    def build(
        self,
        completions,
        width,
        height,
        scale,
        screen=None,
        next_screen=None,
        edits_html=None,
        hint=None,
        next_html=None,
        screen_html=None,
        **_,
    ) -> RenderBatch:
        """The batch from trl's columns (one cell per completion). Where `edits_html[i]` is a
        current screen's HTML, completion i is an edit of it: applied first (a `follow` line
        stands for `hint[i]`, the hint its prompt showed), and one that does not apply in full
        renders nothing (every reward then scores it as a failed render)."""
        n = len(completions)
        docs = self._documents(completions, edits_html, hint)
        targets = self._targets(
            n, width, height, scale, screen, next_screen, edits_html, next_html, screen_html
        )
        # an edit that did not apply has nothing to render
        todo = [i for i, (_, _, credit) in enumerate(docs) if credit is None or credit == 1.0]
        items = [
            (docs[i][0], Viewport(int(targets[i].width), int(targets[i].height), float(targets[i].scale)))
            for i in todo
        ]
        renders: list = [None] * n
        self.rendered += len(items)
        for i, res in zip(todo, self.renderer.render_many(items, boxes=False)):  # pixels only
            renders[i] = None if isinstance(res, RenderError) else res
        given = frozenset(k for k, v in (("screen", screen), ("next_screen", next_screen)) if v is not None)
        return RenderBatch(
            tuple(Rendered(h, r, res, c, t) for (h, r, c), res, t in zip(docs, renders, targets)), given
        )

    @staticmethod
    def _documents(completions, edits_html, hints) -> list[tuple[str, bool, float | None]]:
        """(html, repaired, edit credit) per completion."""
        texts = [completion_text(c) for c in completions]
        bases = list(edits_html) if edits_html is not None else [""] * len(texts)
        if hints is not None:
            texts = [expand_follow(t, h) if b else t for t, h, b in zip(texts, hints, bases)]
        out = []
        for t, base in zip(texts, bases):
            if base:
                html, share = _apply_edit(base, t)
                out.append((html if share == 1.0 else "", share < 1.0, share))
            else:
                out.append((*extract_html(t), None))
        return out

    @staticmethod
    def _targets(
        n, width, height, scale, screen, next_screen, edits_html, next_html, screen_html
    ) -> list[Target]:
        """Per completion its prompt's Target, one object per distinct prompt."""
        images: dict = {}
        made: dict[tuple, Target] = {}
        out = []
        for i in range(n):
            cur_cell = None if screen is None else screen[i]
            nxt_cell = None if next_screen is None else next_screen[i]
            nxt_html = (next_html[i] if next_html else "") or ""
            kept = ((edits_html[i] if edits_html else "") or (screen_html[i] if screen_html else "")) or ""
            key = (_digest(cur_cell), _digest(nxt_cell), nxt_html, kept, width[i], height[i], scale[i])
            if key not in made:
                cur, cur_err = _decode(cur_cell, images) if screen is not None else (None, "")
                nxt, nxt_err = _decode(nxt_cell, images) if next_screen is not None else (None, "")
                moved = _changes(cur, nxt)
                made[key] = Target(
                    cur, nxt, cur_err, nxt_err, nxt_html, kept, width[i], height[i], scale[i], moved
                )
            out.append(made[key])
        return out

    def renders(self, completions, width, height, scale, edits_html=None, hints=None) -> list[tuple]:
        """(html, repaired, render or None) per completion, freshly built: for callers of the
        former SharedRenders.renders (benchmarks/rl_vs_sft.py); new code uses `build`."""
        got = self.build(completions, width, height, scale, edits_html=edits_html, hint=hints)
        return [(c.html, c.repaired, c.render) for c in got]


def _changes(screen, next_screen) -> bool | None:
    if screen is None or next_screen is None:
        return None
    try:
        return changes(screen, next_screen)
    except (TypeError, ValueError, OSError):  # screenshots that cannot be compared: nothing to judge
        return None


# trl hands each dataset column to the rewards as a list, one cell per completion: the step's
# batch rides along as one more column, every cell the same RenderBatch.
RENDER_BATCH = "render_batch"


def with_render_batch(batches: RenderBatches | None, inputs: list[dict], completions) -> list[dict]:
    """trl's rows for one step (GRPOTrainer._calculate_rewards' `inputs`) with the step's
    RenderBatch, built once by `batches`, as one more column every reward reads. Where it cannot
    be built (a column missing), the rows as they are: each reward then tries, and says why not."""
    if batches is None or not inputs:
        return inputs
    columns = {k: [x.get(k) for x in inputs] for k in inputs[0] if k not in ("prompt", "completion")}
    try:
        batch = batches.build(completions, **columns)
    except Exception:
        return inputs
    return [{**x, RENDER_BATCH: batch} for x in inputs]


class _Reward:
    """A reward: `score(batch)` judges a RenderBatch; calling it as trl does judges the batch the
    trainer passed, or one built here from the columns. Never raises: a batch it cannot judge
    (a column it needs missing or unreadable) gets None for each completion, which trl leaves out
    of its sum, and it says why once; GRPO goes on."""

    __name__ = "reward"

    def __init__(
        self,
        renderer: Renderer | None = None,
        batches: RenderBatches | None = None,
        shared: RenderBatches | None = None,  # the former name of `batches`
    ):
        self.batches = batches or shared or RenderBatches(renderer)
        self._warned = False

    @property
    def renderer(self) -> Renderer:
        return self.batches.renderer

    @property
    def shared(self) -> RenderBatches:
        """The former name of `batches`."""
        return self.batches

    def __call__(self, prompts, completions, render_batch=None, **columns) -> list[float | None]:
        try:
            batch = render_batch[0] if render_batch else self.batches.build(completions, **columns)
        except Exception as e:  # a reward never raises (trl's contract, the project's rule)
            return self._left_out(e, len(completions))
        return self.score(batch)

    def score(self, batch: RenderBatch) -> list[float | None]:
        try:
            return self._score(batch)
        except Exception as e:
            return self._left_out(e, len(batch))

    def _score(self, batch: RenderBatch) -> list[float | None]:
        raise NotImplementedError

    def _left_out(self, e: Exception, n: int) -> list[None]:
        if not self._warned:
            self._warned = True
            warnings.warn(f"{self.__name__} left out of this batch: {type(e).__name__}: {e}", stacklevel=3)
        return [None] * n


def _needs(batch: RenderBatch, *columns: str) -> None:
    for c in columns:
        if c not in batch.columns:
            raise ValueError(f"no {c!r} column")


class SemanticReward(_Reward):
    """R_sem: visual fidelity of the rendered completion to the real next screenshot, as its
    normalised gain over keeping the current screen (`screen`), in [-1, 1]; with
    `normalised=False` (or no `screen` column) the raw score in [0, 1]."""

    __name__ = "r_sem"

    def __init__(
        self,
        renderer: Renderer | None = None,
        ssim_share: float = 1.0,
        lpips: LPIPS | None = None,
        shared: RenderBatches | None = None,
        metric: str = "ssim",
        normalised: bool = True,
        batches: RenderBatches | None = None,
    ):
        super().__init__(renderer, batches or shared)
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

    def _score(self, batch: RenderBatch) -> list[float | None]:
        _needs(batch, "next_screen")
        normalised = self.normalised and "screen" in batch.columns
        ok = [c for c in batch if c.render is not None]
        for c in ok:
            if c.target.next_error or (normalised and c.target.screen_error):
                raise ValueError(f"unreadable screenshot: {c.target.next_error or c.target.screen_error}")
        raw = pixel_scores(
            [c.render.image for c in ok],
            [c.target.next_screen for c in ok],
            self.metric,
            self.lpips,
            self.ssim_share,
        )
        values = dict(zip(map(id, ok), raw))
        base: dict[int, tuple[float, float]] = {}
        for c in ok:  # each prompt's baselines once, where one of its completions rendered
            if normalised and id(c.target) not in base:
                base[id(c.target)] = pixel_baselines(c.target.screen, c.target.next_screen, self.metric)
        out: list[float | None] = []
        for c in batch:
            v = values.get(id(c))
            if not normalised:
                out.append(0.0 if v is None else float(v))
            else:
                # a failed render (v None) scores the worst, needing no baselines
                out.append(sem_gain(v, *base.get(id(c.target), (1.0, 0.0))))
        return out


SEM_METRICS = {"ssim": ssim, "blur_ssim": blur_ssim}


class ActionReward(_Reward):
    """R_act: the imagined screen changed where, and as, the real one did (render.metrics.change_gain
    of the current screen, the render and the real next screen), in [-1, 1].

    Keeping the screen scores 0; a change drawn where and as the real one is pays, a change
    anywhere else or drawn otherwise costs, up to -1 for one that is all wrong (and for a
    completion that does not render). None (left out of trl's sum) where the real transition
    changed no pixel: there is no change to land, and R_sem already pays for leaving the screen
    alone (and where a screenshot cannot be read: nothing to judge). The older rule (the share of
    changed pixels near the tap agreeing) paid the unchanged screen most of its maximum."""

    __name__ = "r_act"

    def _score(self, batch: RenderBatch) -> list[float | None]:
        _needs(batch, "screen", "next_screen")
        out: list[float | None] = []
        for c in batch:
            t = c.target
            if not t.changes:
                out.append(None)
                continue
            out.append(change_score(t.screen, None if c.render is None else c.render.image, t.next_screen))
        return out


class TextReward(_Reward):
    """R_text: the imagined screen says and holds what the real one does (render.metrics.content_f1:
    the visible words' F1 and the elements' F1 against the real next HTML), as its normalised
    gain over the current screen's HTML (0 keeping it, -1 a blank page, 1 perfect). Pixels barely
    punish a wrong word or a blanked label, and blanking text that moves can even raise SSIM;
    this reward does. None (left out of trl's sum) where the next HTML was not recorded."""

    __name__ = "r_text"

    def _score(self, batch: RenderBatch) -> list[float | None]:
        base = {
            k: content_baselines(t.kept_html, t.next_html) for k, t in batch.targets().items() if t.next_html
        }
        out: list[float | None] = []
        for c in batch:
            t = c.target
            if not t.next_html:
                out.append(None)
                continue
            out.append(content_gain(c.html if c.render is not None else None, t.next_html, *base[id(t)]))
        return out


# The most R_format gives an edit that does not apply as a whole (R_sem and R_act give it 0).
EDIT_PARTIAL = 0.5


class FormatReward(_Reward):
    """R_format: one renderable HTML document whose root is sized to the screen, needing no repair;
    for an edit target, an edit that parses and applies to the current screen and renders."""

    __name__ = "r_format"

    def _score(self, batch: RenderBatch) -> list[float | None]:
        return [self._one(c) for c in batch]

    @staticmethod
    def _one(c: Rendered) -> float:
        credit = c.edit_credit
        if credit is not None and credit < 1.0:
            # an edit that does not apply: up to EDIT_PARTIAL for the share of its lines that
            # would, so a group of not-yet-right edits still has a direction to learn
            return EDIT_PARTIAL * credit
        if c.render is None:
            return 0.0
        if credit is not None:
            return 1.0
        size = root_size(c.html)
        w, h = c.target.width, c.target.height
        sized = size is not None and abs(size[0] - w) <= 2 and abs(size[1] - h) <= 2
        return 0.4 + 0.3 * (not c.repaired) + 0.3 * sized


def reward_functions(
    renderer: Renderer | None = None, ssim_share: float = 1.0, sem_metric: str = "ssim", text: bool = False
):
    """R_sem, R_act, R_format (and R_text when asked), building their batches with one
    RenderBatches (`funcs[0].batches`: what the trainer builds each step's batch with)."""
    batches = RenderBatches(renderer)
    out = [
        SemanticReward(ssim_share=ssim_share, batches=batches, metric=sem_metric),
        ActionReward(batches=batches),
        FormatReward(batches=batches),
    ]
    return out + [TextReward(batches=batches)] if text else out
