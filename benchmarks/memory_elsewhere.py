"""What memory's answers from another app's recordings do on apps it never saw, against memory
with them turned off, measured in the same run.

    python benchmarks/memory_elsewhere.py CORPUS [CORPUS ...] [--per 30] [--keep 150]
    python benchmarks/memory_elsewhere.py --splits CORPUS

With several corpora (one app each, e.g. `wm corpus import-droidbot` output per app), each is
asked as an app memory never saw, with only the others' recordings indexed (a stride sample of
`--keep` transitions each: every screen held in memory does not fit 24 GB; `--per` asked). With
`--splits`, the corpus' train and validation splits are indexed and its test and id-test splits
asked. Per app or split it prints the sim, `sim+memory` with memory's own-app answers only, and
what another app's answers add (SSIM / text F1), and how many there were. `--min-words` and
`--min-alike` set memory's `min_words_elsewhere` and `min_alike_elsewhere` (its defaults
otherwise), to show what each bound keeps out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inapp_bench import SharedSim, transitions_of

from render.metrics import ssim, text_f1
from worldmodel import Renderer, WorldModel
from worldmodel.backends.memory import MemoryBackend

OFF = {"min_alike_elsewhere": 2.0}  # above 1: never answers from another app


def scores(wm, ts) -> tuple[float, float]:
    got = wm.predict_many([(t.screen, t.action) for t in ts], "edit")
    s = sum(ssim(p.image, t.next_screen.array) if p.ok else 0.0 for p, t in zip(got, ts))
    f = sum(text_f1(p.html, t.next_screen.html) for p, t in zip(got, ts))
    return s, f


def ask(label, asked, index, renderer, sim, bounds, total) -> None:
    on = MemoryBackend(index, **bounds)
    rows = [scores(sim, asked)]
    rows += [
        scores(WorldModel([sim.stages[0], m], renderer, "m"), asked)
        for m in (MemoryBackend(index, **OFF), on)
    ]
    n, away = len(asked), sum(on.elsewhere.values())
    (s0, f0), (s1, f1), (s2, f2) = rows
    print(
        f"{label:36s} n={n:3d}  from another app {away:3d}  sim {s0 / n:.4f} / {f0 / n:.4f}  own-app memory"
        f" {s1 / n:.4f} / {f1 / n:.4f}  another app's answers {(s2 - s1) / n:+.4f} / {(f2 - f1) / n:+.4f}",
        flush=True,
    )
    for k, v in zip(("n", "away", "s0", "f0", "s1", "f1", "s2", "f2"), (n, away, s0, f0, s1, f1, s2, f2)):
        total[k] = total.get(k, 0) + v


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpora", nargs="*", help="corpora of one app each, each asked with the others indexed")
    ap.add_argument("--splits", default=None, help="one corpus: index train+validation, ask test and id-test")
    ap.add_argument("--per", type=int, default=30, help="transitions asked per app")
    ap.add_argument("--keep", type=int, default=150, help="transitions indexed per app (a stride sample)")
    ap.add_argument("--min-words", type=float, default=None, help="memory's min_words_elsewhere")
    ap.add_argument("--min-alike", type=float, default=None, help="memory's min_alike_elsewhere")
    args = ap.parse_args()
    if bool(args.splits) == bool(args.corpora):
        raise SystemExit("error: give corpora of one app each, or --splits CORPUS")
    bounds = {
        k: v
        for k, v in (("min_words_elsewhere", args.min_words), ("min_alike_elsewhere", args.min_alike))
        if v is not None
    }
    total: dict = {}
    with Renderer() as r:
        sim = WorldModel([SharedSim()], r, "sim")
        if args.splits:
            index = transitions_of(args.splits, ["train", "validation"])
            for split in ("test", "id-test"):
                asked = transitions_of(args.splits, [split])
                if asked:
                    ask(split, asked, index, r, sim, bounds, total)
        else:
            apps = {}
            for path in args.corpora:
                ts = transitions_of(path, None)
                apps[Path(path).name] = ts[:: max(1, len(ts) // args.keep)][: args.keep]
                del ts
            for name, ts in apps.items():
                asked = ts[:: max(1, len(ts) // args.per)][: args.per]
                index = [t for other, more in apps.items() if other != name for t in more]
                ask(name, asked, index, r, sim, bounds, total)
    n = total["n"]
    print(
        f"pooled n={n}, {total['away']} answers from another app: they add"
        f" {(total['s2'] - total['s1']) / n:+.4f} SSIM / {(total['f2'] - total['f1']) / n:+.4f} text F1;"
        f" sim+memory against the sim {(total['s2'] - total['s0']) / n:+.4f} / {(total['f2'] - total['f0']) / n:+.4f}"
    )


if __name__ == "__main__":
    sys.exit(main())
