"""Document vs edit: every world model on the bundled test split (unseen apps), same run.

    python benchmarks/edit_bench.py [--checkpoint runs/small/final] [--tries 4] [--limit 0]

Arms: copy; retrieval writing documents; retrieval transplanting edits; sim (browser physics,
its document diffed into an edit); sim+retrieval (transplant on top of the sim's result); and,
with --checkpoint, that model writing documents and writing edits (the lines of an edit that
apply are carried out; "strict": an edit with any bad line yields no screen, scored 0; "N tries":
an edit that does not apply in full is sampled again, up to N edits, else the screen is kept).
Each row: SSIM, text F1,
element F1, gain over the screenshot baseline (keep the current screenshot) and over the `copy`
backend, characters generated per prediction, seconds per prediction. Also the sizes the edit
language buys on the same transitions: median edit/document length.
"""

from __future__ import annotations

import argparse

import numpy as np

from corpus.store import load_corpus
from corpus.third_party import APPS as THIRD_PARTY
from worldmodel import Renderer, WorldModel
from worldmodel.dataset import iter_transitions
from worldmodel.edit import diff
from worldmodel.evaluate import evaluate

ARMS = [
    ("copy", "copy", "document"),
    ("retrieval (document)", "retrieval", "document"),
    ("retrieval-transplant (edit)", "retrieval", "edit"),
    ("sim", "sim", "edit"),
    ("sim+retrieval-transplant", "sim+retrieval", "edit"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkpoint", default=None, help="a trained checkpoint folder to add in both modes")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--max-new-tokens", type=int, default=512)
    ap.add_argument(
        "--html-chars", type=int, default=None, help="prompt HTML budget (default: the checkpoint's own)"
    )
    ap.add_argument("--tries", type=int, default=4, help="edit_tries of the checkpoint's last arm")
    args = ap.parse_args()
    ds = load_corpus()["test"]
    if args.limit:
        ds = ds.select(range(min(args.limit, len(ds))))
    ts = list(iter_transitions(ds))
    arms = list(ARMS)
    strict = set()
    if args.checkpoint:
        arms += [
            (f"{args.checkpoint} (document)", f"hf:{args.checkpoint}", "document"),
            (f"{args.checkpoint} (edit)", f"hf:{args.checkpoint}", "edit"),
            (f"{args.checkpoint} (edit, strict)", f"hf:{args.checkpoint}", "edit"),
            (f"{args.checkpoint} (edit, {args.tries} tries)", f"hf:{args.checkpoint}", "edit"),
        ]
        strict.add(arms[-2][0])
    with Renderer() as r:
        models = {}
        for name, spec, _ in arms:
            opts = {"max_new_tokens": args.max_new_tokens} if spec.startswith("hf:") else {}
            if spec.startswith("hf:") and args.html_chars:
                opts["html_chars"] = args.html_chars
            if name.endswith("tries)"):
                opts["edit_tries"] = args.tries
            models[name] = WorldModel.load(spec, renderer=r, strict_edits=name in strict, **opts)
        figs = evaluate(models, ts, r, None, lpips=None, modes={n: m for n, _, m in arms})
        for m in models.values():
            m.close()
    base = figs["copy_baseline"]
    print(f"bundled test split: {figs['n']} transitions; screenshot baseline SSIM {base['ssim']:.4f}")
    print(
        f"{'arm':34s} {'SSIM':>7s} {'textF1':>7s} {'elemF1':>7s} {'vs shot':>8s} {'vs copy':>8s}"
        f" {'textF1 vs copy':>14s} {'gen chars':>9s} {'s/pred':>7s} {'bad edits':>9s}"
    )
    for name, f in figs["backends"].items():
        print(
            f"{name:34s} {f['ssim']:7.4f} {f['text_f1']:7.3f} {f['element_f1']:7.3f} {f['gain_over_copy']:+8.4f}"
            f" {f['gain_over_copy_backend']:+8.4f} {f['text_f1_gain_over_copy_backend']:+14.3f}"
            f" {f['generated_chars']:9.0f} {f['latency_s']:7.3f} {f['edit_failure_rate'] or 0:9.2f}"
        )
    docs = [t.next_screen.html for t in ts if t.screen.html and t.next_screen.html]
    edits = [diff(t.screen.html, t.next_screen.html) for t in ts if t.screen.html and t.next_screen.html]
    ratio = np.median([len(e) / len(d) for e, d in zip(edits, docs)])
    print(
        f"\ntrue edits on this split: median {np.median([len(e) for e in edits]):.0f} chars vs documents "
        f"{np.median([len(d) for d in docs]):.0f}; median edit/document {ratio:.3f} ({1 / ratio:.1f}x shorter)"
    )
    sizes_by_kind(args.checkpoint)
    from headline import record  # benchmarks/headline.py: the README's results table

    arm, copy = figs["backends"]["sim+retrieval-transplant"], figs["backends"]["copy"]
    record(
        "edit_bench",
        "SSIM, sim + retrieval-transplant (edit mode), no weights",
        round(arm["ssim"], 4),
        round(copy["ssim"], 4),
        "copy (current HTML rendered)",
        f"bundled test split, {figs['n']} transitions",
        unit="SSIM",
        partial=args.limit and f"--limit {args.limit}",
        text_f1=round(arm["text_f1"], 3),
        text_f1_copy=round(copy["text_f1"], 3),
        median_edit_over_document=round(float(ratio), 3),
    )


def _kind(app: str) -> str:
    if app in {a.name for a in THIRD_PARTY}:
        return "third-party npm apps"
    return "MiniWoB++ tasks" if app.startswith("miniwob-") else "bundled phone apps"


def sizes_by_kind(checkpoint: str | None = None):
    """Median edit/document length over the whole bundled corpus, by kind of app: in characters,
    and in tokens of the checkpoint's tokenizer when there is one."""
    tok = None
    if checkpoint:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(checkpoint)
    dd = load_corpus()
    ratios: dict[str, list[tuple[float, float]]] = {}
    for split in dd:
        for t in iter_transitions(dd[split]):
            if t.screen.html and t.next_screen.html:
                e, d = diff(t.screen.html, t.next_screen.html), t.next_screen.html
                rc = len(e) / len(d)
                rt = len(tok(e)["input_ids"]) / len(tok(d)["input_ids"]) if tok else float("nan")
                ratios.setdefault(_kind(t.app), []).append((rc, rt))
                ratios.setdefault("all", []).append((rc, rt))
    print("whole bundled corpus, median edit/document length:")
    for kind, rs in ratios.items():
        mc, mt = (float(np.median([r[k] for r in rs])) for k in (0, 1))
        line = f"  {kind:22s} {len(rs):4d} transitions  characters {mc:.3f} ({1 / mc if mc else float('inf'):.0f}x shorter)"
        if tok:
            line += f"  tokens {mt:.3f} ({1 / mt if mt else float('inf'):.0f}x shorter)"
        print(line)


if __name__ == "__main__":
    main()
