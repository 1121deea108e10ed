"""How faithfully a corpus' captured HTML renders back to its own screenshots, per app.

Every distinct screen (current and next) is rendered in the sandbox at its screenshot's size and
scored with the shift-tolerant measures: blurred SSIM and the share of pixels off. The worst
screens are written as side-by-side pictures (capture render | screenshot | difference) so a
person can see what the capture loses. `capture_survey` does the same for third-party pages
recorded live at a phone's and a desktop's size (benchmarks/capture_survey.py).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import numpy as np
from PIL import Image

from render import Renderer, RenderError, Viewport
from render.metrics import blur_ssim, pixels_off
from worldmodel.dataset import iter_transitions
from worldmodel.report import heat_map


def _spread(blur: list[float], off: list[float]) -> dict[str, float]:
    """Mean and worst of a set of screens' blurred SSIM and pixels off."""
    return {
        "blur_ssim_mean": float(np.mean(blur)),
        "blur_ssim_min": float(np.min(blur)),
        "pixels_off_mean": float(np.mean(off)),
        "pixels_off_max": float(np.max(off)),
    }


def _screens(dd):
    """(split, app, episode, step, which, Screen) for every distinct screen with HTML."""
    seen = set()
    for split, ds in dd.items():
        for t in iter_transitions(ds, skipped=[]):
            for which, s in (("screen", t.screen), ("next", t.next_screen)):
                if not s.html:
                    continue
                key = hashlib.sha1(s.html.encode("utf-8", "surrogatepass")).hexdigest()
                if key in seen:
                    continue
                seen.add(key)
                yield split, t.app, t.episode_id, t.step, which, s


# A screen whose batched render failed (a big page timing out on a loaded machine) is rendered
# again on its own with this much more time before it counts as a failure.
RETRY_TIMEOUT_FACTOR = 3


def _render_chunk(r: Renderer, screens):
    items = [(s.html, s.viewport()) for *_, s in screens]
    results = r.render_many(items, boxes=False)
    failed = [i for i, res in enumerate(results) if isinstance(res, RenderError)]
    if failed:
        with Renderer(pool_size=1, cache_size=0, timeout_s=r.timeout_s * RETRY_TIMEOUT_FACTOR) as alone:
            for i in failed:
                results[i] = alone.render_many([items[i]], boxes=False)[0]
    return results


def capture_fidelity(dd, renderer: Renderer | None = None, batch: int = 32):
    """(per-app summary, per-screen rows) of capture fidelity for a DatasetDict.

    A screen that still fails to render after a retry is reported (its row's `error`, the app's
    `render_failures`) and left out of the means, so a timeout is never read as a bad capture."""
    screens = list(_screens(dd))
    rows = []
    own = renderer is None
    r = renderer or Renderer(cache_size=0)
    try:
        for i in range(0, len(screens), batch):
            chunk = screens[i : i + batch]
            results = _render_chunk(r, chunk)
            for (split, app, ep, step, which, s), res in zip(chunk, results):
                row = dict(split=split, app=app, episode=ep, step=step, which=which, screen=s, error=None)
                if isinstance(res, RenderError):
                    row.update(error=str(res), blur_ssim=0.0, pixels_off=1.0, render=None)
                else:
                    row.update(
                        blur_ssim=blur_ssim(res.image, s.array), pixels_off=pixels_off(res.image, s.array)
                    )
                    row["render"] = res.image
                rows.append(row)
    finally:
        if own:
            r.close()
    per_app: dict[str, dict] = {}
    for app in sorted({r_["app"] for r_ in rows}):
        xs = [r_ for r_ in rows if r_["app"] == app]
        ok = [x for x in xs if x["error"] is None] or xs
        b = [x["blur_ssim"] for x in ok]
        p = [x["pixels_off"] for x in ok]
        per_app[app] = {
            "screens": len(xs),
            **_spread(b, p),
            "render_failures": sum(x["error"] is not None for x in xs),
        }
    return per_app, rows


