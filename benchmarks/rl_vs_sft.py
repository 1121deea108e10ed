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
arms such a run saved under `--out` again, on `--eval` transitions (e.g. all of the test split);
`--splits test id-test` scores on every transition of each split named instead, each summarised
apart (mean lead, per-seed spread). Each arm writes its per-step curve (curve.json and curve.csv:
GRPO's reward and its parts, the flat groups' share, SFT's loss, with the wall and CPU seconds
since the arm began) and arm.json, whose `grpo_reward_flatness` says whether GRPO's reward had
stopped rising (its last third's mean against the middle third's, within two standard errors).
`--arms grpo` runs one arm (an arm already saved under --out is reused, so a run cut short goes
on), `--save-at 300 600` also saves GRPO's model where those budgets would have stopped it (one
long run shows which budget its reward flattens by), and `--cache` keeps the training examples.
`--device`, `--dtype` and `--model-path` run the same comparison on a GPU with a real checkpoint, e.g.

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
from worldmodel.files import write_whole
from worldmodel.offline import require_checkpoint


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
    ap.add_argument(
        "--arms",
        nargs="+",
        choices=("grpo", "sft"),
        default=["grpo", "sft"],
        help="with --budget: which arms to run (an arm whose final checkpoint and arm.json exist is reused)",
    )
    ap.add_argument(
        "--splits",
        nargs="+",
        default=None,
        help="score on these whole splits (e.g. test id-test) instead of --eval test transitions",
    )
    ap.add_argument(
        "--save-at",
        type=float,
        nargs="+",
        default=[],
        help="with --budget: also save GRPO's model where a budget of each of these seconds would have ended it",
    )
    ap.add_argument(
        "--no-score", action="store_true", help="with --budget: train and save the arms, score nothing"
    )
    ap.add_argument(
        "--cache", default=None, help="a pickle of the training examples: read if there, else written"
    )
    ap.add_argument(
        "--score",
        nargs="+",
        default=None,
        metavar="CHECKPOINT",
        help="score these checkpoints (e.g. --save-at snapshots) on the held-out sets, train nothing",
    )
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

    for path in [args.base, *(args.score or ())]:
        if path:  # before minutes of example building
            try:
                require_checkpoint(path, "checkpoint (e.g. runs/small/sft/final)")
            except FileNotFoundError as e:
                raise SystemExit(str(e)) from None
    for name in args.splits or ():
        if name not in dd:
            raise SystemExit(f"--splits: the corpus has no split {name!r} (it has {', '.join(dd)})")
    if args.splits:  # every transition of each split
        held = {name: dd[name] for name in args.splits}
    else:
        held = {
            "test": dd["test"]
            .shuffle(seed=0, keep_in_memory=True)
            .select(range(min(args.eval, len(dd["test"]))))
        }
    train = dd["train"]
    if args.train_sample:  # a shuffled share of the training split (a cheaper run on a busy machine)
        train = train.shuffle(seed=0, keep_in_memory=True).select(range(min(args.train_sample, len(train))))
    # (a re-score trains nothing: no training examples, which after the sim take minutes to make)
    trains = not (args.rescore or args.score)
    examples = cached_examples(args.cache, cfg, train) if trains else None
    imitate = sft_examples(cfg, examples) if trains else None
    after = cfg.after if edit else ""
    sets = {}
    with Renderer() as r:
        for name, rows in held.items():
            if args.no_score:
                sets[name] = []
                continue
            sets[name] = to_examples(
                rows, cfg.with_html, cfg.max_prompt_html_chars, target=cfg.target, renderer=r, after=after
            )
            ts = [from_row(row) for row in rows]
            ts, applied = simulated(ts, r) if after == "sim" else (ts, [False] * len(ts))
            # the screen the model edits, as at prediction time
            for e, t, done in zip(sets[name], ts, applied):
                e["_screen"], e["_action"], e["_goal"], e["_applied"] = t.screen, t.action, t.goal, done
    test = next(iter(sets.values()))

    if args.score:
        return score_checkpoints(args, cfg, sets, out)
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
        "held_out": {name: len(v) for name, v in sets.items()},
        "target": cfg.target,
        "preset": cfg.preset,
        "after": after,
        "hints": cfg.hints and edit,
        "grpo_max_completion_length": cfg.max_completion_length,
        "seconds": {"base_sft": t_base},
        "steps": {"base_sft": None if args.base else args.sft_steps, "extra": args.extra_steps},
    }
    if args.rescore:
        return rescore(args, cfg, base, sets, figures, out)
    if args.budget:
        return equal_compute(args, cfg, base, examples, imitate, sets, figures, out)
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
    write_whole(out / "figures.json", json.dumps(figures, indent=2))
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
ARMS = ("sft_only", "sft_plus_grpo")
# The scores the headline keeps per held-out set and per seed.
HEADLINE_SCORES = ("ssim", "text_f1")
# Per-step figures a curve keeps (trl's log names), where logged.
CURVE_KEYS = (
    "reward",
    "reward_std",
    "rewards/r_sem/mean",
    "rewards/r_text/mean",
    "rewards/r_act/mean",
    "rewards/r_format/mean",
    "frac_reward_zero_std",
    "kl",
    "loss",
    "learning_rate",
)


