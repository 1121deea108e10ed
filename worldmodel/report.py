"""The `wm eval` report a person looks at: static HTML, inline SVG charts, images beside it.

What it shows, top to bottom: a summary table (backends x metrics, with the screenshot copy
baseline and the `copy` backend as the rows to beat), a bar chart of gain over copy per backend
and app, a copy-correlation scatter per backend, then one row per transition: the current screen
with the action drawn as the prompt draws it, the real next screen, and each backend's render
beside a heat map of where it differs from the real one. Rows can be filtered by app and sorted
by any backend's gain (a few lines of inline script; everything else works without it).
"""

from __future__ import annotations

import html as htmllib
import json

import numpy as np
from PIL import Image

from .files import write_whole
from .prompt import draw_action

METRICS = [
    ("ssim", "SSIM", "{:.3f}"),
    ("blur_ssim", "blurred SSIM", "{:.3f}"),
    ("pixels_off", "pixels off", "{:.1%}"),
    ("gain_over_copy", "gain vs screenshot copy", "{:+.3f}"),
    ("gain_over_copy_backend", "gain vs copy backend", "{:+.3f}"),
    ("text_f1", "text F1", "{:.3f}"),
    ("element_f1", "element F1", "{:.3f}"),
    ("siglip", "SigLIP", "{:.3f}"),
    ("dino", "DINO", "{:.3f}"),
    ("judge_S_ad", "S_ad", "{:.1f}"),
    ("judge_S_id", "S_id", "{:.1f}"),
    ("judge_S_ele", "S_ele", "{:.1f}"),
    ("judge_S_lay", "S_lay", "{:.1f}"),
    ("render_failure_rate", "render failures", "{:.0%}"),
    ("latency_s", "latency s", "{:.2f}"),
]
COLOURS = ["#1565c0", "#e65100", "#2e7d32", "#6a1b9a", "#c62828", "#00838f", "#5d4037"]
HEAT_TOL = 24  # levels a pixel may differ before the heat map marks it


def action_image(t) -> Image.Image:
    return draw_action(t.screen.image, t.action)