def write_worst(rows, n: int, out: Path) -> list[Path]:
    """The n screens with the most pixels off, as capture render | screenshot | difference PNGs."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for r in sorted(rows, key=lambda x: -x["pixels_off"])[:n]:
        shot = r["screen"].image
        rendered = (
            Image.fromarray(r["render"]) if r["render"] is not None else Image.new("RGB", shot.size, "red")
        )
        w, h = shot.size
        canvas = Image.new("RGB", (3 * w + 8, h), "white")
        canvas.paste(rendered.resize(shot.size), (0, 0))
        canvas.paste(shot, (w + 4, 0))
        canvas.paste(heat_map(rendered, shot), (2 * w + 8, 0))
        name = f"{r['app']}-{r['episode']}-{r['step']}-{r['which']}-{r['pixels_off'] * 100:.1f}pct.png"
        p = out / "".join(c if c.isalnum() or c in "-._" else "_" for c in name)
        canvas.save(p)
        paths.append(p)
    return paths


# The capture survey's two screen sizes: a phone and a desktop browser window.
SURVEY_VIEWPORTS = {"phone": Viewport(360, 640), "desktop": Viewport(1280, 800)}


def capture_survey(
    names, viewports=None, steps: int = 3, seed: int = 0, renderer: Renderer | None = None, log=print
) -> list[dict]:
    """Record each named third-party page (corpus/third_party.py) with the explorer for `steps`
    actions at each viewport, and score every captured screen (the first and each next one)
    rendered back against its own screenshot: one row per screen (app, size, step, blur_ssim,
    pixels_off, screen, render, error). A page that fails to record is a row with its error."""
    from .explorer import explore
    from .recorder import Recorder
    from .third_party import third_party_app

    viewports = viewports or SURVEY_VIEWPORTS
    rows: list[dict] = []
    own = renderer is None
    r = renderer or Renderer(cache_size=0)
    try:
        with Recorder() as rec:
            for name in names:
                spec = third_party_app(name)
                for size, vp in viewports.items():
                    base = dict(app=name, size=size, episode=f"{name}-{size}")
                    try:
                        tr = rec.record_trajectory(replace(spec, viewport=vp), explore, steps, seed)
                    except Exception as e:  # a page that cannot be recorded is reported, not fatal
                        rows.append(dict(base, step=0, which="record", error=f"{type(e).__name__}: {e}"))
                        continue
                    shots = [tr[0].screen] + [t.next_screen for t in tr] if tr else []
                    chunk = [(None, name, base["episode"], i, "screen", s) for i, s in enumerate(shots)]
                    for (*_, i, _w, s), res in zip(chunk, _render_chunk(r, chunk)):
                        row = dict(base, step=i, which="screen", screen=s, error=None, render=None)
                        if isinstance(res, RenderError):
                            row.update(error=str(res), blur_ssim=0.0, pixels_off=1.0)
                        else:
                            row.update(
                                blur_ssim=blur_ssim(res.image, s.array),
                                pixels_off=pixels_off(res.image, s.array),
                                render=res.image,
                            )
                        rows.append(row)
                    log(f"{name} {size}: {len(shots)} screens")
    finally:
        if own:
            r.close()
    return rows


def survey_table(rows) -> dict[str, dict]:
    """Per page, over both sizes: screens, mean and min blurred SSIM, mean and max pixels off,
    and the record or render errors."""
    out = {}
    for app in dict.fromkeys(r_["app"] for r_ in rows):
        xs = [x for x in rows if x["app"] == app and x["which"] == "screen"]
        errs = [x["error"] for x in rows if x["app"] == app and x["error"]]
        b = [x["blur_ssim"] for x in xs] or [0.0]
        p = [x["pixels_off"] for x in xs] or [1.0]
        out[app] = {"screens": len(xs), **_spread(b, p), "errors": errs}
    return out
