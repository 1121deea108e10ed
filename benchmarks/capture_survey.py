"""Capture survey (issue 27): real third-party pages nobody here wrote, at a phone's and a desktop's size.

Each page (corpus/third_party.py: the bundled apps and the survey-only pages of CSS frameworks,
site templates and widget libraries, fetched by scripts/install.sh) is recorded with the
explorer for a few steps at 360x640 and 1280x800; every captured screen is rendered in the sandbox
and scored against its own screenshot (blurred SSIM, share of pixels off). Done when: mean
blurred SSIM >= 0.98, mean pixels off <= 1%, and no page below 0.95 but for a browser-native popup
or a canvas/video.

Baseline, measured in the same run on the same screens: each capture put back in the form
captures had before this round (the body's children in a `display:contents` `<div id="screen">`,
`body > ...` selectors rewritten through it), which is what a wrapper does to the page's selectors.

python benchmarks/capture_survey.py [--steps 3] [--out runs/capture-survey]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from pathlib import Path

from bs4 import BeautifulSoup

from corpus.fidelity import SURVEY_VIEWPORTS, capture_survey, survey_table, write_worst
from corpus.third_party import APPS, SURVEY, installed
from render import Renderer
from render.metrics import blur_ssim, pixels_off

TARGET_BLUR, TARGET_OFF, FLOOR = 0.98, 0.01, 0.95
_BODY_CHILD = re.compile(r"(?<![-\w.#])body(\s*[.#:\[][^\s>+~,{]*)?\s*>\s*")


def wrapped(html: str) -> str:
    """`html` in the earlier capture form: a display:contents #screen between body and its children."""
    soup = BeautifulSoup(html, "html.parser")
    body = soup.body
    if body is None:
        return html
    w, _, h = str(body.get("data-wm-size", "0x0")).partition("x")
    div = soup.new_tag("div", id="screen", style=f"display:contents;width:{w}px;height:{h}px")
    for c in list(body.contents):
        div.append(c.extract())
    body.append(div)
    body.attrs.pop("data-wm-size", None)
    if body.get("id") == "screen":
        body.attrs.pop("id")
    for st in soup.head.find_all("style") if soup.head else []:
        st.string = _BODY_CHILD.sub(lambda m: f"body{m[1] or ''} > #screen > ", st.string or "")
    return str(soup)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--apps", default="", help="comma-separated pages (default: every installed one)")
    ap.add_argument("--out", default="runs/capture-survey", help="side-by-side pictures of pages below 0.95")
    a = ap.parse_args()
    every = {x.name: x for x in APPS + SURVEY}
    names = [n for n in a.apps.split(",") if n] or [n for n, x in every.items() if installed(x)]
    t0 = time.perf_counter()
    with Renderer(cache_size=0) as r:
        rows = capture_survey(names, SURVEY_VIEWPORTS, a.steps, a.seed, r)
        ok = [x for x in rows if x["which"] == "screen" and x["error"] is None]
        base = r.render_many([(wrapped(x["screen"].html), x["screen"].viewport()) for x in ok], boxes=False)
    for x, res in zip(ok, base):
        bad = isinstance(res, Exception)
        x["base_blur"] = 0.0 if bad else blur_ssim(res.image, x["screen"].array)
        x["base_off"] = 1.0 if bad else pixels_off(res.image, x["screen"].array)
    table = survey_table(rows)
    print(f"{len(names)} pages x {len(SURVEY_VIEWPORTS)} sizes, {a.steps} explorer steps each, seed {a.seed}")
    print(
        "| page | package@version | licence | screens | blur SSIM mean | min | pixels off mean | max |"
        " wrapper baseline: blur mean | off mean |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    out = Path(a.out)
    for n, s in table.items():
        x = every[n]
        mine = [y for y in ok if y["app"] == n]
        bb = statistics.mean(y["base_blur"] for y in mine) if mine else 0.0
        bo = statistics.mean(y["base_off"] for y in mine) if mine else 1.0
        s.update(base_blur_mean=bb, base_off_mean=bo)
        print(
            f"| {n} | {x.package}@{x.version} | {x.licence} | {s['screens']} | {s['blur_ssim_mean']:.4f} |"
            f" {s['blur_ssim_min']:.4f} | {100 * s['pixels_off_mean']:.2f}% | {100 * s['pixels_off_max']:.2f}% |"
            f" {bb:.4f} | {100 * bo:.2f}% |" + (f" errors: {s['errors']}" if s["errors"] else "")
        )
        if s["blur_ssim_min"] < FLOOR and mine:
            write_worst(mine, 2, out)
    pages = list(table.values())
    mb = statistics.mean(s["blur_ssim_mean"] for s in pages)
    mo = statistics.mean(s["pixels_off_mean"] for s in pages)
    bb = statistics.mean(s["base_blur_mean"] for s in pages)
    bo = statistics.mean(s["base_off_mean"] for s in pages)
    below = [n for n, s in table.items() if s["blur_ssim_min"] < FLOOR]
    print(
        f"mean over {len(pages)} pages: blur SSIM {mb:.4f} (wrapper baseline {bb:.4f}, ratio {mb / bb:.3f}),"
        f" pixels off {100 * mo:.2f}% (baseline {100 * bo:.2f}%); target >= {TARGET_BLUR} and <= {100 * TARGET_OFF:.0f}%:"
        f" {'met' if mb >= TARGET_BLUR and mo <= TARGET_OFF else 'NOT met'}"
    )
    print(f"pages with a screen below {FLOOR}: {below or 'none'} (pictures in {out})")
    print(f"wall time {time.perf_counter() - t0:.0f} s (shared, loaded CPU)")
    print(json.dumps({"pages": len(pages), "blur_mean": mb, "off_mean": mo, "below": below}))
    from headline import record  # benchmarks/headline.py: the README's results table

    record(
        "capture_survey",
        f"mean blurred SSIM of captures rendered back, {len(pages)} pages",
        round(mb, 4),
        round(bb, 4),
        "the same screens in the old wrapper form",
        f"{len(pages)} pages x {len(SURVEY_VIEWPORTS)} sizes, {a.steps} explorer steps, {len(ok)} screens",
        unit="blurred SSIM",
        partial=a.apps and f"--apps {a.apps}",
        pixels_off=round(mo, 4),
        pixels_off_baseline=round(bo, 4),
        pages_below_floor=below,
    )


if __name__ == "__main__":
    main()
