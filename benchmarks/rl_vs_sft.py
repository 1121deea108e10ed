"""Does render-aware RL help? Same start (SFT for N steps), then M more steps of either SFT or GRPO;
both scored on held-out test transitions with the reward functions on rendered pixels.

    python benchmarks/rl_vs_sft.py [--preset tiny] [--sft-steps 120] [--extra-steps 16 32]
                                   [--eval 24] [--target edit] [--base CHECKPOINT]

With `--target edit` the model writes edits of the numbered current screen (shown in the
prompt around the element the action hits, cut to --html-chars, by default the preset's) and
every reward applies the edit first. A preset that trains after the sim (`small`) is scored as
it runs: on the sim's screen, with the hints it was trained with, its `follow` line carried out
and its edit cut to the app's reaction, ungated (the model's own edits, not the gate's choice).
`--base` starts both arms from an SFT checkpoint already trained with the same preset instead
of training one. Each number in --extra-steps is one pair of runs from the base.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

from corpus.store import load_corpus
from render import Renderer
from training.config import preset
from training.data import simulated, to_examples
from training.rewards import ActionReward, FormatReward, SemanticReward
from training.train import (
    completion_budget,
    grpo_examples,
    init_checkpoint,
    load_trained,
    run_grpo,
    run_sft,
    save_checkpoint,
    sft_examples,
    training_examples,
)
from worldmodel.backends import Query
from worldmodel.backends.hf import TransformersBackend


def score(path, cfg, test, renderer, max_new_tokens):
    edit = cfg.target == "edit"
    # asked as its card says (worldmodel/card.py: HTML shown, its budget, hints), on the screens
    # `test` already holds (the sim's, for a model trained after it): the model's own stage alone
    backend = TransformersBackend(path, device=cfg.device, max_new_tokens=max_new_tokens)
    backend.use_renderer(renderer)
    qs = [Query(t["_screen"], t["_action"], t["_goal"], applied=t["_applied"]) for t in test]
    outs = [c.text for c in (backend.complete_edits(qs) if edit else backend.complete(qs))]
    cols = ("screen", "next_screen", "action", "width", "height", "scale", "edits_html")
    kw = {k: [t[k] for t in test] for k in cols}
    res = {}
    for r in (SemanticReward(renderer), ActionReward(renderer), FormatReward(renderer)):
        v = r(None, outs, **kw)
        res[r.__name__] = sum(v) / len(v)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sft-steps", type=int, default=120)
    ap.add_argument("--extra-steps", type=int, nargs="+", default=[16])
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--base", default=None, help="an SFT checkpoint of this preset to start from")
    ap.add_argument("--eval", type=int, default=24)
    ap.add_argument("--out", default="runs/rl_vs_sft")
    ap.add_argument("--max-new-tokens", type=int, default=384)
    ap.add_argument("--target", choices=("document", "edit"), default="document")
    ap.add_argument(
        "--html-chars",
        type=int,
        default=None,
        help="edit target: the prompt's HTML budget (default: the preset's)",
    )
    args = ap.parse_args()
    out = Path(args.out)
    edit = args.target == "edit"
    cfg = preset(args.preset, output_dir=str(out), target=args.target)
    if edit:
        cfg = replace(cfg, with_html=True, max_prompt_html_chars=args.html_chars or cfg.max_prompt_html_chars)
    dd = load_corpus()
    from corpus.store import from_row

    test_rows = dd["test"].shuffle(seed=0, keep_in_memory=True).select(range(min(args.eval, len(dd["test"]))))
    examples = training_examples(cfg, dd["train"])
    imitate = sft_examples(cfg, examples)
    after = cfg.after if edit else ""
    with Renderer() as r:
        test = to_examples(
            test_rows, cfg.with_html, cfg.max_prompt_html_chars, target=cfg.target, renderer=r, after=after
        )
        ts = [from_row(row) for row in test_rows]
        ts, applied = simulated(ts, r) if after == "sim" else (ts, [False] * len(ts))
    for e, t, done in zip(test, ts, applied):  # the screen the model edits, as at prediction time
        e["_screen"], e["_action"], e["_goal"], e["_applied"] = t.screen, t.action, t.goal, done

    t0 = time.perf_counter()
    if args.base:
        base = Path(args.base)
        proc = load_trained(base, cfg)[1]
    else:
        model, proc = load_trained(init_checkpoint(cfg, dd["train"]), cfg)
        trainer, _ = run_sft(cfg, model, proc, imitate, args.sft_steps, out / "base")
        base = save_checkpoint(trainer, proc, out / "base" / "final", cfg)
    t_base = time.perf_counter() - t0
    if edit:
        cfg = replace(cfg, max_completion_length=completion_budget(imitate, proc.tokenizer, cfg))

    figures = {
        "base": str(base),
        "held_out_transitions": len(test),
        "target": cfg.target,
        "preset": cfg.preset,
        "after": after,
        "hints": cfg.hints and edit,
        "grpo_max_completion_length": cfg.max_completion_length,
        "seconds": {"base_sft": t_base},
        "steps": {"base_sft": None if args.base else args.sft_steps, "extra": args.extra_steps},
    }
    with Renderer() as r:
        figures["sft_base"] = score(base, cfg, test, r, args.max_new_tokens)
        for n in args.extra_steps:
            model, proc = load_trained(base, cfg)
            t0 = time.perf_counter()
            tr, _ = run_sft(
                replace(cfg, sft_lr=cfg.sft_lr / 4), model, proc, imitate, n, out / f"more_sft_{n}"
            )
            sft = save_checkpoint(tr, proc, out / f"more_sft_{n}" / "final", cfg)
            t_sft = time.perf_counter() - t0
            model, proc = load_trained(base, cfg)
            t0 = time.perf_counter()
            tr, _ = run_grpo(cfg, model, proc, grpo_examples(examples), n, out / f"grpo_{n}", renderer=r)
            rl = save_checkpoint(tr, proc, out / f"grpo_{n}" / "final", cfg)
            t_rl = time.perf_counter() - t0
            figures[f"sft_plus_sft_{n}"] = score(sft, cfg, test, r, args.max_new_tokens)
            figures[f"sft_plus_grpo_{n}"] = score(rl, cfg, test, r, args.max_new_tokens)
            figures["seconds"].update({f"extra_sft_{n}": t_sft, f"extra_grpo_{n}": t_rl})
    (out / "figures.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))
    for n in args.extra_steps:
        for k in ("r_sem", "r_act", "r_format"):
            a, b = figures[f"sft_plus_sft_{n}"][k], figures[f"sft_plus_grpo_{n}"][k]
            print(
                f"{n:3d} extra steps {k:9s} SFT-only {a:.4f}   SFT+GRPO {b:.4f}"
                f"   ratio {b / a if a else float('nan'):.3f}"
            )


if __name__ == "__main__":
    main()
