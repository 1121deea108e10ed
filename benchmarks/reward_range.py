"""Do the GRPO rewards have range? Each reward on five answers per transition of the bundled test
split: the ground truth (the recorded next HTML), the copy (the current screen's HTML), a blank
page, a random completion (random words and tags of the corpus) and a plausible wrong screen
(another transition's next screen of the same app).

    python benchmarks/reward_range.py [--limit N] [--seed 0]

A reward with range puts the ground truth well above the copy, and the copy well above blank,
random and wrong. The raw SSIM the rewards paid before (r_sem_raw) is printed beside them as
the baseline measured in the same run. Each answer is a whole document, scored as GRPO scores
a document target (training/rewards.py, the same functions worldmodel.evaluate reports).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time

import numpy as np

from render import Renderer
from training.rewards import SemanticReward, reward_functions
from worldmodel.dataset import iter_transitions, load_corpus

ANSWERS = ("ground truth", "copy", "blank", "random", "wrong screen")
_WORD = re.compile(r"[A-Za-z]{3,12}")


def random_completion(rng: random.Random, words: list[str], width: int, height: int) -> str:
    """What an untrained model writes: a sized page of random tags and corpus words."""
    tags = ("div", "p", "span", "button", "h3", "li")
    body = "".join(
        f"<{t}>{' '.join(rng.choice(words) for _ in range(rng.randint(1, 4)))}</{t}>"
        for t in (rng.choice(tags) for _ in range(rng.randint(3, 12)))
    )
    return f'<html><body style="margin:0"><div style="width:{width}px;height:{height}px">{body}</div></body></html>'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=0, help="first N test transitions (0 = all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None, help="also write the figures here")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    ts = [t for t in iter_transitions(load_corpus()["test"]) if t.next_screen.html]
    ts = ts[: args.limit] if args.limit else ts
    words = sorted({w for t in ts for w in _WORD.findall(t.screen.html or "")}) or ["word"]
    t0 = time.perf_counter()
    rows: dict[str, dict[str, list]] = {a: {} for a in ANSWERS}
    with Renderer() as r:
        funcs = reward_functions(r, text=True)
        raw = SemanticReward(normalised=False, batches=funcs[0].batches)
        raw.__name__ = "r_sem_raw"
        for t in ts:
            vp = t.screen.viewport()
            same_app = [
                u.next_screen.html for u in ts if u.app == t.app and u.next_screen.html != t.next_screen.html
            ]
            answers = {
                "ground truth": t.next_screen.html,
                "copy": t.screen.html or "",
                "blank": "<html><body></body></html>",
                "random": random_completion(rng, words, vp.width, vp.height),
                "wrong screen": rng.choice(same_app) if same_app else None,
            }
            names = [a for a in ANSWERS if answers[a] is not None]
            n = len(names)
            cols = dict(
                screen=[t.screen.png()] * n,
                next_screen=[t.next_screen.png()] * n,
                action=[t.action.to_json()] * n,
                width=[vp.width] * n,
                height=[vp.height] * n,
                scale=[vp.device_scale_factor] * n,
                next_html=[t.next_screen.html] * n,
                screen_html=[t.screen.html or ""] * n,
            )
            completions = [answers[a] for a in names]
            batch = funcs[0].batches.build(completions, **cols)  # rendered once, judged by each
            for f in [*funcs, raw]:
                for a, v in zip(names, f.score(batch)):
                    rows[a].setdefault(f.__name__, []).append(v)
    secs = time.perf_counter() - t0
    rewards = ["r_sem", "r_text", "r_act", "r_format", "r_sem_raw"]
    figures = {"transitions": len(ts), "seconds": secs, "answers": {}}
    print(f"{len(ts)} test transitions, {secs:.0f} s (2 shared CPU cores: timing is noisy)")
    print("| answer | " + " | ".join(rewards) + " |")
    print("| --- |" + " --- |" * len(rewards))
    for a in ANSWERS:
        cells, fig = [], {}
        for k in rewards:
            vals = [v for v in rows[a].get(k, []) if v is not None]
            if not vals:
                cells.append("n/a")
                continue
            m = float(np.mean(vals))
            fig[k] = {"mean": m, "min": float(np.min(vals)), "max": float(np.max(vals)), "n": len(vals)}
            cells.append(f"{m:+.3f} [{np.min(vals):+.2f}, {np.max(vals):+.2f}]")
        figures["answers"][a] = fig
        print(f"| {a} | " + " | ".join(cells) + " |")
    gt, cp = figures["answers"]["ground truth"], figures["answers"]["copy"]
    for k in rewards:
        if k in gt and k in cp:
            worst = max(figures["answers"][a][k]["mean"] for a in ANSWERS[2:] if k in figures["answers"][a])
            print(
                f"{k:9s} ground truth - copy {gt[k]['mean'] - cp[k]['mean']:+.3f}   "
                f"copy - best of blank/random/wrong {cp[k]['mean'] - worst:+.3f}"
            )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=2)
    from headline import record  # benchmarks/headline.py: the README's results table

    def gap(k, a="ground truth", b="copy"):
        return round(figures["answers"][a][k]["mean"] - figures["answers"][b][k]["mean"], 3)

    def copy_over_wrong(k):
        worst = max(figures["answers"][a][k]["mean"] for a in ANSWERS[2:] if k in figures["answers"][a])
        return round(cp[k]["mean"] - worst, 3)

    record(
        "reward_range",
        "r_sem: ground truth minus the copy",
        gap("r_sem"),
        gap("r_sem_raw"),
        "raw SSIM (the reward before)",
        f"bundled test split, {len(ts)} transitions",
        unit="reward gap",
        partial=args.limit and f"--limit {args.limit}",
        copy_minus_best_wrong=copy_over_wrong("r_sem"),
        copy_minus_best_wrong_raw=copy_over_wrong("r_sem_raw"),
    )


if __name__ == "__main__":
    main()
