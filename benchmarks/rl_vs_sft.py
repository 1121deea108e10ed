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

At equal compute (`--budget SECONDS --seeds 0 1 2`): per seed, from the same base, GRPO (its
pre-pass over the prompts included, with the preset's dynamic sampling) and more SFT each run
for the same wall clock on the same machine, one after the other, at a constant learning rate;
both are scored on the held-out transitions with SSIM, text F1 and the normalised rewards, and
the summary says whether GRPO's lead is larger than the seeds' spread. `--rescore` scores the
arms such a run saved under `--out` again, on `--eval` transitions (e.g. all of the test split). `--device`, `--dtype`
and `--model-path` run the same comparison on a GPU with a real checkpoint, e.g.

    python benchmarks/rl_vs_sft.py --preset qwen3-vl-8b --model-path /models/Qwen3-VL-8B-Instruct \
        --device cuda --dtype bfloat16 --target edit --budget 1800 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import replace
from pathlib import Path

from corpus.store import load_corpus
from render import Renderer
from render.metrics import text_f1
from training.config import preset
from training.data import simulated, to_examples
from training.rewards import SemanticReward, reward_functions
from training.train import (
    completion_budget,
    disagreeing_prompts,
    grpo_examples,
    grpo_figures,
    init_checkpoint,
    load_trained,
    run_grpo,
    run_sft,
    save_checkpoint,
    sft_examples,
    time_budget,
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
    cols = ("screen", "next_screen", "action", "width", "height", "scale", "edits_html", "next_html")
    kw = {k: [t[k] for t in test] for k in cols}
    kw["screen_html"] = [t["screen_html"] for t in test]
    funcs = reward_functions(renderer, text=True)
    res = {}
    for r in funcs:
        v = [x for x in r(None, outs, **kw) if x is not None]
        res[r.__name__] = sum(v) / len(v) if v else None
    # the raw figures the evaluation reports, on the same renders
    rendered = funcs[0].shared.renders(outs, kw["width"], kw["height"], kw["scale"], kw["edits_html"])
    raw = SemanticReward(normalised=False, shared=funcs[0].shared)(None, outs, **kw)
    res["ssim"] = sum(raw) / len(raw)
    f1 = [text_f1(h, t["next_html"]) if res_ is not None else 0.0 for (h, _, res_), t in zip(rendered, test)]
    res["text_f1"] = sum(f1) / len(f1)
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
    ap.add_argument("--budget", type=float, default=0, help="seconds per arm: compare at equal compute")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0], help="with --budget: one pair of arms each")
    ap.add_argument("--device", default=None, help="cpu | cuda | auto (default: the preset's)")
    ap.add_argument("--dtype", default=None, help="float32 | bfloat16 | ... (default: the preset's)")
    ap.add_argument("--model-path", default=None, help="a local checkpoint to start SFT from")
    ap.add_argument(
        "--prepass", type=int, default=None, help="GRPO's pre-pass prompts (default: the preset's)"
    )
    ap.add_argument(
        "--rescore",
        action="store_true",
        help="score the arms an equal-compute run saved under --out again, on --eval transitions",
    )
    ap.add_argument("--train-sample", type=int, default=0, help="train on N shuffled transitions (0 = all)")
    args = ap.parse_args()
    out = Path(args.out)
    edit = args.target == "edit"
    cfg = preset(
        args.preset,
        output_dir=str(out),
        target=args.target,
        device=args.device,
        dtype=args.dtype,
        model_path=args.model_path,
        prepass_prompts=args.prepass,
    )
    if edit:
        cfg = replace(cfg, with_html=True, max_prompt_html_chars=args.html_chars or cfg.max_prompt_html_chars)
    dd = load_corpus()
    from corpus.store import from_row

    test_rows = dd["test"].shuffle(seed=0, keep_in_memory=True).select(range(min(args.eval, len(dd["test"]))))
    train = dd["train"]
    if args.train_sample:  # a shuffled share of the training split (a cheaper run on a busy machine)
        train = train.shuffle(seed=0, keep_in_memory=True).select(range(min(args.train_sample, len(train))))
    # (a re-score trains nothing: no training examples, which after the sim take minutes to make)
    examples = None if args.rescore else training_examples(cfg, train)
    imitate = None if args.rescore else sft_examples(cfg, examples)
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
        model, proc = load_trained(init_checkpoint(cfg, train), cfg)
        trainer, _ = run_sft(cfg, model, proc, imitate, args.sft_steps, out / "base")
        base = save_checkpoint(trainer, proc, out / "base" / "final", cfg)
    t_base = time.perf_counter() - t0
    if edit and imitate is not None:
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
    if args.rescore:
        return rescore(args, cfg, base, test, figures, out)
    if args.budget:
        return equal_compute(args, cfg, base, examples, imitate, test, figures, out)
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


# A run stopped by the time budget: as many steps as fit (the budget ends it first).
UNBOUNDED_STEPS = 100_000
# What each arm is scored on, in the summary's order.
SCORES = ("ssim", "text_f1", "r_sem", "r_text", "r_act", "r_format")


