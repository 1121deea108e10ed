"""Does imagination pay? MiniWoB++ success of the example agent alone and with lookahead through
each world model and scorer, live in Chromium, the same seeds in every arm; and imagined steps per
second against real browser steps per second on the same (screen, action) pairs.

    python benchmarks/lookahead_bench.py [--seeds 10] [--arms agent,sim:progress+reward,...]

An arm is `agent` (no lookahead) or `MODEL:SCORER[:MODE]`, SCORER one of goal-text, progress,
reward, progress+reward, MODE the world model's prediction mode (document, the default, or edit). The learned reward is fitted on the bundled corpus' training split first; no
world model ever sees the real next screen.
"""

from __future__ import annotations

import argparse
import time

from corpus.apps import miniwob_app
from corpus.explorer import solver_policy
from corpus.recorder import Recorder
from corpus.store import load_corpus
from worldmodel import (
    GoalTextScorer,
    LearnedReward,
    Lookahead,
    MiniWoBAgent,
    ProgressScorer,
    Query,
    Renderer,
    WeightedScorer,
    WorldModel,
    recorder_policy,
)
from worldmodel.dataset import iter_transitions

# The myopic agent fails the typing and checkbox tasks and the multi-step ones; it wins the
# single-click ones. The reserved evaluation pages (flight/) are never used here.
TASKS = [
    "click-button",
    "click-link",
    "focus-text",
    "focus-text-2",
    "click-test-2",
    "enter-text",
    "enter-password",
    "login-user",
    "click-checkboxes",
    "click-option",
    "click-button-sequence",
    "click-widget",
]
ARMS = ["agent", "retrieval:progress+reward", "sim:goal-text", "sim:progress", "sim:progress+reward"]
MAX_STEPS = 6


def scorer_for(name: str, reward: LearnedReward):
    parts = {"goal-text": GoalTextScorer(), "progress": ProgressScorer(), "reward": reward}
    chosen = name.split("+")
    unknown = [c for c in chosen if c not in parts]
    if unknown:
        raise SystemExit(f"error: unknown scorer {unknown[0]!r} (use {', '.join(parts)})")
    return parts[chosen[0]] if len(chosen) == 1 else WeightedScorer([(parts[c], 1.0) for c in chosen])


def run_arm(rec, tasks, seeds, policy) -> dict:
    """Per task: wins, real steps, and the wall time of the episodes."""
    out = {}
    for task in tasks:
        wins = steps = 0
        t0 = time.perf_counter()
        for seed in seeds:
            tr = rec.record_trajectory(miniwob_app(task), policy, max_steps=MAX_STEPS, seed=seed)
            steps += len(tr)
            wins += bool(tr) and tr[-1].meta.get("reward", 0) > 0
        out[task] = {"wins": wins, "steps": steps, "wall_s": time.perf_counter() - t0}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--arms", default=",".join(ARMS))
    ap.add_argument("--top-k", type=int, default=12)
    args = ap.parse_args()
    seeds = list(range(100, 100 + args.seeds))
    tasks = args.tasks.split(",")
    dd = load_corpus("corpus/data/default")
    with Renderer() as r, Recorder() as rec:
        t = time.perf_counter()
        reward = LearnedReward(renderer=r).fit(iter_transitions(dd["train"], skipped=[]))
        print(f"learned reward: fitted on {reward.trained_on} transitions in {time.perf_counter() - t:.1f}s")
        agent = MiniWoBAgent(r)
        results = {}
        for arm in args.arms.split(","):
            if arm == "agent":
                results[arm] = (run_arm(rec, tasks, seeds, recorder_policy(agent, max_actions=MAX_STEPS)), 0)
                continue
            model, scorer, mode = (arm.split(":") + ["document"])[:3]
            with WorldModel.load(model, renderer=r) as wm:
                la = Lookahead(wm, scorer_for(scorer, reward), top_k=args.top_k, confident_at=None, mode=mode)
                res = run_arm(rec, tasks, seeds, recorder_policy(agent, la, max_actions=MAX_STEPS))
                results[arm] = (res, la.imagined_steps)
            print(f"  done: {arm}", flush=True)
        # Steps per second on the same (screen, action) pairs: the real browser (scripted solver,
        # settle time included) against each world model imagining them (renders uncached).
        t = time.perf_counter()
        real = [
            x
            for seed in seeds
            for x in rec.record_trajectory(miniwob_app("login-user"), solver_policy, 4, seed=seed)
        ]
        real_rate = len(real) / (time.perf_counter() - t)
    rates = {}
    for model in sorted({a.split(":")[0] for a in args.arms.split(",") if a != "agent"}):
        with Renderer(cache_size=0) as fresh, WorldModel.load(model, renderer=fresh) as wm:
            wm.predict_many([Query(x.screen, x.action, x.goal) for x in real[:2]])  # warm-up
            t = time.perf_counter()
            wm.predict_many([Query(x.screen, x.action, x.goal) for x in real])
            rates[model] = len(real) / (time.perf_counter() - t)

    n = len(seeds)
    names = list(results)
    print(f"\n{'task':22s} " + " ".join(f"{a:>22s}" for a in names))
    for task in tasks:
        print(f"{task:22s} " + " ".join(f"{results[a][0][task]['wins']:>17d}/{n:<4d}" for a in names))
    print(
        f"\n{'arm':26s} {'success':>8s} {'vs agent':>9s} {'steps/success':>14s} {'imagined/real':>14s} {'wall s':>7s}"
    )
    base = sum(v["wins"] for v in results[names[0]][0].values()) / (n * len(tasks))
    for a in names:
        res, imagined = results[a]
        wins = sum(v["wins"] for v in res.values())
        steps = sum(v["steps"] for v in res.values())
        wall = sum(v["wall_s"] for v in res.values())
        rate = wins / (n * len(tasks))
        print(
            f"{a:26s} {rate:8.2f} {100 * (rate - base):+8.0f}p {steps / max(1, wins):14.2f}"
            f" {imagined / max(1, steps):14.2f} {wall:7.0f}"
        )
    print(f"\nreal browser steps/s (login-user solver, {len(real)} steps): {real_rate:6.2f}")
    for model, rate in rates.items():
        print(f"imagined steps/s, {model:12s}: {rate:6.2f}  ({rate / real_rate:.2f}x real)")


if __name__ == "__main__":
    main()
