"""Train a checkpoint's revisit head on what `sim+memory` gets wrong on the training split.

    wm train-revisit CHECKPOINT [--corpus PATH]

For each training transition, `sim+memory` answers with that episode's own recordings left out
(as memory is asked about a new visit to an app it knows), and every distinct earlier screen of
the episode is a candidate next screen (worldmodel/revisit.py computes its features). A candidate
is a positive where it has more of the real next screen's words than the answer (text F1 higher
by more than `MARGIN`); each example weighs by how much the choice matters. A one-hidden-layer
network is fitted on these (torch, full batch), its threshold chosen on held-out episodes
(`FOLDS`-fold by episode: the threshold whose out-of-fold choices gain the most text F1 over
`sim+memory`, never below 0.5), then fitted again on every episode and written beside the
checkpoint as `revisit.json`; `WorldModel.load` runs it after the checkpoint from then on.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from render.metrics import text_f1
from worldmodel.backends.memory import MemoryBackend
from worldmodel.backends.sim import SimBackend
from worldmodel.dataset import episode_histories, iter_transitions, load_corpus
from worldmodel.model import WorldModel
from worldmodel.revisit import FEATURES, RevisitHead, candidates
from worldmodel.types import Query

MARGIN = 0.02  # text F1 a candidate must add over the answer to count as the better screen
FOLDS = 5
HIDDEN = 16
THRESHOLDS = tuple(round(0.5 + 0.05 * k, 2) for k in range(10))  # 0.50 ... 0.95


def examples(transitions, renderer, known, echo=print, pixels: bool = False) -> list[dict]:
    """One row per candidate: its query's index, episode, features and text F1 gain over the
    answer; with `pixels`, also its SSIM gain ("ssim_gain", the candidate rendered)."""
    mem = MemoryBackend(known)
    model = WorldModel([SimBackend(), mem], renderer, "sim+memory")
    past = episode_histories(transitions)
    rows: list[dict] = []
    t0 = time.perf_counter()
    try:
        for mine in mem.each_episode_left_out(transitions):
            idx = [i for i in mine if past[i]]
            if not idx:
                continue
            asked = [transitions[i] for i in idx]
            preds = model.predict_many([Query(t.screen, t.action, t.goal) for t in asked], "edit")
            for i, t, p in zip(idx, asked, preds):
                if not p.ok:
                    continue
                q = Query(p.as_screen(t.screen), t.action, t.goal, True, t.screen, past[i])
                truth = t.next_screen.html or ""
                base = text_f1(p.html, truth)
                found = candidates(q)
                mine_rows = [
                    {
                        "query": i,
                        "episode": (t.app, t.episode_id),
                        "f": c.features,
                        "gain": text_f1(c.screen.html or "", truth) - base,
                    }
                    for c in found
                ]
                if pixels and found:
                    _pixel_gains(renderer, t, p, found, mine_rows)
                rows += mine_rows
    finally:
        model.close()
    echo(
        f"revisit: {len(rows)} candidates from {len(transitions)} transitions ({time.perf_counter() - t0:.0f} s)"
    )
    return rows


def _pixel_gains(renderer, t, answer, found, rows) -> None:
    """Each candidate's SSIM against the real next screen, less the answer's, into its row."""
    from render import RenderError
    from render.metrics import ssim

    truth = t.next_screen.array
    base = ssim(answer.image, truth)
    shots = renderer.render_many([(c.screen.html or "", t.screen.viewport()) for c in found])
    for row, shot in zip(rows, shots):
        row["ssim_gain"] = (0.0 if isinstance(shot, RenderError) else ssim(shot.pil(), truth)) - base


def fit(rows: list[dict], seed: int = 0, steps: int = 600) -> RevisitHead:
    """The head fitted on `rows` (threshold left at 0.5)."""
    import torch

    torch.manual_seed(seed)
    x = torch.tensor([r["f"] for r in rows], dtype=torch.float32)
    gain = torch.tensor([r["gain"] for r in rows], dtype=torch.float32)
    y = (gain > MARGIN).float()
    w = gain.abs() + 0.05
    mean, scale = x.mean(0), x.std(0).clamp(min=1e-3)
    xs = (x - mean) / scale
    net = torch.nn.Sequential(
        torch.nn.Linear(len(FEATURES), HIDDEN), torch.nn.Tanh(), torch.nn.Linear(HIDDEN, 1)
    )
    opt = torch.optim.Adam(net.parameters(), lr=0.02, weight_decay=1e-3)
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(net(xs).squeeze(1), y, weight=w)
        loss.backward()
        opt.step()
    first, last = net[0], net[2]
    return RevisitHead(
        mean=mean.tolist(),
        scale=scale.tolist(),
        w1=first.weight.detach().tolist(),
        b1=first.bias.detach().tolist(),
        w2=last.weight.detach()[0].tolist(),
        b2=float(last.bias.detach()[0]),
    )


def _choices(head: RevisitHead, rows: list[dict]) -> dict[int, tuple[float, float]]:
    """Per query, the head's best candidate: (its score, its text F1 gain)."""
    best: dict[int, tuple[float, float]] = {}
    for r in rows:
        p = head.probability(r["f"])
        if r["query"] not in best or p > best[r["query"]][0]:
            best[r["query"]] = (p, r["gain"])
    return best