def cached_examples(path, cfg, train):
    """The training examples (after the sim they take minutes to make), from a pickle at `path`
    when one made with the same preset settings is there, written there otherwise."""
    import pickle

    key = json.dumps({**cfg.to_dict(), "seed": 0, "output_dir": "", "train_rows": len(train)}, sort_keys=True)
    if path and Path(path).exists():
        saved = pickle.loads(Path(path).read_bytes())
        if saved["key"] == key:
            return saved["examples"]
    examples = training_examples(cfg, train)
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_whole(Path(path), pickle.dumps({"key": key, "examples": examples}))  # another run may read it
    return examples


def tree_cpu() -> float:
    """CPU seconds used so far by this process and its live descendants (the renderer's
    Chromium among them): on a shared machine, the compute an arm had, where wall time is not."""
    import psutil

    me = psutil.Process()
    total = 0.0
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:  # a child that exited between the listing and the reading
            pass
    return total


def arm_clock(t0: float, save_at=(), save=None, d: Path | None = None, cpu0: float = 0.0):
    """A trainer callback that stamps each logged step with the seconds since the arm began (t0,
    GRPO's pre-pass included) and the CPU seconds since then (from cpu0), writes the curve so far
    to `d` at every log (a run cut short keeps it), and, at the first step boundary after each of
    `save_at` seconds (the step a run with that budget would have stopped at, as time_budget
    stops it), calls save(seconds, model, step, elapsed)."""
    from transformers import TrainerCallback

    class ArmClock(TrainerCallback):
        def __init__(self):
            self.pending = sorted(save_at)

        def on_log(self, args, state, control, **kw):
            if state.log_history:
                state.log_history[-1]["elapsed_s"] = time.perf_counter() - t0
                state.log_history[-1]["cpu_s"] = tree_cpu() - cpu0
            if d is not None:
                write_curve(d, state.log_history)

        def on_step_end(self, args, state, control, model=None, **kw):
            now = time.perf_counter() - t0
            while self.pending and now >= self.pending[0]:
                save(self.pending.pop(0), model, state.global_step, now)

    return ArmClock()


def write_curve(d: Path, log_history: list[dict]) -> list[dict]:
    """The arm's per-step log as curve.json and curve.csv in `d`; returns the rows."""
    rows = []
    for h in log_history:
        if "step" not in h or not any(k in h for k in CURVE_KEYS):
            continue
        rows.append(
            {
                "step": h["step"],
                "elapsed_s": h.get("elapsed_s"),
                "cpu_s": h.get("cpu_s"),
                **{k: h[k] for k in CURVE_KEYS if k in h},
            }
        )
    d.mkdir(parents=True, exist_ok=True)
    write_whole(d / "curve.json", json.dumps(rows, indent=1))
    cols = ["step", "elapsed_s", "cpu_s", *[k for k in CURVE_KEYS if any(k in r for r in rows)]]
    lines = [",".join(cols)] + [
        ",".join("" if r.get(c) is None else f"{r[c]:.6g}" for c in cols) for r in rows
    ]
    write_whole(d / "curve.csv", "\n".join(lines) + "\n")
    return rows


