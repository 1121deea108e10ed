"""Which MiniWoB++ tasks outside the bundle the recorder can act on, and how exactly it captures them.

    python benchmarks/miniwob_survey.py [--episodes 2] [--steps 5] [--tasks a,b,...]

Issue #37 asks for every MiniWoB++ task the recorder can act on in a larger training corpus,
the reserved ones (corpus.build.reserved_miniwob) excepted. This records each task of the
installed wheel that is neither bundled (corpus.build.BUNDLED_MINIWOB) nor reserved with the
explorer `wm corpus build` uses, and scores each recorded next screen's captured HTML, rendered
back in the sandbox, against its own screenshot (blurred SSIM and share of pixels off, as the
capture survey does). Per task: the steps recorded, how many changed the screen, the capture's
mean and worst blurred SSIM, and a verdict: `recordable` (the explorer changed the screen, took
more than one step in some episode, and every capture came back at >= 0.95 blurred SSIM), else
why not. Nothing is saved but the table.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository root, to run as a script from anywhere

from corpus.apps import miniwob_app, miniwob_tasks  # noqa: E402
from corpus.build import BUNDLED_MINIWOB, reserved_miniwob  # noqa: E402
from corpus.explorer import explore  # noqa: E402
from corpus.recorder import Recorder  # noqa: E402
from render import Renderer, RenderError  # noqa: E402
from render.metrics import blur_ssim, pixels_off  # noqa: E402

FLOOR = 0.95  # blurred SSIM every capture of a recordable task reaches


def candidates() -> list[str]:
    """The wheel's tasks that are neither bundled nor reserved."""
    return [t for t in miniwob_tasks() if t not in BUNDLED_MINIWOB and not reserved_miniwob(t)]


def survey_task(rec: Recorder, r: Renderer, task: str, episodes: int, steps: int) -> dict:
    """One task's row: steps, changed, the captures' blurred SSIM (mean, min), pixels off (max),
    the verdict and the wall time."""
    t0 = time.perf_counter()
    row = dict(task=task, steps=0, changed=0, ssim=float("nan"), worst=float("nan"), off=float("nan"))
    try:
        trs = [
            t
            for seed in range(episodes)
            for t in rec.record_trajectory(miniwob_app(task), explore, steps, seed)
        ]
    except Exception as e:  # noqa: BLE001 - a task that cannot be recorded is a row, not the end
        return dict(
            row, verdict=f"not recorded: {type(e).__name__}: {str(e)[:80]}", secs=time.perf_counter() - t0
        )
    row["steps"] = len(trs)
    row["changed"] = sum(t.next_screen.html != t.screen.html for t in trs)
    shots = [t.next_screen for t in trs]
    res = r.render_many([(s.html or "", s.viewport()) for s in shots])
    scores = [
        (0.0, 1.0)
        if isinstance(x, RenderError)
        else (blur_ssim(x.image, s.array), pixels_off(x.image, s.array))
        for s, x in zip(shots, res)
    ]
    if scores:
        row.update(
            ssim=sum(b for b, _ in scores) / len(scores),
            worst=min(b for b, _ in scores),
            off=max(p for _, p in scores),
        )
    if not trs:
        verdict = "no step: the explorer found nothing to act on"
    elif not row["changed"]:
        verdict = "no step changed the screen"
    elif len(trs) <= episodes:
        verdict = "ends at its first action"  # every episode one step: the task's cover, nothing else
    elif row["worst"] < FLOOR:
        verdict = f"a capture below {FLOOR} blurred SSIM"
    else:
        verdict = "recordable"
    return dict(row, verdict=verdict, secs=time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--episodes", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--tasks", default="", help="comma-separated tasks (default: every candidate)")
    a = ap.parse_args()
    tasks = [t for t in a.tasks.split(",") if t] or candidates()
    bad = [t for t in tasks if reserved_miniwob(t)]
    if bad:
        raise SystemExit(f"error: task {bad[0]!r} is reserved for independent evaluation")
    print(
        f"{len(tasks)} tasks, {a.episodes} episodes x {a.steps} steps each (explorer, seeds 0..{a.episodes - 1})\n"
    )
    print("| task | steps | changed | blurred SSIM mean | worst | pixels off max | verdict | s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = []
    with Recorder() as rec, Renderer(cache_size=0) as r:
        for task in tasks:
            x = survey_task(rec, r, task, a.episodes, a.steps)
            rows.append(x)
            print(
                f"| {task} | {x['steps']} | {x['changed']} | {x['ssim']:.4f} | {x['worst']:.4f} | "
                f"{100 * x['off']:.1f}% | {x['verdict']} | {x['secs']:.0f} |",
                flush=True,
            )
    ok = [x["task"] for x in rows if x["verdict"] == "recordable"]
    print(f"\nrecordable: {len(ok)} of {len(rows)}: {', '.join(ok)}")


if __name__ == "__main__":
    main()
