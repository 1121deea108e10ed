"""Importing real phone traces: how close the translated screens come to their screenshots, how
many transitions are kept, and how fast, per app.

Reads the shared development set (`--data`, default /work/shared/android_real: AndroidControl-format
episodes of F-Droid apps and raw DroidBot folders; it carries no licence, so it is read here and
never copied into the repository) when it is present, and says so and exits when it is not.

Per app it prints the revised screens' mean blurred SSIM and share of pixels off, the share of
transitions kept, seconds per screen (translation, revision and the capture report, on this
machine's cores) and the mean document length; the ratio column compares pixels off after
revision with the translation's own first render in the same run (the baseline). Timings are
noisy when other work shares the CPU.

    python3 benchmarks/android_import.py [--data DIR] [--limit N] [--droidbot]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

DATA = Path("/work/shared/android_real")


def tree_cpu_seconds() -> float:
    """CPU seconds used so far by this process and every process under it (Chromium's), from
    /proc: a figure the other work sharing the machine does not inflate, unlike wall time."""
    import os

    tck = os.sysconf("SC_CLK_TCK")
    stats = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                f = open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(d)] = (int(f[1]), (int(f[11]) + int(f[12])) / tck)  # ppid, utime + stime
    me, total, frontier = os.getpid(), 0.0, [os.getpid()]
    seen = {me}
    while frontier:
        p = frontier.pop()
        total += stats.get(p, (0, 0.0))[1]
        for c, (pp, _) in stats.items():
            if pp == p and c not in seen:
                seen.add(c)
                frontier.append(c)
    return total


def _strict(rows) -> float:
    """Share of screens at blurred SSIM >= 0.9 with <= 5% of pixels off (the issue's bar, per screen)."""
    return sum(r["blur_ssim"] >= 0.9 and r["pixels_off"] <= 0.05 for r in rows) / max(1, len(rows))


def table(rep, title: str, cpu: float | None = None) -> None:
    apps = defaultdict(list)
    for r in rep.rows:
        apps[r["app"]].append(r)
    kept = defaultdict(int)
    for t in rep.kept:
        kept[t.app] += 1
    total = defaultdict(int)
    for t in rep.kept:
        total[t.app] += 1
    print(f"\n{title}: {rep.summary()}")
    print(
        f"{'app':42} {'screens':>7} {'blurSSIM':>8} {'off':>6} {'off/first':>9} {'passed':>6} {'strict':>6} {'chars':>6}"
    )
    for app, rows in sorted(apps.items()):
        bs = statistics.mean(r["blur_ssim"] for r in rows)
        off = statistics.mean(r["pixels_off"] for r in rows)
        first = statistics.mean(r["first_pixels_off"] for r in rows)
        print(
            f"{app[:42]:42} {len(rows):7d} {bs:8.4f} {off:6.2%} {off / max(first, 1e-9):9.2f} "
            f"{sum(r['passed'] for r in rows) / len(rows):6.0%} {_strict(rows):6.0%} "
            f"{statistics.mean(r['chars'] for r in rows):6.0f}"
        )
    rows = rep.rows
    if rows:
        print(
            f"{'all':42} {len(rows):7d} {statistics.mean(r['blur_ssim'] for r in rows):8.4f} "
            f"{statistics.mean(r['pixels_off'] for r in rows):6.2%} "
            f"{statistics.mean(r['pixels_off'] for r in rows) / max(1e-9, statistics.mean(r['first_pixels_off'] for r in rows)):9.2f} "
            f"{sum(r['passed'] for r in rows) / len(rows):6.0%} {_strict(rows):6.0%} "
            f"{statistics.mean(r['chars'] for r in rows):6.0f}"
        )
        print(
            f"seconds per screen: {rep.seconds / max(1, rep.screens):.3f} wall"
            + (
                f", {cpu / max(1, rep.screens):.3f} CPU (this process and Chromium)"
                if cpu is not None
                else ""
            )
            + f"; share of transitions kept: {len(rep.kept) / max(1, rep.transitions):.1%}"
        )
        reasons = defaultdict(int)
        for r in rows:
            if not r["passed"]:
                reasons[r["reason"].split(" (")[0].split(";")[0].split(" <")[0].split(" >")[0]] += 1
        if reasons:
            print("screens below the floor, by first reason:", dict(reasons))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--droidbot", action="store_true", help="also import the raw DroidBot folders")
    ap.add_argument("--out", type=Path, default=None, help="write the imported corpora under this folder")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from corpus.phone import import_android_corpus, import_droidbot
    from render import Renderer

    tf = args.data / "dev.tfrecord.gz"
    if not tf.is_file():
        print(f"no development data at {args.data}: nothing to measure")
        return 0
    out = args.out or Path(tempfile.mkdtemp(prefix="android_import_"))
    with Renderer(pool_size=2) as r:
        c0 = tree_cpu_seconds()
        rep = import_android_corpus(tf, out / "android", renderer=r, progress=False)
        table(rep, f"AndroidControl episodes ({tf.name})", tree_cpu_seconds() - c0)
        if args.droidbot:
            for d in sorted((args.data / "droidbot").iterdir()):
                c0 = tree_cpu_seconds()
                rep = import_droidbot(d, out / f"droidbot-{d.name}", renderer=r, progress=False)
                table(rep, f"DroidBot folder {d.name}", tree_cpu_seconds() - c0)
    print(f"\ncorpora written under {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