def flatness(values: list[float]) -> dict:
    """Has a noisy per-step curve (one prompt per GRPO step) stopped rising? Its thirds' means,
    the last third's mean less the middle third's with that difference's standard error, and the
    last third's least-squares slope per step: flat when the last third is within two standard
    errors of the middle one."""
    n = len(values)
    if n < 6:
        return {"steps": n, "flat": None}
    k = n // 3
    thirds = [values[:k], values[k : n - k], values[n - k :]]
    mid, last = thirds[1], thirds[2]
    diff = statistics.fmean(last) - statistics.fmean(mid)
    se = (statistics.variance(mid) / len(mid) + statistics.variance(last) / len(last)) ** 0.5
    xs = range(len(last))
    mx, my = statistics.fmean(xs), statistics.fmean(last)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, last)) / sxx
    return {
        "steps": n,
        "third_means": [statistics.fmean(t) for t in thirds],
        "last_minus_middle": diff,
        "last_minus_middle_se": se,
        "last_third_slope_per_step": slope,
        "flat": abs(diff) < 2 * se,
    }


def equal_compute(args, cfg, base, examples, imitate, sets, figures, out: Path):
    """Per seed: GRPO (pre-pass included) and more SFT from `base` for args.budget seconds each,
    both at a constant learning rate, scored on each held-out set. An arm whose checkpoint and
    arm.json a run already saved under `out` is reused, not trained again, and a seed's scores
    in `out`/figures.json on the same held-out sets are reused while neither arm trained again."""
    from training.train import checkpoint_card

    const = dict(lr_scheduler_type="constant", warmup_steps=0, save_strategy="no")
    figures["budget_s"] = args.budget
    figures["arms"] = args.arms
    prev = json.loads((out / "figures.json").read_text()) if (out / "figures.json").exists() else {}
    figures["seeds"] = prev.get("seeds", {})  # seeds an earlier run of this comparison finished
    same_base = all(prev.get(k) == figures[k] for k in ("base", "held_out")) and "sft_base_by_split" in prev
    with Renderer() as r:
        if same_base:
            figures["sft_base"], figures["sft_base_by_split"] = prev["sft_base"], prev["sft_base_by_split"]
        elif not args.no_score:
            by_split = {n: score(base, cfg, v, r, args.max_new_tokens) for n, v in sets.items()}
            figures["sft_base_by_split"] = by_split
            figures["sft_base"] = by_split["test"] if "test" in by_split else next(iter(by_split.values()))
            print("base:", json.dumps(by_split))
            write_figures(figures, out / "figures.json", args.seeds)
        for seed in args.seeds:
            c = replace(cfg, seed=seed)
            fig: dict = dict(figures["seeds"].get(str(seed), {}))
            trained = False  # an arm trained in this run: its scores, if any, are stale
            d = out / f"grpo_seed{seed}"
            if "grpo" in args.arms and not ((d / "final").exists() and (d / "arm.json").exists()):
                trained = True
                model, proc = load_trained(base, c)
                t0, cpu0 = time.perf_counter(), tree_cpu()
                arm: dict = {}
                prompts = grpo_examples(examples)
                if c.prepass_prompts:
                    prompts, arm["prepass"] = disagreeing_prompts(c, model, proc, prompts, renderer=r)
                arm["prepass_seconds"] = time.perf_counter() - t0
                left = max(1.0, args.budget - (time.perf_counter() - t0))
                saved = []

                def save(seconds, model, step, now, d=d, c=c, proc=proc, saved=saved, cpu0=cpu0):
                    at = d / f"at{int(seconds)}s"
                    model.save_pretrained(str(at))
                    proc.save_pretrained(str(at))
                    proc.tokenizer.save_pretrained(str(at))
                    checkpoint_card(c).write(at)
                    saved.append(
                        {
                            "budget_s": seconds,
                            "step": step,
                            "elapsed_s": now,
                            "cpu_s": tree_cpu() - cpu0,
                            "path": str(at),
                        }
                    )
                    write_whole(d / "snapshots.json", json.dumps(saved, indent=1))

                tr, _ = run_grpo(
                    c,
                    model,
                    proc,
                    prompts,
                    UNBOUNDED_STEPS,
                    d,
                    renderer=r,
                    callbacks=[time_budget(left), arm_clock(t0, args.save_at, save, d, cpu0)],
                    **const,
                )
                arm["grpo_seconds"] = time.perf_counter() - t0
                arm["grpo_cpu_seconds"] = tree_cpu() - cpu0
                arm["grpo_steps"] = tr.state.global_step
                arm.update(grpo_figures(tr.state.log_history))
                curve = write_curve(d, tr.state.log_history)
                arm["grpo_reward_flatness"] = flatness([x["reward"] for x in curve if "reward" in x])
                arm["snapshots"] = saved
                save_checkpoint(tr, proc, d / "final", c)
                write_whole(d / "arm.json", json.dumps(arm, indent=2))
                print(f"seed {seed} grpo:", json.dumps(arm))
            if (d / "arm.json").exists():
                fig.update(json.loads((d / "arm.json").read_text()))
            d = out / f"sft_seed{seed}"
            if "sft" in args.arms and not ((d / "final").exists() and (d / "arm.json").exists()):
                trained = True
                model, proc = load_trained(base, c)
                t0, cpu0 = time.perf_counter(), tree_cpu()
                tr, _ = run_sft(
                    replace(c, sft_lr=c.sft_lr / 4),
                    model,
                    proc,
                    imitate,
                    UNBOUNDED_STEPS,
                    d,
                    callbacks=[time_budget(args.budget), arm_clock(t0, d=d, cpu0=cpu0)],
                    **const,
                )
                arm = {
                    "sft_seconds": time.perf_counter() - t0,
                    "sft_cpu_seconds": tree_cpu() - cpu0,
                    "sft_steps": tr.state.global_step,
                }
                curve = write_curve(d, tr.state.log_history)
                arm["sft_loss_flatness"] = flatness([x["loss"] for x in curve if "loss" in x])
                save_checkpoint(tr, proc, d / "final", c)
                write_whole(d / "arm.json", json.dumps(arm, indent=2))
            if (d / "arm.json").exists():
                fig.update(json.loads((d / "arm.json").read_text()))
            scored_on = {name: len(v) for name, v in sets.items()}
            if fig.get("scored_on") == scored_on and not trained:
                pass  # an earlier run (or a parallel one, its figures copied here) scored these arms
            elif not args.no_score and all(
                (out / f"{a}_seed{seed}" / "final").exists() for a in ("grpo", "sft")
            ):
                fig["scored_on"] = scored_on
                fig["splits"] = {
                    name: {
                        "sft_only": score(out / f"sft_seed{seed}" / "final", c, v, r, args.max_new_tokens),
                        "sft_plus_grpo": score(
                            out / f"grpo_seed{seed}" / "final", c, v, r, args.max_new_tokens
                        ),
                    }
                    for name, v in sets.items()
                }
                fig.update(next(iter(fig["splits"].values())))
            figures["seeds"][str(seed)] = fig
            print(f"seed {seed}:", json.dumps(fig))
            write_figures(figures, out / "figures.json", args.seeds)
    finish(figures, out / "figures.json", args.seeds)