def heat_map(pred: Image.Image, ref: Image.Image) -> Image.Image:
    """Red where the prediction differs from the real screen by more than HEAT_TOL, over a faded copy."""
    a = np.asarray(pred.convert("RGB").resize(ref.size), dtype=np.int16)
    b = np.asarray(ref.convert("RGB"), dtype=np.int16)
    d = np.abs(a - b).max(axis=2)
    base = (255 - (255 - b) // 4).astype(np.uint8)  # the real screen, faded
    heat = np.clip(d * 2, 0, 255).astype(np.uint8)
    out = base.copy()
    mask = d > HEAT_TOL
    out[mask] = np.stack([np.full_like(heat, 255), 255 - heat, 255 - heat], axis=-1)[mask]
    return Image.fromarray(out)


def _fmt(v, f) -> str:
    return f.format(v) if isinstance(v, (int, float)) else htmllib.escape(str(v if v is not None else "n/a"))


def _summary(figures: dict, names: list[str]) -> str:
    asked = set().union(*(figures["backends"][n] for n in names))  # Code2World's scores only where asked
    metrics = [m for m in METRICS if m[0] in asked or not m[0].startswith(("siglip", "dino", "judge_"))]
    head = "".join(f"<th>{lbl}</th>" for _, lbl, _ in metrics)
    rows = [
        f"<tr class='baseline'><td>screenshot copy baseline (nothing changes)</td>"
        f"<td>{_fmt(figures['copy_baseline']['ssim'], '{:.3f}')}</td>"
        + "<td></td>" * (len(metrics) - 1)
        + "</tr>"
    ]
    for n in names:
        f = figures["backends"][n]
        cls = " class='baseline'" if n == "copy" else ""
        rows.append(
            f"<tr{cls}><td>{htmllib.escape(n)}</td>"
            + "".join(f"<td>{_fmt(f.get(k), fm)}</td>" for k, _, fm in metrics)
            + "</tr>"
        )
    return f"<table id='summary'><tr><th>model</th>{head}</tr>{''.join(rows)}</table>"


def _bars(per_app: dict[str, dict[str, float]], names: list[str]) -> str:
    """Grouped bars: mean gain over the screenshot copy baseline, per app, one bar per backend."""
    apps = sorted(per_app)
    vals = [v for a in apps for v in per_app[a].values()] or [0.0]
    lo, hi = min(0.0, min(vals)), max(0.0, max(vals))
    span = (hi - lo) or 1.0
    w_app, bar, h, top = max(24, 12 * len(names) + 12), 12, 180, 20
    width = 60 + w_app * len(apps)

    def y(v):
        return top + (hi - v) / span * h

    parts = [f"<line x1='50' x2='{width}' y1='{y(0):.1f}' y2='{y(0):.1f}' stroke='#000'/>"]
    parts += [
        f"<text x='46' y='{y(v) + 4:.1f}' text-anchor='end' font-size='10'>{v:+.2f}</text>" for v in (lo, hi)
    ]
    for i, a in enumerate(apps):
        x0 = 56 + i * w_app
        for j, n in enumerate(names):
            v = per_app[a].get(n)
            if v is None:
                continue
            y0, y1 = sorted((y(0), y(v)))
            parts.append(
                f"<rect class='bar' data-backend='{htmllib.escape(n)}' data-app='{htmllib.escape(a)}' x='{x0 + j * bar}' "
                f"y='{y0:.1f}' width='{bar - 2}' height='{max(1.0, y1 - y0):.1f}' fill='{COLOURS[j % len(COLOURS)]}'>"
                f"<title>{htmllib.escape(n)} on {htmllib.escape(a)}: {v:+.3f}</title></rect>"
            )
        parts.append(
            f"<text x='{x0}' y='{top + h + 14}' font-size='9' transform='rotate(30 {x0} {top + h + 14})'>{htmllib.escape(a[:28])}</text>"
        )
    legend = "".join(
        f"<span style='color:{COLOURS[j % len(COLOURS)]}'>&#9632; {htmllib.escape(n)}</span> "
        for j, n in enumerate(names)
    )
    return f"<svg id='bars' width='{width}' height='{top + h + 80}'>{''.join(parts)}</svg><div>{legend}</div>"


def _scatter(copy_ssim: list[float], gains: list[float | None], name: str, colour: str) -> str:
    size, pad = 200, 30
    pts = [(c, g) for c, g in zip(copy_ssim, gains) if g is not None]
    gmin = min([g for _, g in pts] + [-0.1])
    gmax = max([g for _, g in pts] + [0.1])
    cmin = min([c for c, _ in pts] + [1.0])

    def xy(c, g):
        x = pad + (c - cmin) / ((1 - cmin) or 1) * size
        return x, pad + (gmax - g) / ((gmax - gmin) or 1) * size

    dots = "".join(
        f"<circle class='dot' cx='{x:.1f}' cy='{yy:.1f}' r='3' fill='{colour}' fill-opacity='0.6'/>"
        for x, yy in (xy(c, g) for c, g in pts)
    )
    _, y0 = xy(cmin, 0)
    return (
        f"<figure><svg class='scatter' data-backend='{htmllib.escape(name)}' width='{size + 2 * pad}' height='{size + 2 * pad}'>"
        f"<rect x='{pad}' y='{pad}' width='{size}' height='{size}' fill='none' stroke='#999'/>"
        f"<line x1='{pad}' x2='{pad + size}' y1='{y0:.1f}' y2='{y0:.1f}' stroke='#999' stroke-dasharray='3'/>{dots}"
        f"<text x='{pad}' y='{size + 2 * pad - 4}' font-size='10'>copy-baseline SSIM {cmin:.2f} .. 1</text>"
        f"<text x='2' y='{pad - 6}' font-size='10'>gain {gmax:+.2f}</text></svg>"
        f"<figcaption>{htmllib.escape(name)}</figcaption></figure>"
    )


SCRIPT = """
function apply() {
  const app = document.getElementById('app').value, key = document.getElementById('sort').value;
  const body = document.getElementById('rows'), rows = Array.from(body.children);
  rows.forEach(r => r.style.display = (!app || r.dataset.app === app) ? '' : 'none');
  if (key) rows.sort((a, b) => parseFloat(a.dataset[key] ?? 'NaN') - parseFloat(b.dataset[key] ?? 'NaN'))
              .forEach(r => body.appendChild(r));
}
document.getElementById('app').onchange = apply; document.getElementById('sort').onchange = apply;
"""


def write_report(
    out, figures: dict, transitions, rows: dict, names: list[str], copy_ssim: list[float]
) -> None:
    """report.html and its images in `out` (images/ beside it)."""
    img = out / "images"
    img.mkdir(parents=True, exist_ok=True)
    for i, t in enumerate(transitions):
        action_image(t).save(img / f"{i}-action.png")
        t.next_screen.image.save(img / f"{i}-next.png")
    means = {a: {n: f["gain"] for n, f in v["backends"].items()} for a, v in figures["per_app"].items()}
    keys = {n: "gain" + "".join(c for c in n.title() if c.isalnum()) for n in names}
    body = []
    for i, t in enumerate(transitions):
        data = " ".join(
            f"data-{_attr(keys[n])}='{rows[i][n]['gain']:.4f}'"
            for n in names
            if rows[i].get(n, {}).get("gain") is not None
        )
        cells = [
            f"<td><img src='images/{i}-action.png' alt='current screen with the action'><br>{htmllib.escape(t.action.describe())}</td>",
            f"<td><img src='images/{i}-next.png' alt='real next screen'><br>copy SSIM {copy_ssim[i]:.3f}</td>",
        ]
        for n in names:
            r = rows[i].get(n, {})
            if r.get("img"):
                cells.append(
                    f"<td><img src='images/{r['img']}' alt='{htmllib.escape(n)} prediction'>"
                    f"<img src='images/{r['heat']}' alt='difference heat map'><br>SSIM {r['ssim']:.3f}, gain {r['gain']:+.3f}"
                    f"{_code2world(r)}</td>"
                )
            else:
                cells.append(f"<td class='failed'>render failed: {htmllib.escape(str(r.get('error')))}</td>")
        body.append(
            f"<tr data-app='{htmllib.escape(t.app)}' {data}><td>{i}<br>{htmllib.escape(t.app)}</td>{''.join(cells)}</tr>"
        )
    app_opts = "".join(f"<option>{htmllib.escape(a)}</option>" for a in figures["per_app"])
    sort_opts = "".join(f"<option value='{keys[n]}'>gain of {htmllib.escape(n)}</option>" for n in names)
    head = "".join(f"<th>{htmllib.escape(n)} | difference</th>" for n in names)
    scatters = "".join(
        _scatter(
            copy_ssim,
            [rows[i].get(n, {}).get("gain") for i in range(len(transitions))],
            n,
            COLOURS[j % len(COLOURS)],
        )
        for j, n in enumerate(names)
    )
    page = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>wm eval</title><style>"
        "body{font:13px sans-serif;margin:16px} table{border-collapse:collapse} td,th{border:1px solid #ddd;padding:4px;vertical-align:top}"
        " tr.baseline{background:#fff8e1} #rows td{white-space:nowrap} img{max-width:170px;margin-right:2px} figure{display:inline-block;margin:4px}"
        " td.failed{color:#b71c1c}</style></head><body>"
        f"<h1>World-model evaluation: {figures['n']} transitions</h1>"
        "<h2>Summary</h2><p>Rows to beat: the screenshot copy baseline and the <code>copy</code> backend.</p>"
        f"{_summary(figures, names)}"
        "<h2>Gain over the screenshot copy baseline, per app</h2>"
        f"{_bars(means, names)}"
        "<h2>Copy correlation: where nothing changes, is the model still right?</h2>"
        f"<div>{scatters}</div>"
        "<h2>Transitions</h2><p>Filter <select id='app'><option value=''>all apps</option>"
        f"{app_opts}</select> sort by <select id='sort'><option value=''>recorded order</option>{sort_opts}</select></p>"
        f"<table><thead><tr><th>#</th><th>current + action</th><th>real next</th>{head}</tr></thead>"
        f"<tbody id='rows'>{''.join(body)}</tbody></table>"
        f"<details><summary>figures.json</summary><pre>{htmllib.escape(json.dumps(figures, indent=2))}</pre></details>"
        f"<script>{SCRIPT}</script></body></html>"
    )
    write_whole(out / "report.html", page)


def _code2world(r: dict) -> str:
    """A transition's SigLIP, DINO and judge scores, where they were asked for."""
    parts = [
        f"{lbl} {_fmt(r[k], fm)}"
        for k, lbl, fm in METRICS
        if k in r and k.startswith(("siglip", "dino", "judge_"))
    ]
    return "<br>" + ", ".join(parts) if parts else ""


def _attr(key: str) -> str:
    """gainCopy -> gain-copy: the data- attribute whose dataset key is `key`."""
    return "".join("-" + c.lower() if c.isupper() else c for c in key)
