"""Phone import at scale: screens/s on 1 and N processes, and peak memory on 1x and Kx the input.

    python benchmarks/import_scale.py [--data DIR] [--episodes E] [--procs 2] [--copies 4]

Input: the shared phone dev set (`--data DIR` or $WM_ANDROID_REAL, default ../shared/android_real
beside the repository; its dev.tfrecord.gz), or its first E episodes (`--episodes`), written here
as one TFRecord shard. Each import runs as `wm corpus import-android` in its own process tree,
sampled every 0.2 s for the resident memory of the Python processes (the pipeline's own) and of
the whole tree (Chromium included).

1. Speed: the same shard with `--num-proc 1` and `--num-proc N`, alternated `--repeats` times
   (this machine's speed drifts by 10% and more from minute to minute); screens/s of each, the
   ratio of each pair and of all runs of each pooled. Beside it, the machine's own speed-up on N processes
   of a plain CPU-bound Python loop, measured in the same run: the most any pipeline gets.
2. Memory: 1x (the shard) and Kx (a folder of K copies of it, AndroidControl's layout of many
   shards) with `--num-proc 1`; the peak of each and the ratio. Rows are streamed to disk, so
   the peak should not grow with the input.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository root, to run as a script from anywhere

from render import proctree  # noqa: E402


def data_folder(arg: str | None) -> Path:
    d = Path(arg or os.environ.get("WM_ANDROID_REAL") or ROOT.parent / "shared" / "android_real")
    if not (d / "dev.tfrecord.gz").is_file():
        raise SystemExit(f"error: no dev.tfrecord.gz in {d} (give --data DIR or set WM_ANDROID_REAL)")
    return d


def first_episodes(src: Path, n: int, out: Path) -> None:
    """The first n episodes of src as one plain TFRecord file (all of them when n is 0)."""
    import gzip

    with gzip.open(src, "rb") as f, open(out, "wb") as g:
        for _ in range(n or 10**9):
            head = f.read(12)  # length (8) and its CRC (4), then the record and its CRC (4)
            if len(head) < 12:
                break
            size = int.from_bytes(head[:8], "little")
            g.write(head + f.read(size + 4))


def _tree_sample(pid: int, cpu: dict) -> tuple[int, int, int]:
    """(RSS of the python processes, RSS of every process, resident anonymous memory of the python
    processes) in the tree under pid, bytes; the CPU seconds each process of the tree has used so
    far go into `cpu`, keyed by (pid, start time), so processes that end between samples keep
    their last reading."""
    py = alln = anon = 0
    for q in proctree.descendants(pid):
        rss = int(proctree.rss_mb(q) * 2**20)
        alln += rss
        if proctree.name(q).startswith(("python", "wm")):
            py += rss
            anon += int(proctree.anon_mb(q) * 2**20)
        cpu[(q, proctree.started(q))] = proctree.cpu_seconds(q)
    return py, alln, anon


def run_import(src: Path, out: Path, procs: int) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "wmcli",
        "corpus",
        "import-android",
        str(src),
        "-o",
        str(out),
        "--num-proc",
        str(procs),
    ]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    peak, cpu = [0, 0, 0], {}

    def sample():
        while p.poll() is None:
            peak[:] = map(max, peak, _tree_sample(p.pid, cpu))
            time.sleep(0.2)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    text = p.communicate()[0]
    th.join()
    secs = time.perf_counter() - t0
    if p.returncode:
        raise SystemExit(f"error: {' '.join(cmd)} failed:\n{text[-2000:]}")
    m = re.search(r"kept (\d+) of (\d+) transitions.*?(\d+) screens in", text)
    return {
        "kept": int(m.group(1)),
        "of": int(m.group(2)),
        "screens": int(m.group(3)),
        "secs": secs,
        "cpu_s": sum(cpu.values()),
        "cores_busy": sum(cpu.values()) / secs,
        "py_mb": peak[0] / 2**20,
        "all_mb": peak[1] / 2**20,
        "anon_mb": peak[2] / 2**20,
    }


def _spin(n: int = 20_000_000) -> None:
    s = 0
    for i in range(n):
        s += i * i % 7


def machine_speedup(procs: int, repeats: int = 7) -> float:
    """The median speed-up of `procs` processes running a CPU-bound Python loop at once against
    one running it alone (procs x one's time / the group's time)."""
    import multiprocessing as mp
    import statistics

    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        _spin()
        one = time.perf_counter() - t0
        ps = [mp.get_context("fork").Process(target=_spin) for _ in range(procs)]
        t0 = time.perf_counter()
        for p in ps:
            p.start()
        for p in ps:
            p.join()
        out.append(procs * one / (time.perf_counter() - t0))
    return statistics.median(out)


def _pooled(runs: list[dict]) -> dict:
    """Runs of the same import as one: screens and seconds summed (screens/s over all of them),
    peaks the highest."""
    out = {k: sum(r[k] for r in runs) for k in ("kept", "of", "screens", "secs", "cpu_s")}
    out["cores_busy"] = out["cpu_s"] / out["secs"]
    return out | {k: max(r[k] for r in runs) for k in ("py_mb", "all_mb", "anon_mb")}


def line(label: str, r: dict) -> str:
    return (
        f"{label:<28} kept {r['kept']:>4}/{r['of']:<4} {r['screens']:>5} screens {r['secs']:7.1f} s "
        f"{r['screens'] / r['secs']:6.2f} screens/s  {r['cpu_s'] / r['screens']:4.2f} CPU s/screen, {r['cores_busy']:4.2f} cores busy  peak RSS python {r['py_mb']:7.0f} MB (anonymous {r['anon_mb']:5.0f}), tree {r['all_mb']:7.0f} MB"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=None)
    ap.add_argument("--episodes", type=int, default=0, help="first E episodes only (0: all)")
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--only", choices=("speed", "memory"), default=None)
    ap.add_argument("--repeats", type=int, default=3, help="speed runs of each, alternated")
    args = ap.parse_args()
    src = data_folder(args.data) / "dev.tfrecord.gz"
    work = Path(tempfile.mkdtemp(prefix="import-scale-"))
    a = b = x1 = xk = None
    try:
        one = work / "one.tfrecord"
        first_episodes(src, args.episodes, one)
        if args.only != "memory":
            machine = machine_speedup(args.procs)
            ones, manys = [], []
            for k in range(args.repeats):
                ones.append(run_import(one, work / f"c1-{k}", 1))
                manys.append(run_import(one, work / f"c{args.procs}-{k}", args.procs))
                print(line(f"1 process, run {k + 1}", ones[-1]))
                print(line(f"{args.procs} processes, run {k + 1}", manys[-1]))
                print(f"  ratio of this pair: {ones[-1]['secs'] / manys[-1]['secs']:.2f}")
            a, b = _pooled(ones), _pooled(manys)
            print(
                f"speed ratio {args.procs}/1 (screens/s over all runs of each): {(b['screens'] / b['secs']) / (a['screens'] / a['secs']):.2f}"
                f" (bounded by {os.cpu_count()} cores / {a['cores_busy']:.2f} cores one process already keeps busy"
                f" = {os.cpu_count() / a['cores_busy']:.2f}; this machine's own speed-up on {args.procs} processes"
                f" of a CPU-bound Python loop, measured now: {machine:.2f})"
            )
        if args.only != "speed":
            many = work / "many"
            many.mkdir()
            for k in range(args.copies):
                (many / f"part-{k:05d}.tfrecord").symlink_to(one)
            x1 = run_import(one, work / "m1", 1)
            xk = run_import(many, work / "mk", 1)
            print(line("1x input, 1 process", x1))
            print(line(f"{args.copies}x input, 1 process", xk))
            print(
                f"peak memory ratio {args.copies}x/1x: python {xk['py_mb'] / x1['py_mb']:.2f} "
                f"(anonymous {xk['anon_mb'] / x1['anon_mb']:.2f}), whole tree {xk['all_mb'] / x1['all_mb']:.2f}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if a and b:
        from headline import record  # benchmarks/headline.py: the README's results table

        memory = {}
        if x1 and xk:
            memory = dict(
                peak_python_mb={"1x": round(x1["py_mb"]), f"{args.copies}x": round(xk["py_mb"])},
                peak_tree_mb={"1x": round(x1["all_mb"]), f"{args.copies}x": round(xk["all_mb"])},
                peak_python_anon_mb={"1x": round(x1["anon_mb"]), f"{args.copies}x": round(xk["anon_mb"])},
            )
        ratio = round((b["screens"] / b["secs"]) / (a["screens"] / a["secs"]), 2)
        missed = [f"speed ratio {ratio} (>= 1.7 asked)"] if args.procs == 2 and ratio < 1.7 else []
        if x1 and xk:  # the issue's memory bound (#38), on each of the three measures
            for what, key in (("Python", "py_mb"), ("anonymous", "anon_mb"), ("tree", "all_mb")):
                if xk[key] / x1[key] > 1.3:
                    missed.append(f"{what} memory ratio {xk[key] / x1[key]:.2f} (<= 1.3 asked)")
        record(
            "import_scale",
            f"phone import screens/s on {args.procs} processes (wm corpus import-android --num-proc)",
            round(b["screens"] / b["secs"], 2),
            round(a["screens"] / a["secs"], 2),
            "1 process",
            f"shared phone dev set{f', first {args.episodes} episodes' if args.episodes else ''}, "
            f"{ones[0]['screens']} screens, {args.repeats} runs of each alternated",
            unit="screens/s",
            partial=args.episodes and f"--episodes {args.episodes}",
            ratio=ratio,
            not_met=", ".join(missed) or None,
            cores_busy_one_process=round(a["cores_busy"], 2),
            pair_ratios=[round(x["secs"] / y["secs"], 2) for x, y in zip(ones, manys)],
            machine_speedup_python_loop=round(machine, 2),
            **memory,
        )


if __name__ == "__main__":
    main()