def equal_compute(args, cfg, base, examples, imitate, test, figures, out: Path):
    """Per seed: GRPO (pre-pass included) and more SFT from `base` for args.budget seconds each,
    both at a constant learning rate, scored on `test`."""
    const = dict(lr_scheduler_type="constant", warmup_steps=0, save_strategy="no")
    figures["budget_s"] = args.budget
    figures["seeds"] = {}
    with Renderer() as r:
        figures["sft_base"] = score(base, cfg, test, r, args.max_new_tokens)
        print("base:", json.dumps(figures["sft_base"]))
        for seed in args.seeds:
            c = replace(cfg, seed=seed)
            fig: dict = {}
            model, proc = load_trained(base, c)
            t0 = time.perf_counter()
            prompts = grpo_examples(examples)
            if c.prepass_prompts:
                prompts, fig["prepass"] = disagreeing_prompts(c, model, proc, prompts, renderer=r)
            left = max(1.0, args.budget - (time.perf_counter() - t0))
            d = out / f"grpo_seed{seed}"
            tr, _ = run_grpo(
                c,
                model,
                proc,
                prompts,
                UNBOUNDED_STEPS,
                d,
                renderer=r,
                callbacks=[time_budget(left)],
                **const,
            )
            fig["grpo_seconds"] = time.perf_counter() - t0
            fig["grpo_steps"] = tr.state.global_step
            fig.update(grpo_figures(tr.state.log_history))
            rl = save_checkpoint(tr, proc, d / "final", c)
            model, proc = load_trained(base, c)
            t0 = time.perf_counter()
            d = out / f"sft_seed{seed}"
            tr, _ = run_sft(
                replace(c, sft_lr=c.sft_lr / 4),
                model,
                proc,
                imitate,
                UNBOUNDED_STEPS,
                d,
                callbacks=[time_budget(args.budget)],
                **const,
            )
            fig["sft_seconds"] = time.perf_counter() - t0
            fig["sft_steps"] = tr.state.global_step
            sft = save_checkpoint(tr, proc, d / "final", c)
            fig["sft_only"] = score(sft, c, test, r, args.max_new_tokens)
            fig["sft_plus_grpo"] = score(rl, c, test, r, args.max_new_tokens)
            figures["seeds"][seed] = fig
            print(f"seed {seed}:", json.dumps(fig))
            (out / "figures.json").write_text(json.dumps(figures, indent=2))
    figures["summary"] = summary(figures)
    (out / "figures.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))
    print(table(figures))


def rescore(args, cfg, base, test, figures, out: Path):
    """The arms an equal-compute run saved under `out` (sft_seedN/final, grpo_seedN/final) scored
    again on `test`, e.g. on every held-out transition instead of the run's sample: with greedy
    answers a few edits that apply or not move a small sample's mean, and so the seeds' spread."""
    prev = json.loads((out / "figures.json").read_text())
    figures.update(budget_s=prev.get("budget_s"), seeds={})
    with Renderer() as r:
        figures["sft_base"] = score(base, cfg, test, r, args.max_new_tokens)
        for seed, old in prev["seeds"].items():
            c = replace(cfg, seed=int(seed))
            fig = {k: v for k, v in old.items() if k not in ("sft_only", "sft_plus_grpo")}
            fig["sft_only"] = score(out / f"sft_seed{seed}" / "final", c, test, r, args.max_new_tokens)
            fig["sft_plus_grpo"] = score(out / f"grpo_seed{seed}" / "final", c, test, r, args.max_new_tokens)
            figures["seeds"][seed] = fig
            print(f"seed {seed}:", json.dumps(fig))
    figures["summary"] = summary(figures)
    (out / f"figures_eval{len(test)}.json").write_text(json.dumps(figures, indent=2))
    print(table(figures))


def summary(figures) -> dict:
    """Per score: each arm's mean and spread over seeds (sample std), GRPO's lead per seed, and in
    how many seeds it leads by more than the larger spread."""
    seeds = figures["seeds"].values()
    out = {}
    for k in SCORES:
        a = [f["sft_only"][k] for f in seeds if f["sft_only"].get(k) is not None]
        b = [f["sft_plus_grpo"][k] for f in seeds if f["sft_plus_grpo"].get(k) is not None]
        if not a or len(a) != len(b):
            continue
        spread = max(statistics.stdev(a), statistics.stdev(b)) if len(a) > 1 else 0.0
        lead = [y - x for x, y in zip(a, b)]
        out[k] = {
            "sft_only": statistics.fmean(a),
            "sft_plus_grpo": statistics.fmean(b),
            "spread": spread,
            "lead": lead,
            "wins_beyond_spread": sum(d > spread for d in lead),
        }
    return out


def table(figures) -> str:
    base = figures["sft_base"]
    rows = [
        "| score | SFT base | SFT-only (mean ± sd) | SFT+GRPO (mean ± sd) | GRPO's lead per seed | seeds ahead by > spread |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    seeds = list(figures["seeds"].values())
    for k, s in figures["summary"].items():
        sd = [
            statistics.stdev([f[arm][k] for f in seeds]) if len(seeds) > 1 else 0.0
            for arm in ("sft_only", "sft_plus_grpo")
        ]
        rows.append(
            f"| {k} | {base[k]:.4f} | {s['sft_only']:.4f} ± {sd[0]:.4f} | {s['sft_plus_grpo']:.4f} ± {sd[1]:.4f} |"
            f" {' '.join(f'{d:+.4f}' for d in s['lead'])} | {s['wins_beyond_spread']} of {len(s['lead'])} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    main()
