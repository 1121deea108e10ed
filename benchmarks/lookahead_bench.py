"""MiniWoB++ success of the example agent with and without lookahead, live in Chromium, same seeds;
and imagined steps per second against real browser steps per second.

    python benchmarks/lookahead_bench.py [--model retrieval] [--seeds 10]
"""

from __future__ import annotations

import argparse
import time

from corpus.apps import miniwob_app
from corpus.recorder import Recorder
from planning import GoalTextScorer, Lookahead, MiniWoBAgent, recorder_policy
from render import Renderer
from worldmodel.backends import load_backend

TASKS = ["click-button", "click-link", "focus-text", "enter-text", "click-checkboxes", "login-user"]


def run(rec, task, seeds, policy):
    wins, steps, t0 = 0, 0, time.perf_counter()
    for seed in seeds:
        tr = rec.record_trajectory(miniwob_app(task), policy, max_steps=4, seed=seed)
        steps += len(tr)
        wins += bool(tr) and tr[-1].meta.get("reward", 0) > 0
    return wins, steps, time.perf_counter() - t0


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
        real_steps = real_s = 0.0
        for task in args.tasks.split(","):
            w0, s0, t0 = run(rec, task, seeds, recorder_policy(agent))
            n0 = la.imagined_steps
            w1, _, _ = run(rec, task, seeds, recorder_policy(agent, la))
            imagined = la.imagined_steps - n0
            real_steps += s0
            real_s += t0
            rows.append((task, w0, w1, len(seeds), imagined))
            tot = [tot[0] + w0, tot[1] + w1, tot[2] + len(seeds), tot[3] + imagined]
        # imagined-step rate measured on its own, on the screens of one recorded episode
        tr = rec.record_trajectory(miniwob_app("enter-text"), recorder_policy(agent), 3, seed=7)
        cands = [(t.screen, agent(t.screen, t.goal)[:5], t.goal) for t in tr]
        t = time.perf_counter()
        n = 0
        for s, cs, g in cands:
            la.rank(s, g, cs)
            n += len(cs)
        imag_rate = n / (time.perf_counter() - t)
    print(f"{'task':20s} {'agent':>7s} {'+lookahead':>11s}")
    for task, w0, w1, n, _ in rows:
        print(f"{task:20s} {w0:4d}/{n:<3d} {w1:7d}/{n:<3d}")
    print(
        f"{'all':20s} {tot[0]:4d}/{tot[2]:<3d} {tot[1]:7d}/{tot[2]:<3d}   "
        f"success {tot[0] / tot[2]:.2f} -> {tot[1] / tot[2]:.2f} (world model: {args.model})"
    )
    real_rate = real_steps / real_s
    print(f"real browser steps/s : {real_rate:6.2f}")
    print(f"imagined steps/s     : {imag_rate:6.2f}")
    print(f"ratio imagined/real  : {imag_rate / real_rate:6.2f}x")


if __name__ == "__main__":
    main()
