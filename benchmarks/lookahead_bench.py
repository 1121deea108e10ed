"""MiniWoB++ success of the example agent with and without lookahead, live in Chromium, same seeds;
and imagined steps per second against real browser steps per second.

    python benchmarks/lookahead_bench.py [--model retrieval] [--seeds 10]
"""

from __future__ import annotations

import argparse
import time

from corpus.apps import miniwob_app
from corpus.explorer import solver_policy
from corpus.recorder import Recorder
from planning import GoalTextScorer, Lookahead, MiniWoBAgent, recorder_policy
from render import Renderer
from worldmodel.backends import Query, load_backend
from worldmodel.predict import predict_many

TASKS = ["click-button", "click-link", "focus-text", "enter-text", "click-checkboxes", "login-user"]


def run(rec, task, seeds, policy) -> int:
    """Episodes won: the task's own reward is positive at the end."""
    wins = 0
    for seed in seeds:
        tr = rec.record_trajectory(miniwob_app(task), policy, max_steps=4, seed=seed)
        wins += bool(tr) and tr[-1].meta.get("reward", 0) > 0
    return wins


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="retrieval")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--tasks", default=",".join(TASKS))
    args = ap.parse_args()
    seeds = list(range(100, 100 + args.seeds))
    with Renderer() as r, Recorder() as rec:
        agent = MiniWoBAgent(r)
        la = Lookahead(load_backend(args.model), GoalTextScorer(), top_k=5, confident_at=None, renderer=r)
        rows, tot = [], [0, 0, 0, 0]
        for task in args.tasks.split(","):
            w0 = run(rec, task, seeds, recorder_policy(agent))
            n0 = la.imagined_steps
            w1 = run(rec, task, seeds, recorder_policy(agent, la))
            imagined = la.imagined_steps - n0
            rows.append((task, w0, w1, len(seeds), imagined))
            tot = [tot[0] + w0, tot[1] + w1, tot[2] + len(seeds), tot[3] + imagined]
        # Steps per second on the same (screen, action) pairs: the real browser (scripted solver,
        # settle time included) against the world model imagining them (renders uncached).
        t = time.perf_counter()
        real = [
            x
            for seed in seeds
            for x in rec.record_trajectory(miniwob_app("enter-text"), solver_policy, 4, seed=seed)
        ]
        real_rate = len(real) / (time.perf_counter() - t)
    with Renderer(cache_size=0) as fresh:
        wm = load_backend(args.model)
        predict_many(
            [Query(x.screen, x.action, x.goal) for x in real[:2]], wm, fresh
        )  # warm-up: browser start
        t = time.perf_counter()
        predict_many([Query(x.screen, x.action, x.goal) for x in real], wm, fresh)
        imag_rate = len(real) / (time.perf_counter() - t)
    print(f"{'task':20s} {'agent':>7s} {'+lookahead':>11s}")
    for task, w0, w1, n, _ in rows:
        print(f"{task:20s} {w0:4d}/{n:<3d} {w1:7d}/{n:<3d}")
    print(
        f"{'all':20s} {tot[0]:4d}/{tot[2]:<3d} {tot[1]:7d}/{tot[2]:<3d}   "
        f"success {tot[0] / tot[2]:.2f} -> {tot[1] / tot[2]:.2f} (world model: {args.model})"
    )
    print(f"real browser steps/s : {real_rate:6.2f}")
    print(f"imagined steps/s     : {imag_rate:6.2f}")
    print(f"ratio imagined/real  : {imag_rate / real_rate:6.2f}x")


if __name__ == "__main__":
    main()
