"""Calibrate a trained checkpoint's edit gate on apps it was not trained on.

A small model's own edits on an app it has never seen are mostly wrong, and it is less sure of
them: its mean log-probability per generated token is lower than where it writes what it has
learned (measured on third-party apps, benchmarks/RESULTS.md). The hf backend leaves out an
edit it is less sure of than a gate (`min_confidence`), keeping the screen the stage before it
gave (the current screen, or the sim's). The gate is chosen here, on the validation split
(apps in neither the training nor the test split): the threshold whose kept edits score best,
SSIM plus text F1 against the real next screen, over keeping the screen, with a margin below
the least sure edit it keeps. A checkpoint records it in its `worldmodel.json`, so loading it
gates the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from render import Renderer, RenderError
from worldmodel.model import WorldModel
from worldmodel.score import pixels, text_score
from worldmodel.types import Prediction, Query, Transition

# Tokens a calibration edit may take: as benchmarks/checkpoint_compare.py generates.
CALIBRATION_TOKENS = 512
# The gate that keeps no edit: no mean log-probability is above 0.
KEEP_NONE = 0.0
# A gain this small is an edit that changed nothing the scores see.
MOVED = 1e-9


def _score(p: Prediction, t: Transition) -> float:
    """What the gate maximises: SSIM plus text F1 against the real next screen, as `wm eval`
    scores them (worldmodel/score.py); 0 for a failed render."""
    if not p.ok:
        return 0.0
    return pixels(p.image, t.next_screen.array)["ssim"] + (text_score(p.html, t.next_screen.html) or 0.0)


def choose_gate(confidences: Sequence[float | None], kept: Sequence[float], base: Sequence[float]):
    """The threshold with the best total score (an edit counts where its confidence reaches it,
    the screen before it elsewhere), placed halfway down to the surest edit below it that changes
    the score; None where keeping every edit is best. Also the total gain over keeping every
    screen, with the gate and with none."""
    gain = [k - b for k, b in zip(kept, base)]
    ungated = sum(gain)
    levels = sorted({c for c in confidences if c is not None} | {KEEP_NONE})
    best, best_gain = None, ungated
    for th in levels:
        g = sum(x for x, c in zip(gain, confidences) if c is not None and c >= th)
        if g > best_gain or (g == best_gain and best is not None and th > best):
            best, best_gain = th, g
    if best is not None and best != KEEP_NONE:
        # Halfway down to the next edit that changes the score: the validation split cannot
        # tell apart any threshold between the two, and one set at a kept edit's own confidence
        # leaves out an edit on another app a hair less sure than it (max-margin, as for any
        # threshold learned from a few points). Edits that change nothing do not count.
        moved = [c for c, x in zip(confidences, gain) if c is not None and abs(x) > MOVED]
        least_sure = min((c for c in moved if c >= best), default=None)
        lower = [c for c in moved if least_sure is not None and c < least_sure]
        if lower:
            best = (least_sure + max(lower)) / 2
    return best, best_gain, ungated


def calibrate_gate(
    checkpoint: str | Path, transitions: Sequence[Transition], renderer: Renderer, memories: Sequence = ()
) -> tuple[float | None, dict]:
    """(the gate for `checkpoint`, figures): see the module's docstring.

    A checkpoint hinted by memory is asked once per memory in `memories` (MemoryBackends), each
    episode with its own recordings left out (`leave_out`), and its choices are scored against
    what stands without it, the stages before it and memory (`sim+memory`): one memory holding
    the validation apps' episodes asks it as on a new visit to an app memory knows, one holding
    other apps as on an app never recorded. The gate is chosen over all of them together."""
    ts = [t for t in transitions if t.screen.html and t.next_screen.html]
    queries = [Query(t.screen, t.action, t.goal) for t in ts]
    with WorldModel.load(
        f"hf:{checkpoint}", renderer=renderer, max_new_tokens=CALIBRATION_TOKENS, min_confidence=-math.inf
    ) as wm:
        if memories:
            preds, before = _with_memories(wm, ts, memories, renderer)
            ts = ts * len(memories)
            base = [_score(p, t) for p, t in zip(before, ts)]
            # a choice the gate acts on is one that changes what stands without the model
            confidences = [p.confidence if p.html != b.html else None for p, b in zip(preds, before)]
        else:
            preds = wm.predict_many(queries, "edit")
            confidences = [p.confidence if (p.edit or "").strip() else None for p in preds]
            if len(wm.stages) > 1:  # what the stages before the model made of each screen
                before = WorldModel(wm.stages[:-1], renderer).predict_many(queries, "edit")
                base = [_score(p, t) for p, t in zip(before, ts)]
            else:  # the screen kept, rendered from its HTML
                shown = renderer.render_many([(t.screen.html, t.screen.viewport()) for t in ts])
                base = [
                    _score(Prediction(t.screen.html, None if isinstance(r, RenderError) else r.pil()), t)
                    for r, t in zip(shown, ts)
                ]
    kept = [_score(p, t) for p, t in zip(preds, ts)]
    gate, gated, ungated = choose_gate(confidences, kept, base)
    n = max(1, len(ts))
    return gate, {
        "transitions": len(ts) // max(1, len(memories)),
        "conditions": max(1, len(memories)),
        "edits": sum(c is not None for c in confidences),
        "kept": sum(c is not None and (gate is None or c >= gate) for c in confidences),
        "gain_gated": gated / n,
        "gain_ungated": ungated / n,
    }


def _with_memories(wm: WorldModel, ts: list[Transition], memories: Sequence, renderer: Renderer):
    """(the model's predictions, what stands without it) for every transition under each memory
    in turn, each episode asked with its own recordings left out; in `memories` order."""
    learned, stages = wm.stages[-1], wm.stages[:-1]
    preds, before = [], []
    for memory in memories:
        learned.use_hint_index(memory)
        without = WorldModel([*stages, memory], renderer)
        got: dict[int, tuple] = {}
        for idx in memory.each_episode_left_out(ts):
            qs = [Query(ts[i].screen, ts[i].action, ts[i].goal) for i in idx]
            for i, p, b in zip(idx, wm.predict_many(qs, "edit"), without.predict_many(qs, "edit")):
                got[i] = (p, b)
        preds += [got[i][0] for i in range(len(ts))]
        before += [got[i][1] for i in range(len(ts))]
    return preds, before
