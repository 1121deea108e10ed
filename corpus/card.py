"""The dataset card every saved corpus carries: README.md with what a reader of the folder needs.

Written into the corpus folder before it is swapped in, so the card always describes the data
beside it: features, splits, apps and their sources and licences, and how faithfully the
captured HTML renders back to its screenshots.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

# Licence of the pages or data each source comes from (an app's own licence, if it gave one, wins).
SOURCE_LICENCES = {
    "web": "see the app's licence",
    "phone": "Apache-2.0 (this project's phone app)",
    "miniwob": "MIT (MiniWoB++, Farama Foundation)",
    # phone traces carry the licence their source states (the importer writes it on each row)
    "android": "unknown: the source states none",
    "droidbot": "unknown: the source states none",
}


def _source(app: str, source: str | None) -> str:
    src = source or "web"
    if src == "web" and app.startswith(("phone-", "miniwob-")):
        return app.split("-", 1)[0]
    return src


def _records(dd):
    """(app, source, licence, html_ssim, action type) per row of every split, read from the
    saved columns alone (never the screenshots), so a card can be written for a corpus that was
    streamed to disk and never held in memory."""
    import json

    cols = ["app", "source", "meta", "html_ssim", "action_type"]
    for ds in dd.values():
        for batch in ds.select_columns(cols).iter(batch_size=1024):
            for app, src, meta, fid, act in zip(*(batch[c] for c in cols)):
                lic = json.loads(meta or "{}").get("licence")
                yield app, src, lic, fid, act


def dataset_card(dd, splits: dict[str, str]) -> str:
    """Markdown for a corpus: its features, splits, apps (source, licence, fidelity) and totals."""
    per_app = defaultdict(list)
    actions: Counter = Counter()
    for app, src, lic, fid, act in _records(dd):
        per_app[app].append((_source(app, src), lic, fid))
        actions[act] += 1
    lines = [
        "---",
        "license: other",
        "task_categories: [image-to-text]",
        "tags: [gui, world-model, html, offline-rl]",
        "---",
        "",
        "# GUI world-model corpus",
        "",
        "Each row is one recorded step: the screen (screenshot and its captured HTML), the action,",
        "the real next screen (screenshot and HTML), the goal, and where it came from. Splits hold",
        "whole apps, so a test app is never seen in training; `id-test`, where there is one, holds",
        "whole episodes of training apps recorded with other seeds (apps seen, episodes not). Load it with",
        "`worldmodel.load_corpus(PATH)` or `datasets.load_from_disk(PATH)`.",
        "",
        "## Splits",
        "",
        "| split | transitions | apps |",
        "| --- | --- | --- |",
    ]
    for name, ds in dd.items():
        lines.append(f"| {name} | {len(ds)} | {len(set(ds['app']))} |")
    lines += [
        "",
        "## Apps",
        "",
        "Capture fidelity: SSIM of the captured HTML, rendered in the sandbox, against its own",
        "next-screen screenshot (1 = identical; blank where it was not measured).",
        "",
        "| app | split | transitions | source | licence | capture SSIM mean | min |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for app in sorted(per_app):
        ts = per_app[app]
        src = Counter(s for s, _, _ in ts).most_common(1)[0][0]
        lic = ts[0][1] or SOURCE_LICENCES.get(src, "unknown")
        fid = [float(f) for _, _, f in ts if _finite(f)]
        mean = f"{sum(fid) / len(fid):.4f}" if fid else ""
        low = f"{min(fid):.4f}" if fid else ""
        lines.append(f"| {app} | {splits[app]} | {len(ts)} | {src} | {lic} | {mean} | {low} |")
    lines += [
        "",
        "## Actions",
        "",
        ", ".join(f"{k}: {v}" for k, v in sorted(actions.items())),
        "",
        "## Features",
        "",
        "| column | type |",
        "| --- | --- |",
    ]
    first = next(iter(dd.values()))
    for name, feat in first.features.items():
        kind = feat.__class__.__name__ if not isinstance(feat, dict) else "struct{" + ", ".join(feat) + "}"
        dtype = getattr(feat, "dtype", "")
        lines.append(f"| {name} | {kind}{f' ({dtype})' if dtype and kind == 'Value' else ''} |")
    return "\n".join(lines) + "\n"


def _finite(v) -> bool:
    try:
        return v is not None and math.isfinite(float(v))
    except (TypeError, ValueError):
        return False
