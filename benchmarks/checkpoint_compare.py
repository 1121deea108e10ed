"""Several trained checkpoints writing edits, against `copy`, on one split of the bundled corpus.

    python benchmarks/checkpoint_compare.py [--split test] [--max-new-tokens 512] [--tries 1]
        [--no-hints] [--corpus PATH[:SPLIT] ...] [--third-party] [--by-app] [--also SPEC ...]
        CHECKPOINT...

edit_bench.py runs every backend and decoding policy for one checkpoint; this runs one policy
for many, which is what choosing between training recipes needs: the same split, the same
renderer, `copy` measured in the same run. The policy: greedy, the lines that apply carried out;
with --tries N, up to N-1 sampled edits more where the greedy one does not apply in full, and
the screen kept where none does.
Each row: SSIM, text F1, element F1, their gains over `copy`, and the share of edits with a
line that did not apply. A checkpoint trained after the sim (`wm train --after sim`) runs as
`sim+CHECKPOINT`; `--also sim` puts the sim alone beside it, so the learned part's own share shows.
`--corpus PATH --split all --third-party` scores a recorded corpus of other apps (e.g. one
`wm corpus build --third-party ...` recorded) on its apps nobody here wrote. `--corpus` may be
given more than once, each with its own split after a colon (`bundled` names the bundled
corpus), so apps recorded in several corpora are scored as one held-out set; `--by-app` adds
each app's gains over `copy`.
"""

from __future__ import annotations

import argparse

from corpus.store import load_corpus
from worldmodel import Renderer, WorldModel
from worldmodel.dataset import iter_transitions
from worldmodel.evaluate import evaluate

PHONE_SOURCE = "phone"  # a corpus row's `source` for this project's own phone apps (corpus/apps)
BUNDLED = "bundled"  # --corpus's name for the corpus the package ships


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checkpoints", nargs="*", help="trained checkpoint folders")
    ap.add_argument("--split", default="test", choices=("train", "validation", "test", "id-test", "all"))
    ap.add_argument(
        "--corpus",
        action="append",
        default=[],
        help="corpus folder, or PATH:SPLIT for one split of it; repeatable (default: the bundled corpus)",
    )
    ap.add_argument(
        "--third-party", action="store_true", help="only apps nobody here wrote (not the phone apps)"
    )
    ap.add_argument(
        "--also", action="append", default=[], help="another model spec to score beside them (e.g. sim)"
    )
    ap.add_argument("--by-app", action="store_true", help="also print each app's gains over copy")
    ap.add_argument("--max-new-tokens", type=int, default=512)
    ap.add_argument(
        "--html-chars", type=int, default=None, help="prompt HTML budget (default: each checkpoint's own)"
    )
    ap.add_argument("--tries", type=int, default=1, help="edits to try per query until one applies in full")
    ap.add_argument(
        "--no-hints", action="store_true", help="leave out the hints a hinted checkpoint was trained with"
    )
    args = ap.parse_args()
    ts = []
    for spec in args.corpus or [BUNDLED]:
        path, _, split = spec.partition(":")
        dd = load_corpus(None if path == BUNDLED else path)
        split = split or args.split
        if split != "all" and split not in dd:
            raise SystemExit(f"error: corpus {path} has no split {split!r} (it has {', '.join(dd)})")
        for s in dd if split == "all" else [split]:
            ds = dd[s]
            if args.third_party:
                ds = ds.select([i for i, src in enumerate(ds["source"]) if src != PHONE_SOURCE])
            ts += iter_transitions(ds)
    with Renderer() as r:
        models = {"copy": WorldModel.load("copy", renderer=r)}
        for spec in args.also:
            models[spec] = WorldModel.load(spec, renderer=r)
        for path in args.checkpoints:
            opts = {"max_new_tokens": args.max_new_tokens, "edit_tries": args.tries}
            if args.html_chars:
                opts["html_chars"] = args.html_chars
            if args.no_hints:
                opts["hints"] = False
            models[path] = WorldModel.load(f"hf:{path}", renderer=r, **opts)
        modes = {name: "document" if name == "copy" else "edit" for name in models}
        figs = evaluate(models, ts, r, None, lpips=None, modes=modes)
        for m in models.values():
            m.close()
    base = figs["backends"]["copy"]
    where = ", ".join(args.corpus) or f"{BUNDLED} {args.split} split"
    print(f"{where}{' (third-party apps)' if args.third_party else ''}: {figs['n']} transitions")
    print(f"the current screenshot kept (copy baseline): SSIM {figs['copy_baseline']['ssim']:.4f}")
    if args.by_app:
        _by_app(figs["per_app"], list(models))
    print(
        f"{'model':40s} {'SSIM':>7s} {'textF1':>7s} {'elemF1':>7s} {'SSIM vs copy':>12s}"
        f" {'textF1 vs copy':>14s} {'bad edits':>9s}"
    )
    for name, f in figs["backends"].items():
        print(
            f"{name:40s} {f['ssim']:7.4f} {f['text_f1']:7.4f} {f['element_f1']:7.3f}"
            f" {f['ssim'] - base['ssim']:+12.4f} {f['text_f1'] - base['text_f1']:+14.4f}"
            f" {f['edit_failure_rate'] or 0:9.2f}"
        )
    if args.checkpoints:
        from headline import record  # benchmarks/headline.py: the README's results table

        ck = [figs["backends"][p] for p in args.checkpoints]
        record(
            "checkpoint_compare",
            f"SSIM of {len(ck)} checkpoint(s) as their cards run them (mean)",
            round(sum(f["ssim"] for f in ck) / len(ck), 4),
            round(base["ssim"], 4),
            "copy (current HTML rendered)",
            f"{where}{' (third-party apps)' if args.third_party else ''}, {figs['n']} transitions",
            unit="SSIM",
            text_f1=round(sum(f["text_f1"] for f in ck) / len(ck), 4),
            text_f1_copy=round(base["text_f1"], 4),
            per_checkpoint={p: round(figs["backends"][p]["ssim"], 4) for p in args.checkpoints},
            also={s: round(figs["backends"][s]["ssim"], 4) for s in args.also},
        )


def _by_app(per_app, names):
    """Each app's mean SSIM and text F1 gains over `copy` (evaluate's figures["per_app"]), one line per app."""
    print(f"{'app':28s} {'n':>4s} {'copy':>15s}  " + "  ".join(f"{n[:22]:>22s}" for n in names[1:]))
    for app, v in per_app.items():
        f = v["backends"]
        c = f["copy"]
        cells = "  ".join(f"{_gain(f[n], c, 'ssim'):>11s}/{_gain(f[n], c, 'text_f1')}" for n in names[1:])
        print(f"{app:28s} {v['n']:4d} {c['ssim']:7.4f}/{_num(c['text_f1'])}  {cells}")
    print()


def _gain(f, base, k):
    return "n/a" if f[k] is None or base[k] is None else f"{f[k] - base[k]:+.4f}"


def _num(x):
    return "n/a" if x is None else f"{x:.4f}"


if __name__ == "__main__":
    main()