def write_figures(figures, path: Path, mine) -> None:
    """Write `figures`, keeping the seeds another run on the same --out wrote meanwhile (runs that
    score disjoint --seeds side by side, one per core, join in one figures.json), atomically."""
    if path.exists():
        disk = json.loads(path.read_text())
        if all(disk.get(k) == figures.get(k) for k in ("base", "held_out")):
            for seed, fig in disk.get("seeds", {}).items():
                if int(seed) not in mine:
                    figures["seeds"][seed] = fig
    write_whole(path, json.dumps(figures, indent=2))


def finish(figures, path: Path, mine=()):
    """Summaries (per held-out set) and the GRPO reward curves' flatness, written (keeping the
    seeds other runs on the same --out scored meanwhile; `mine`: this run's) and printed."""
    scored = {k: f for k, f in figures["seeds"].items() if all(a in f for a in ARMS)}
    names = list(figures.get("held_out", {})) or ["test"]
    figures["summary"] = summary(scored.values())
    figures["summary_by_split"] = {
        n: summary([f["splits"][n] for f in scored.values() if n in f.get("splits", {})]) for n in names
    }
    flat = [f["grpo_reward_flatness"] for f in figures["seeds"].values() if "grpo_reward_flatness" in f]
    figures["grpo_reward_flat_in"] = f"{sum(bool(x.get('flat')) for x in flat)} of {len(flat)}"
    # one seed's thirds are a few dozen one-prompt steps; over the seeds the rise from the middle
    # third to the last is measured against its own spread (its standard error over the seeds)
    rises = [x["last_minus_middle"] for x in flat if "last_minus_middle" in x]
    if len(rises) > 1:
        figures["grpo_reward_rise_over_seeds"] = {
            "mean_last_minus_middle": statistics.fmean(rises),
            "se": statistics.stdev(rises) / len(rises) ** 0.5,
            "third_means": [
                statistics.fmean(x["third_means"][i] for x in flat if "third_means" in x) for i in range(3)
            ],
        }
    write_figures(figures, path, mine)
    print(json.dumps(figures, indent=2))
    for n in names:
        if figures["summary_by_split"][n]:
            print(f"\n{n} ({figures.get('held_out', {}).get(n, '?')} transitions)")
            print(
                table(
                    figures.get("sft_base_by_split", {}).get(n, figures.get("sft_base")), scored.values(), n
                )
            )
    if figures.get("budget_s"):
        print(
            "\nthe curves:",
            curve_table(path.parent, sorted(figures["seeds"], key=int), figures["budget_s"]),
            sep="\n",
        )
    s = figures["summary"]
    if "ssim" in s:
        from headline import record  # benchmarks/headline.py: the README's results table

        held = figures.get("held_out", {}).get(names[0], "?")
        # per held-out set: each arm's mean, GRPO's mean lead and the seeds' spread (the larger
        # arm's sd); the test is a mean lead larger than that spread
        by_split = {
            n: {
                k: {x: round(v[x], 4) for x in ("sft_only", "sft_plus_grpo", "mean_lead", "spread")}
                | {"seeds_ahead_by_more_than_spread": f"{v['wins_beyond_spread']} of {len(v['lead'])}"}
                for k, v in figures["summary_by_split"][n].items()
                if k in HEADLINE_SCORES
            }
            for n in names
            if figures["summary_by_split"].get(n)
        }
        missed = [
            f"{n} {k}: mean lead {v['mean_lead']:+.3f} within the seeds' spread {v['spread']:.3f}"
            for n, ks in by_split.items()
            for k, v in ks.items()
            if v["mean_lead"] <= v["spread"]
        ]
        record(
            "rl_vs_sft",
            f"held-out SSIM, SFT+GRPO at equal compute (mean of {len(scored)} seeds)",
            round(s["ssim"]["sft_plus_grpo"], 4),
            round(s["ssim"]["sft_only"], 4),
            f"SFT-only, same {figures.get('budget_s')} s",
            f"{names[0]}: {held} transitions, seeds {' '.join(scored)}",
            unit="SSIM",
            partial=None if len(scored) > 1 else "one seed: no spread to judge a lead by",
            seeds_ahead_by_more_than_spread={
                k: f"{v['wins_beyond_spread']} of {len(v['lead'])}" for k, v in s.items()
            },
            text_f1={a: round(s["text_f1"][a], 4) for a in ARMS} if "text_f1" in s else None,
            grpo_reward_flat_in=figures["grpo_reward_flat_in"],
            grpo_reward_rise_over_seeds=figures.get("grpo_reward_rise_over_seeds"),
            by_split=by_split,
            # each seed's arms (the checkpoints live outside git: a lost machine keeps these)
            per_seed={
                n: {
                    seed: {a: {k: round(f["splits"][n][a][k], 4) for k in HEADLINE_SCORES} for a in ARMS}
                    for seed, f in scored.items()
                    if n in f.get("splits", {})
                }
                for n in names
            },
            not_met="; ".join(missed) or None,
        )


