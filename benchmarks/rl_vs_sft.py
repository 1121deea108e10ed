"""Does render-aware RL help? Same start (SFT for N steps), then M more steps of either SFT or GRPO;
both scored on held-out test transitions with the reward functions on rendered pixels.

    python benchmarks/rl_vs_sft.py [--sft-steps 120] [--extra-steps 16] [--eval 24] [--target edit]

With `--target edit` the model writes edits of the numbered current screen (shown in the
prompt, truncated to --html-chars) and every reward applies the edit first.
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
from training.data import to_examples
from training.rewards import ActionReward, FormatReward, SemanticReward
from training.train import _load, _save, completion_budget, init_checkpoint, run_grpo, run_sft
from worldmodel.backends import Query
from worldmodel.backends.hf import TransformersBackend


def score(path, cfg, test, renderer, max_new_tokens):
    backend = TransformersBackend(
        path, device=cfg.device, max_new_tokens=max_new_tokens, with_html=cfg.with_html
    )
    qs = [Query(t["_screen"], t["_action"], t["_goal"]) for t in test]
    outs = backend.complete_edits(qs) if cfg.target == "edit" else backend.complete(qs)
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
    ap.add_argument("--extra-steps", type=int, default=16)
    ap.add_argument("--eval", type=int, default=24)
    ap.add_argument("--out", default="runs/rl_vs_sft")
    ap.add_argument("--max-new-tokens", type=int, default=384)
    ap.add_argument("--target", choices=("document", "edit"), default="document")
    ap.add_argument("--html-chars", type=int, default=2000, help="edit target: the prompt's HTML budget")
    args = ap.parse_args()
    out = Path(args.out)
    edit = args.target == "edit"
    cfg = preset("tiny", output_dir=str(out), target=args.target)
    if edit:
        cfg = replace(cfg, with_html=True, max_prompt_html_chars=args.html_chars)
    dd = load_corpus()
    examples = to_examples(dd["train"], cfg.with_html, cfg.max_prompt_html_chars, target=cfg.target)
    from corpus.store import from_row

    test_rows = dd["test"].shuffle(seed=0, keep_in_memory=True).select(range(min(args.eval, len(dd["test"]))))
    test = to_examples(test_rows, cfg.with_html, cfg.max_prompt_html_chars, target=cfg.target)
    for e, row in zip(test, test_rows):
        t = from_row(row)
        e["_screen"], e["_action"], e["_goal"] = t.screen, t.action, t.goal

    t0 = time.perf_counter()
    start = init_checkpoint(cfg, dd["train"])
    model, proc = _load(start, cfg)
    if edit:
        cfg = replace(cfg, max_completion_length=completion_budget(examples, proc.tokenizer, cfg))
    trainer, _ = run_sft(cfg, model, proc, examples, args.sft_steps, out / "base")
    base = _save(trainer, proc, out / "base" / "final")
    t_base = time.perf_counter() - t0

    model, proc = _load(base, cfg)
    t0 = time.perf_counter()
    tr, _ = run_sft(
        replace(cfg, sft_lr=cfg.sft_lr / 4), model, proc, examples, args.extra_steps, out / "more_sft"
    )
    sft = _save(tr, proc, out / "more_sft" / "final")
    t_sft = time.perf_counter() - t0

    model, proc = _load(base, cfg)
    t0 = time.perf_counter()
    with Renderer() as r:
        tr, _ = run_grpo(cfg, model, proc, examples, args.extra_steps, out / "grpo", renderer=r)
        rl = _save(tr, proc, out / "grpo" / "final")
        t_rl = time.perf_counter() - t0
        figures = {
            "sft_base": score(base, cfg, test, r, args.max_new_tokens),
            "sft_plus_sft": score(sft, cfg, test, r, args.max_new_tokens),
            "sft_plus_grpo": score(rl, cfg, test, r, args.max_new_tokens),
            "seconds": {"base_sft": t_base, "extra_sft": t_sft, "extra_grpo": t_rl},
            "steps": {"base_sft": args.sft_steps, "extra": args.extra_steps},
            "held_out_transitions": len(test),
            "target": cfg.target,
            "grpo_max_completion_length": cfg.max_completion_length,
        }
    (out / "figures.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))
    for k in ("r_sem", "r_act", "r_format"):
        a, b = figures["sft_plus_sft"][k], figures["sft_plus_grpo"][k]
        print(f"{k:9s} SFT-only {a:.4f}   SFT+GRPO {b:.4f}   ratio {b / a if a else float('nan'):.3f}")


if __name__ == "__main__":
    main()
