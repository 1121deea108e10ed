"""How faithfully a corpus' captured HTML renders back to its own screenshots, per app.

Every distinct screen (current and next) is rendered in the sandbox at its screenshot's size and
scored with the shift-tolerant measures: blurred SSIM and the share of pixels off. The worst
screens are written as side-by-side pictures (capture render | screenshot | difference) so a
person can see what the capture loses.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from PIL import Image

from render import Renderer, RenderError
from render.metrics import blur_ssim, pixels_off
from worldmodel.dataset import iter_transitions
from worldmodel.report import heat_map


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
            "blur_ssim_mean": float(np.mean(b)),
            "blur_ssim_min": float(np.min(b)),
            "pixels_off_mean": float(np.mean(p)),
            "pixels_off_max": float(np.max(p)),
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