def rescore(args, cfg, base, sets, figures, out: Path):
    """The arms an equal-compute run saved under `out` (sft_seedN/final, grpo_seedN/final) scored
    again on each held-out set, e.g. on every transition of the test and id-test splits instead
    of the run's sample: with greedy answers a few edits that apply or not move a small sample's
    mean, and so the seeds' spread."""
    prev = json.loads((out / "figures.json").read_text())
    figures.update(budget_s=prev.get("budget_s"), seeds={})
    with Renderer() as r:
        figures["sft_base_by_split"] = {
            n: score(base, cfg, v, r, args.max_new_tokens) for n, v in sets.items()
        }
        figures["sft_base"] = next(iter(figures["sft_base_by_split"].values()))
        for seed, old in prev["seeds"].items():
            c = replace(cfg, seed=int(seed))
            fig = {k: v for k, v in old.items() if k not in (*ARMS, "splits")}
            fig["splits"] = {
                name: {
                    "sft_only": score(out / f"sft_seed{seed}" / "final", c, v, r, args.max_new_tokens),
                    "sft_plus_grpo": score(out / f"grpo_seed{seed}" / "final", c, v, r, args.max_new_tokens),
                }
                for name, v in sets.items()
            }
            fig.update(next(iter(fig["splits"].values())))
            figures["seeds"][seed] = fig
            print(f"seed {seed}:", json.dumps(fig))
    tag = "_".join(f"{n}{len(v)}" for n, v in sets.items())
    finish(figures, out / f"figures_{tag}.json", [int(s) for s in prev["seeds"]])


