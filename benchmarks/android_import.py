"""Importing real phone traces: how close the translated screens come to their screenshots, how
many transitions are kept, and how fast, per app and per set.

Reads a development set of real traces (AndroidControl-format episodes in `dev.tfrecord.gz` and
raw DroidBot folders under `droidbot/<app>/`) from `--data DIR`, else from `$WM_ANDROID_REAL`, else
from `../shared/android_real` beside the repository when that exists. Such traces may carry no
licence, so they are read here and never copied into the repository: the pictures this writes go
to `--out` (default runs/android_import/, ignored by git).

Per set (the AndroidControl episodes, each DroidBot folder) it prints, per app, the revised
screens' mean blurred SSIM and share of pixels off, and the same for the worst decile of screens
(by blurred SSIM), the share passing the floor, seconds per screen and the mean document length;
then transitions kept of those usable (a DroidBot event that is no phone action, e.g. an intent,
or whose screens were never recorded, is not usable). The ratio column compares pixels off after
revision with the translation's own first render in the same run (the baseline). For the worst
screens of each set it writes `screenshot | render` side by side as PNG, named by rank and score,
so a fault can be seen rather than guessed. Timings are noisy when other work shares the CPU.

    python3 benchmarks/android_import.py [--data DIR] [--dev] [--droidbot [APP ...]] [--limit N]
                                         [--worst N] [--out DIR]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = "WM_ANDROID_REAL"


def data_dir(arg: Path | None) -> Path:
    """The data folder: the argument, else $WM_ANDROID_REAL, else ../shared/android_real beside
    the repository when it exists; SystemExit with one line naming both ways otherwise."""
    if arg is not None:
        d = arg
    elif os.environ.get(ENV):
        d = Path(os.environ[ENV])
    else:
        d = ROOT.parent / "shared" / "android_real"
        if not d.is_dir():
            raise SystemExit(f"error: no phone traces: give --data DIR or set {ENV} (looked in {d})")
    if not d.is_dir():
        raise SystemExit(f"error: phone traces folder {d} does not exist")
    return d


def tree_cpu_seconds() -> float:
    """CPU seconds used so far by this process and every process under it (Chromium's), from
    /proc: a figure the other work sharing the machine does not inflate, unlike wall time."""
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


def worst_decile(rows: list[dict]) -> list[dict]:
    """The tenth of `rows` (at least one) with the lowest blurred SSIM."""
    rows = sorted(rows, key=lambda r: r["blur_ssim"])
    return rows[: max(1, len(rows) // 10)] if rows else []


def _mean(rows, k) -> float:
    return statistics.mean(r[k] for r in rows) if rows else float("nan")


def _line(name: str, rows: list[dict]) -> str:
    wd = worst_decile(rows)
    first = _mean(rows, "first_pixels_off")
    return (
        f"{name[:34]:34} {len(rows):7d} {_mean(rows, 'blur_ssim'):8.4f} {_mean(rows, 'pixels_off'):6.2%} "
        f"{_mean(wd, 'blur_ssim'):8.4f} {_mean(wd, 'pixels_off'):6.2%} "
        f"{_mean(rows, 'pixels_off') / max(first, 1e-9):9.2f} "
        f"{sum(r['passed'] for r in rows) / max(1, len(rows)):6.0%} {_mean(rows, 'chars'):6.0f}"
    )


def table(title: str, rows: list[dict], kept: Counter, usable: Counter, secs: float, cpu: float) -> None:
    """Per app: screens, mean and worst-decile blurred SSIM and pixels off, passed; then kept/usable."""
    apps = defaultdict(list)
    for r in rows:
        apps[r["app"]].append(r)
    print(f"\n{title}")
    print(
        f"{'app':34} {'screens':>7} {'blurSSIM':>8} {'off':>6} {'worst10%':>8} {'off':>6} "
        f"{'off/first':>9} {'passed':>6} {'chars':>6}"
    )
    for app, rs in sorted(apps.items()):
        print(_line(app, rs))
    if len(apps) > 1:
        print(_line("all", rows))
    n = max(1, len(rows))
    print(f"seconds per screen: {secs / n:.3f} wall, {cpu / n:.3f} CPU (this process and Chromium)")
    for app in sorted(usable):
        print(
            f"kept {kept[app]} of {usable[app]} usable transitions ({kept[app] / max(1, usable[app]):.1%}): {app}"
        )
    reasons = Counter(
        r["reason"].split(" (")[0].split(" <")[0].split(";")[0] for r in rows if not r["passed"]
    )
    if reasons:
        print("screens below the floor, by first reason:", dict(reasons))


def side_by_side(renderer, screens: list, out: Path, tag: str, scores: dict, n: int) -> list[Path]:
    """`screenshot | render` of the `n` screens with the lowest blurred SSIM, written to `out`."""
    from PIL import Image

    from render import Viewport

    ranked = sorted(
        (s for s in screens if id(s) in scores and scores[id(s)] is not None),
        key=lambda s: scores[id(s)].final.get("blur_ssim", -1.0),
    )[:n]
    items = [(s.html, Viewport.for_screen(*s.size, s.device_scale_factor)) for s in ranked]
    paths = []
    out.mkdir(parents=True, exist_ok=True)
    for k, (s, res) in enumerate(zip(ranked, renderer.render_many(items, boxes=False))):
        if isinstance(res, Exception):
            continue
        a, b = s.image.convert("RGB"), res.pil()
        pair = Image.new("RGB", (a.width + b.width + 8, max(a.height, b.height)), (255, 0, 255))
        pair.paste(a, (0, 0))
        pair.paste(b, (a.width + 8, 0))
        f = scores[id(s)].final
        p = out / f"{tag}-{k:02d}-bs{f.get('blur_ssim', -1):.3f}-off{f.get('pixels_off', 1):.3f}.png"
        pair.save(p)
        paths.append(p)
    return paths


def run_set(title, tag, transitions, drafts, renderer, args, rep=None) -> tuple[list, Counter, Counter]:
    """Revise and score one set; print its table and write its worst screens. Returns the kept
    screens' scores, and kept and usable transitions per app."""
    from corpus.phone import ImportReport, revise_transitions

    rep = rep or ImportReport()
    screens: dict[int, object] = {}
    usable: Counter = Counter()

    def counted():
        for t in itertools.islice(transitions, args.limit):
            usable[t.app] += 1
            screens[id(t.screen)], screens[id(t.next_screen)] = t.screen, t.next_screen
            yield t

    t0, c0 = time.perf_counter(), tree_cpu_seconds()
    revise_transitions(counted(), drafts, renderer=renderer, progress=False, report=rep)
    secs, cpu = time.perf_counter() - t0, tree_cpu_seconds() - c0
    drafts.clear()  # what the limit left unread
    kept = Counter(t.app for t in rep.kept)
    ids = {id(s) for t in rep.kept for s in (t.screen, t.next_screen)}
    kept_rows = [rep.screen_scores[i].final for i in ids]  # the kept screens' scores
    table(f"{title}: {rep.summary()}", rep.rows, kept, usable, secs, cpu)
    for why in rep.skipped[:3]:
        print("skipped:", why)
    if args.worst:
        paths = side_by_side(renderer, list(screens.values()), args.out, tag, rep.screen_scores, args.worst)
        print(f"{len(paths)} worst screens side by side (screenshot | render) in {args.out}/{tag}-*.png")
    return kept_rows, kept, usable


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data", type=Path, default=None, help=f"the traces (default ${ENV}, then ../shared/android_real)"
    )
    ap.add_argument(
        "--dev", action="store_true", help="the AndroidControl episodes (the default with no --droidbot)"
    )
    ap.add_argument(
        "--droidbot", nargs="*", default=None, metavar="APP", help="DroidBot folders (all when none named)"
    )
    ap.add_argument("--limit", type=int, default=None, help="at most N transitions per set")
    ap.add_argument(
        "--worst", type=int, default=8, help="worst screens written side by side per set (0: none)"
    )
    ap.add_argument(
        "--out", type=Path, default=ROOT / "runs" / "android_import", help="folder for the pictures"
    )
    args = ap.parse_args(argv)
    data = data_dir(args.data)
    sys.path.insert(0, str(ROOT))
    from corpus.android import import_android
    from corpus.phone import ImportReport, read_droidbot
    from render import Renderer

    dev = args.dev or args.droidbot is None
    folders = []
    if args.droidbot is not None:
        root = data / "droidbot"
        names = args.droidbot or sorted(p.name for p in root.iterdir() if p.is_dir())
        folders = [root / n for n in names]
        missing = [str(f) for f in folders if not f.is_dir()]
        if missing:
            raise SystemExit(f"error: no DroidBot folder {', '.join(missing)}")
    tf = data / "dev.tfrecord.gz"
    if dev and not tf.is_file():
        raise SystemExit(f"error: no AndroidControl episodes at {tf}")
    t_all, summary = time.perf_counter(), []
    with Renderer(pool_size=2) as r:
        if dev:
            rep, drafts = ImportReport(), {}
            trs = import_android(tf, skipped=rep.skipped, drafts=drafts)
            rows, kept, usable = run_set(
                f"AndroidControl episodes ({tf.name})", "dev", trs, drafts, r, args, rep
            )
            summary.append(("dev set", rows, sum(kept.values()), sum(usable.values())))
        for d in folders:
            rep, drafts, drop = ImportReport(), {}, Counter()
            trs = read_droidbot(d, rep.skipped, drop, drafts)
            rows, kept, usable = run_set(f"DroidBot folder {d.name}", d.name, trs, drafts, r, args, rep)
            if drop:
                print("not usable:", dict(drop))
            summary.append((d.name, rows, sum(kept.values()), sum(usable.values())))
    print(
        f"\nkept screens:\n{'set':34} {'kept/usable':>14} {'share':>6} {'blurSSIM':>8} {'worst10%':>8} {'off':>6}"
    )
    for name, rows, k, u in summary:
        wd = worst_decile(rows)
        print(
            f"{name[:34]:34} {f'{k}/{u}':>14} {k / max(1, u):6.1%} {_mean(rows, 'blur_ssim'):8.4f} "
            f"{_mean(wd, 'blur_ssim'):8.4f} {_mean(rows, 'pixels_off'):6.2%}"
        )
    print(f"wall {time.perf_counter() - t_all:.0f} s")
    from headline import record  # benchmarks/headline.py: the README's results table

    name, rows, k, u = summary[0]
    record(
        "phone_import",
        f"{name}: transitions kept at the import floor (blurred SSIM >= 0.85, <= 8% off)",
        round(100 * k / max(1, u), 1),
        None,
        "none in the same run; the target is >= 95% (#41)",
        f"shared phone traces, {name}: {k} of {u} usable transitions"
        + (f" (at most {args.limit})" if args.limit else ""),
        unit="% kept",
        partial="--limit" if args.limit else (None if dev else "no --dev set"),
        kept_screen_blurred_ssim=round(_mean(rows, "blur_ssim"), 4),
        sets={
            n: {"kept": kk, "usable": uu, "blur_ssim": round(_mean(rr, "blur_ssim"), 4)}
            for n, rr, kk, uu in summary
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
