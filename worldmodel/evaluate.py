"""Score backends on held-out transitions against the copy baseline, and write a report."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from render import Renderer
from render.metrics import LPIPS, MetricUnavailable

from .backends import Backend
from .dataset import episode_histories
from .files import write_whole
from .judge import SCORES
from .model import WorldModel
from .report import heat_map, write_report
from .score import references, score
from .types import Query, Transition


def _mean(xs):
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    return float(np.mean(xs)) if xs else None


def _pearson(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) < 3 or a.std() == 0 or b.std() == 0:
        return None
    return float(np.corrcoef(a, b)[0, 1])


def evaluate(
    backends: dict[str, Backend],
    transitions: Sequence[Transition],
    renderer: Renderer,
    out_dir: str | Path | None = None,
    lpips: LPIPS | None | str = "auto",
    batch: int = 8,
    modes: dict[str, str] | str | None = None,
    embedders: dict | None = None,
    judge=None,
    keep: dict | None = None,
) -> dict:
    """Per backend: SSIM, LPIPS, text F1, element F1, render-failure rate, latency, copy-correlation,
    and what it generated (characters of completion; in edit mode, of the edit); and the
    scores GRPO is rewarded with (render/metrics.py): `sem_gain`, SSIM's normalised gain over
    keeping the screen (1 perfect, 0 the copy, -1 a blank page), `content_gain`, the same for
    content_f1 (visible words and elements) where both screens' HTML is known, and `change_gain`,
    whether the change lands where and as the real one did (transitions that change pixels).

    A value of `backends` is a Backend or a WorldModel (e.g. `sim+retrieval`); `modes` gives
    each name its prediction mode ("document", "edit", "auto"), or one mode for all; a name
    without one is asked in its own mode (a checkpoint's card, else "document").
    figures["per_app"][app] holds the app's transition count and, per backend, its mean SSIM,
    text F1 and gain over the screenshot copy.

    Code2World's own scores, where asked: `embedders` ({"siglip": ImageEmbedder, "dino": ...},
    worldmodel/embed.py) add the cosine of the render's and the real next screen's embeddings
    (a failed render 0); `judge` (worldmodel/judge.py) adds its four scores, `judge_S_ad` ...
    on 0-100, and `judge_answered`, the share of transitions it scored.

    `keep`, where given a dict, gets each backend's (Prediction, score) per transition, in order,
    under its name: a caller reads more off the same run (a subset's scores, what a stage chose)
    without predicting and rendering again."""
    lpips, lpips_note = _lpips(lpips)
    out = Path(out_dir) if out_dir else None
    if out:
        (out / "images").mkdir(parents=True, exist_ok=True)
    refs = references(transitions, renderer)
    copy_ssim = [r.copy["ssim"] for r in refs]
    figures: dict = {
        "n": len(transitions),
        "copy_baseline": _copy_baseline(transitions, refs, lpips, embedders),
    }
    figures["backends"] = {}
    rows: dict[int, dict] = {i: {"i": i} for i in range(len(transitions))}
    past = episode_histories(transitions)
    for name, backend in backends.items():
        wm = WorldModel.load(backend, renderer)  # a WorldModel as it is, a Backend wrapped
        mode = (modes if isinstance(modes, str) else (modes or {}).get(name)) or wm.mode
        per: dict[str, list] = {}
        for s in range(0, len(transitions), batch):
            chunk = transitions[s : s + batch]
            preds = wm.predict_many(
                [Query(t.screen, t.action, t.goal, history=past[s + j]) for j, t in enumerate(chunk)], mode
            )
            extra = _model_scores(chunk, preds, embedders, judge)
            for j, (t, p) in enumerate(zip(chunk, preds)):
                i = s + j
                sc = {**score(p, t, refs[i], lpips), **extra[j]}
                if keep is not None:
                    keep.setdefault(name, []).append((p, sc))
                for k, v in sc.items():
                    if v is not None or k.startswith("judge_"):  # judge: None counts as unanswered
                        per.setdefault(k, []).append(v)
                rows[i][name] = {k: sc[k] for k in ("ssim", "text_f1", "gain")} | {
                    "error": p.render_error,
                    "img": None,
                    **extra[j],
                }
                if out and p.ok:
                    rows[i][name].update(_save_images(out, i, name, p, t))
        figures["backends"][name] = _summary(per, wm, mode, copy_ssim, lpips, lpips_note, embedders, judge)
    _against_copy_backend(figures["backends"])
    figures["per_app"] = _per_app(transitions, rows, list(backends))
    if out:
        write_whole(out / "figures.json", json.dumps(figures, indent=2))
        write_report(out, figures, transitions, rows, list(backends), copy_ssim)
    return figures


def _lpips(lpips):
    """(the LPIPS metric or None, why it is not there)."""
    if lpips != "auto":
        return lpips, None if lpips is not None else "LPIPS not requested"
    try:
        return LPIPS(), None
    except MetricUnavailable as e:
        return None, str(e)


def _copy_baseline(transitions, refs, lpips, embedders) -> dict:
    """The screenshot kept, scored as a prediction would be."""
    out = {
        "ssim": _mean([r.copy["ssim"] for r in refs]),
        "blur_ssim": _mean([r.copy["blur_ssim"] for r in refs]),
        "pixels_off": _mean([r.copy["pixels_off"] for r in refs]),
    }
    for key, emb in (embedders or {}).items():  # the screenshot kept, in the same embedding
        out[key] = _mean(
            emb.similarity([t.screen.image for t in transitions], [t.next_screen.image for t in transitions])
        )
    if lpips is not None:
        out["lpips"] = _mean([lpips(t.screen.array, t.next_screen.array) for t in transitions])
    return out


def _summary(per, wm, mode, copy_ssim, lpips, lpips_note, embedders, judge) -> dict:
    """One backend's figures: the means of its per-transition scores, and what ran."""
    m = lambda k: _mean(per.get(k, []))  # noqa: E731
    out = {
        "ssim": m("ssim"),
        "blur_ssim": m("blur_ssim"),
        "pixels_off": m("pixels_off"),
        "lpips": m("lpips") if lpips is not None else f"unavailable: {lpips_note}",
        "text_f1": m("text_f1"),
        "element_f1": m("element_f1"),
        "render_failure_rate": m("failed"),
        "latency_s": m("latency_s"),
        "mode": mode,
        # what ran: the stages (a checkpoint trained after the sim runs as sim+PATH) and the
        # last stage's checkpoint card as it ran, options applied
        "model": wm.name,
        "card": None if wm.stages[-1].card is None else asdict(wm.stages[-1].card),
        "generated_chars": m("generated_chars"),
        "edit_failure_rate": m("edit_failed"),
        "gain_over_copy": m("gain"),
        "sem_gain": m("sem_gain"),
        "content_gain": m("content_gain"),
        "change_gain": m("change_gain"),
        "copy_correlation": _pearson(copy_ssim, per.get("gain", [])),
        **{k: m(k) for k in _extra_keys(embedders, judge)},
    }
    if judge is not None:
        answered = per.get(f"judge_{SCORES[0]}", [])
        out["judge_answered"] = sum(v is not None for v in answered) / len(answered) if answered else None
    return out


def _against_copy_backend(backends: dict) -> None:
    """Each backend's SSIM and text F1 gain over the `copy` backend, where one was scored."""
    if "copy" not in backends:
        return
    base = backends["copy"]
    for f in backends.values():
        for k in ("ssim", "text_f1"):
            a, b = f[k], base[k]
            f[f"{k}_gain_over_copy_backend" if k != "ssim" else "gain_over_copy_backend"] = (
                None if a is None or b is None else a - b
            )


def _save_images(out: Path, i: int, name: str, p, t) -> dict:
    """The prediction's render and its difference heat map for the report."""
    img = out / "images" / f"{i}-{_slug(name)}.png"
    p.image.save(img)
    heat = img.with_name(f"{i}-{_slug(name)}-diff.png")
    heat_map(p.image, t.next_screen.image).save(heat)
    return {"img": img.name, "heat": heat.name}


def _extra_keys(embedders, judge) -> list[str]:
    return list(embedders or {}) + ([f"judge_{k}" for k in SCORES] if judge is not None else [])


def _model_scores(chunk, preds, embedders, judge) -> list[dict]:
    """Per prediction of a batch, Code2World's scores: each embedder's cosine between the render
    and the real next screen (0 for a failed render), and the judge's four (None: no answer)."""
    extra: list[dict] = [{} for _ in chunk]
    ok = [j for j, p in enumerate(preds) if p.ok]
    for key, emb in (embedders or {}).items():
        sims = dict(
            zip(ok, emb.similarity([preds[j].image for j in ok], [chunk[j].next_screen.image for j in ok]))
        )
        for j in range(len(chunk)):
            extra[j][key] = sims.get(j, 0.0)
    if judge is not None:
        scores = judge.score_many([(t, p.image if p.ok else None) for t, p in zip(chunk, preds)])
        for j, sc in enumerate(scores):
            extra[j].update({f"judge_{k}": None if sc is None else sc[k] for k in SCORES})
    return extra


def _per_app(transitions, rows: dict[int, dict], names: list[str]) -> dict:
    """Per app (sorted): its transition count and each backend's means over its transitions."""
    idx: dict[str, list[int]] = {}
    for i, t in enumerate(transitions):
        idx.setdefault(t.app, []).append(i)
    return {
        app: {
            "n": len(ii),
            "backends": {
                n: {k: _mean([rows[i][n][k] for i in ii]) for k in ("ssim", "text_f1", "gain")} for n in names
            },
        }
        for app, ii in sorted(idx.items())
    }


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)[:40]


