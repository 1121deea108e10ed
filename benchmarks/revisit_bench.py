"""The revisit head against two hand rules and the best choice possible, in text F1 over sim+memory.

    python benchmarks/revisit_bench.py --head CHECKPOINT [--corpus PATH] [--split id-test] [--limit N]

Per transition of the split (memory of the corpus' train and validation splits, or the bundled
corpus' where it has none), `sim+memory`
answers and every distinct earlier screen of the episode is a candidate (worldmodel/revisit.py).
It prints, per group and pooled, the mean text F1 and SSIM gains over sim+memory (each choice
rendered; and how many answers were replaced) of:
  head      the trained head's choice (training/revisit.py), abstaining below its threshold
  back      a rule: on `back`, the screen shown just before
  alike     a rule: the latest earlier screen alike in structure to the answer (skeleton Jaccard 1)
  oracle    the best candidate where one beats the answer, knowing the real next screen
The oracle picks by text F1. inapp_bench.py measures the head in place, composed after a checkpoint.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

from render import Renderer
from training.revisit import examples
from worldmodel.dataset import iter_transitions, load_corpus
from worldmodel.revisit import FEATURES, RevisitHead


def group(app: str) -> str:
    return "phone" if app.startswith("phone") else "MiniWoB++" if app.startswith("miniwob") else "other"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--head", required=True, help="a checkpoint folder with revisit.json, or the file")
    ap.add_argument("--corpus", default=None, help="corpus (default: the bundled one)")
    ap.add_argument("--split", default="id-test", help="split to ask (default: id-test)")
    ap.add_argument("--limit", type=int, default=0, help="only the split's first N transitions (0: all)")
    args = ap.parse_args()
    head = RevisitHead.load(args.head)
    dd = load_corpus(args.corpus)
    if args.split not in dd:
        raise SystemExit(f"error: corpus {args.corpus or 'bundled'} has no {args.split} split")
    ts = list(iter_transitions(dd[args.split], skipped=[]))[: args.limit or None]
    known = [t for s in ("train", "validation") if s in dd for t in iter_transitions(dd[s], skipped=[])]
    if not known:  # a corpus of one split (a DroidBot exploration): memory of the bundled corpus
        bundled = load_corpus(None)
        known = [t for s in ("train", "validation") for t in iter_transitions(bundled[s], skipped=[])]
    t0 = time.perf_counter()
    with Renderer() as r:
        rows = examples(ts, r, known, echo=lambda *a: None, pixels=True)
    by_query = defaultdict(list)
    for row in rows:
        by_query[row["query"]].append(row)
    back, latest, alike = (FEATURES.index(k) for k in ("action_back", "latest", "alike_answer"))
    gains: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    n: dict[str, int] = defaultdict(int)
    for i, t in enumerate(ts):
        g = group(t.app)
        n[g] += 1
        mine = by_query.get(i, [])
        scored = [(head.probability(x["f"]), x) for x in mine]
        best = max(scored, key=lambda s: s[0], default=None)
        picks = {
            "head": best[1] if best and best[0] >= head.threshold else None,
            "back": next((x for x in mine if x["f"][back] and x["f"][latest]), None),
            "alike": max(
                (x for x in mine if x["f"][alike] >= 0.999), key=lambda x: x["f"][latest + 1], default=None
            ),
            "oracle": max((x for x in mine if x["gain"] > 0), key=lambda x: x["gain"], default=None),
        }
        for name, x in picks.items():
            if x is not None:
                gains[g][name] += x["gain"]
                gains[g][name + " ssim"] += x["ssim_gain"]
                gains[g][name + " n"] += 1
    print(
        f"{args.corpus or 'bundled'} {args.split}: {len(ts)} transitions, {len(rows)} candidates, "
        f"head threshold {head.threshold:.2f} ({time.perf_counter() - t0:.0f} s)"
    )
    print(
        f"{'group (n)':18s} "
        + " ".join(f"{k + ' text F1 / SSIM':>26s}" for k in ("head", "back", "alike", "oracle"))
    )
    for g in (*sorted(n), "pooled"):
        m = sum(n.values()) if g == "pooled" else n[g]
        src = [gains[x] for x in gains] if g == "pooled" else [gains[g]]
        cells = []
        for k in ("head", "back", "alike", "oracle"):
            total, used = sum(s[k] for s in src), sum(s[k + " n"] for s in src)
            px = sum(s[k + " ssim"] for s in src)
            cells.append(f"{total / m:+.4f} / {px / m:+.4f} ({int(used):3d})")
        print(f"{f'{g} ({m})':18s} " + " ".join(f"{c:>26s}" for c in cells))


if __name__ == "__main__":
    main()