def held_out(rows: list[dict], n: int, seed: int = 0) -> dict[float, tuple[int, float]]:
    """Per threshold, what out-of-fold choices would do over `n` transitions: (answers replaced,
    mean text F1 gain over sim+memory)."""
    episodes = sorted({r["episode"] for r in rows})
    random.Random(seed).shuffle(episodes)
    fold = {e: k % FOLDS for k, e in enumerate(episodes)}
    chosen: dict[int, tuple[float, float]] = {}
    for k in range(FOLDS):
        train = [r for r in rows if fold[r["episode"]] != k]
        test = [r for r in rows if fold[r["episode"]] == k]
        if train and test and any(r["gain"] > MARGIN for r in train):
            chosen.update(_choices(fit(train, seed), test))
    return {
        t: (sum(p >= t for p, _ in chosen.values()), sum(g for p, g in chosen.values() if p >= t) / max(1, n))
        for t in THRESHOLDS
    }


def train_revisit(
    checkpoint: str | Path,
    corpus: str | None = None,
    echo=print,
    apps: tuple[str, ...] = (),
    episodes: int = 0,
) -> Path:
    """Fit the revisit head on `corpus`'s train split (memory of train + validation, each
    episode's own left out) and write it into `checkpoint`; returns the file written. `apps`,
    `episodes`: learn from those apps' transitions only, at most that many episodes of each."""
    from render import Renderer

    folder = Path(checkpoint)
    if not folder.is_dir():
        raise FileNotFoundError(f"checkpoint folder {folder} does not exist")
    dd = load_corpus(corpus)
    if "train" not in dd:
        raise ValueError(f"corpus {corpus or 'bundled'} has no train split")
    train = list(iter_transitions(dd["train"], skipped=[]))
    known = train + (list(iter_transitions(dd["validation"], skipped=[])) if "validation" in dd else [])
    if apps:
        train = [t for t in train if t.app in apps]
    if episodes:
        first: dict[str, list[str]] = {}
        for t in train:
            mine = first.setdefault(t.app, [])
            if t.episode_id not in mine and len(mine) < episodes:
                mine.append(t.episode_id)
        train = [t for t in train if t.episode_id in first[t.app]]
    with Renderer() as r:
        rows = examples(train, r, known, echo)
    if not any(r["gain"] > MARGIN for r in rows):
        raise ValueError(
            f"no earlier screen of any episode in {corpus or 'the bundled corpus'} beats sim+memory"
        )
    head = head_from(rows, len(train), str(corpus or "bundled"), echo)
    path = head.save(folder)
    echo(f"revisit: threshold {head.threshold:.2f}; wrote {path}")
    return path


def head_from(rows: list[dict], n: int, corpus: str, echo=print) -> RevisitHead:
    """The head fitted on every row, at the threshold whose held-out choices gained the most
    over `n` transitions (ties: the higher), with what training measured in `trained_on`."""
    table = held_out(rows, n)
    best = max(THRESHOLDS, key=lambda t: (round(table[t][1], 6), t))
    for t in THRESHOLDS:
        echo(f"  threshold {t:.2f}: {table[t][0]:4d} replaced, held-out text F1 gain {table[t][1]:+.4f}")
    head = fit(rows)
    head.threshold = best
    head.trained_on = {
        "corpus": corpus,
        "transitions": n,
        "candidates": len(rows),
        "positives": sum(r["gain"] > MARGIN for r in rows),
        "held_out": {str(t): list(v) for t, v in table.items()},
    }
    return head