def score_checkpoints(args, cfg, sets, out: Path):
    """Each checkpoint of args.score scored on each held-out set, written to out/scores_<sets>.json."""
    res = {}
    with Renderer() as r:
        for path in args.score:
            res[path] = {n: score(Path(path), cfg, v, r, args.max_new_tokens) for n, v in sets.items()}
            print(path, json.dumps(res[path]))
    tag = "_".join(f"{n}{len(v)}" for n, v in sets.items())
    out.mkdir(parents=True, exist_ok=True)
    write_whole(out / f"scores_{tag}.json", json.dumps(res, indent=2))


def curve_table(out: Path, seeds, budget: float, bins: int = 5) -> str:
    """The arms' curves in `bins` windows of the budget, per seed: GRPO's reward and SFT's loss,
    each the mean over the steps that ended in the window (how many in brackets; the GRPO
    pre-pass fills most of the first window), and GRPO's reward averaged over the seeds."""
    w = budget / bins
    head = " | ".join(f"{round(i * w)}-{round((i + 1) * w)} s" for i in range(bins))
    rows = [f"| seed | arm | {head} |", "| --- | --- |" + " --- |" * bins]
    per_seed = []
    for seed in seeds:
        for arm, key in (("grpo", "reward"), ("sft", "loss")):
            p = out / f"{arm}_seed{seed}" / "curve.json"
            if not p.exists():
                continue
            pts = [
                (min(r["elapsed_s"], budget - 1e-9), r[key])
                for r in json.loads(p.read_text())
                if r.get("elapsed_s") is not None and r.get(key) is not None
            ]
            windows = [[y for x, y in pts if i * w <= x < (i + 1) * w] for i in range(bins)]
            means = [statistics.fmean(v) if v else None for v in windows]
            cells = [f"{m:+.3f} ({len(v)})" if v else "-" for m, v in zip(means, windows)]
            rows.append(f"| {seed} | {arm} {key} | {' | '.join(cells)} |")
            if arm == "grpo":
                per_seed.append(means)
    if per_seed:
        cols = [[m[i] for m in per_seed if m[i] is not None] for i in range(bins)]
        cells = [f"{statistics.fmean(c):+.3f}" if c else "-" for c in cols]
        rows.append(f"| all | grpo reward | {' | '.join(cells)} |")
    return "\n".join(rows)


def summary(seeds) -> dict:
    """Per score: each arm's mean and spread over seeds (sample std), GRPO's lead per seed, the
    mean lead, and in how many seeds it leads by more than the larger spread."""
    seeds = list(seeds)
    out = {}
    for k in SCORES:
        a = [f["sft_only"][k] for f in seeds if f["sft_only"].get(k) is not None]
        b = [f["sft_plus_grpo"][k] for f in seeds if f["sft_plus_grpo"].get(k) is not None]
        if not a or len(a) != len(b):
            continue
        sd = [statistics.stdev(x) if len(x) > 1 else 0.0 for x in (a, b)]
        lead = [y - x for x, y in zip(a, b)]
        out[k] = {
            "sft_only": statistics.fmean(a),
            "sft_plus_grpo": statistics.fmean(b),
            "sd": sd,
            "spread": max(sd),
            "lead": lead,
            "mean_lead": statistics.fmean(lead),
            "lead_sd": statistics.stdev(lead) if len(lead) > 1 else 0.0,
            "wins_beyond_spread": sum(d > max(sd) for d in lead),
        }
    return out


def table(base, seeds, split=None) -> str:
    """The summary of `seeds` (each with both arms' scores, on `split` when given) as a table."""
    seeds = [f["splits"][split] if split and "splits" in f else f for f in seeds]
    rows = [
        "| score | SFT base | SFT-only (mean ± sd) | SFT+GRPO (mean ± sd) | GRPO's lead per seed | mean lead"
        " | seeds ahead by > spread |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for k, s in summary(seeds).items():
        b = f"{base[k]:.4f}" if base and base.get(k) is not None else "-"
        rows.append(
            f"| {k} | {b} | {s['sft_only']:.4f} ± {s['sd'][0]:.4f} | {s['sft_plus_grpo']:.4f} ± {s['sd'][1]:.4f} |"
            f" {' '.join(f'{d:+.4f}' for d in s['lead'])} | {s['mean_lead']:+.4f} |"
            f" {s['wins_beyond_spread']} of {len(s['lead'])} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    main()