# Code2World's Table 1 reads a model's fidelity in distribution (apps seen in training, episodes
# not: the id-test split) beside out of it (apps never seen: the test split).
SETTINGS = {"id-test": "in-app", "test": "unseen apps"}
TABLE_KEYS = (
    ("ssim", "SSIM"),
    ("blur_ssim", "blurSSIM"),
    ("text_f1", "textF1"),
    ("element_f1", "elemF1"),
    ("gain_over_copy", "vs shot"),
    ("copy_correlation", "copy-r"),
)
# Code2World's own scores, as columns only where they were asked for (x100, the paper's scale)
CODE2WORLD_KEYS = (
    ("siglip", "SigLIP"),
    ("dino", "DINO"),
    *((f"judge_{k}", k) for k in SCORES),
)


def side_by_side(figures_by_split: dict[str, dict]) -> str:
    """One markdown table: a row per backend, per split its SSIM, blurred SSIM, text F1, element
    F1, gain over the screenshot copy and copy-correlation (figures as `evaluate` returns them)."""
    splits = list(figures_by_split)
    names = list(dict.fromkeys(n for f in figures_by_split.values() for n in f["backends"]))
    asked = {k for f in figures_by_split.values() for b in f["backends"].values() for k in b}
    keys = [*TABLE_KEYS, *((k, lbl) for k, lbl in CODE2WORLD_KEYS if k in asked)]
    head = ["model"] + [f"{SETTINGS.get(s, s)} {label}" for s in splits for _, label in keys]
    lines = [
        " | ".join(
            f"{SETTINGS.get(s, s)} ({s}): {figures_by_split[s]['n']} transitions, screenshot copy SSIM "
            f"{_fmt(figures_by_split[s]['copy_baseline']['ssim'])}"
            for s in splits
        ),
        "",
        "| " + " | ".join(head) + " |",
        "| " + " | ".join("---" for _ in head) + " |",
    ]
    for n in names:
        cells = [n]
        for s in splits:
            f = figures_by_split[s]["backends"].get(n, {})
            cells += [_fmt(f.get(k)) for k, _ in keys]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _fmt(v) -> str:
    return "n/a" if v is None or isinstance(v, str) else f"{v:+.4f}" if v < 0 else f"{v:.4f}"
