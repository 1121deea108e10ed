"""Visual-feedback revision: render a screen's HTML, score it against the screenshot, revise.

A translation (rule-based or model-written) that does not look like its
screenshot teaches the world model the wrong thing. So each translation is
rendered and scored; below the threshold a coder is asked to revise it, and
what never passes is dropped and counted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from bs4 import BeautifulSoup
from PIL import Image

from render import Renderer, RenderError, Viewport
from render.metrics import fidelity, psnr

from .translate import contrast, readable

# A coder revises html given the screenshot and the last round's feedback.
Coder = Callable[[Image.Image, str, dict], str]


@dataclass
class Revision:
    html: str
    passed: bool
    rounds: list[dict] = field(default_factory=list)

    @property
    def score(self) -> float:
        return self.rounds[-1]["ssim"] if self.rounds else float("nan")


def score_html(html: str, screenshot: Image.Image, renderer: Renderer, viewport: Viewport) -> dict:
    try:
        res = renderer.render(html, viewport)
    except RenderError as e:
        return {"ssim": -1.0, "blur_ssim": -1.0, "pixels_off": 1.0, "psnr": 0.0, "error": str(e)}
    return {**fidelity(res.image, screenshot), "psnr": psnr(res.image, screenshot)}


def revise_until(
    screenshot: Image.Image,
    html: str,
    coder: Coder,
    renderer: Renderer,
    viewport: Viewport,
    threshold: float = 0.8,
    max_rounds: int = 2,
) -> Revision:
    """Score, and revise while below `threshold`, keeping every round's score."""
    rounds = []
    best_html, best = html, None
    for r in range(max_rounds + 1):
        fb = score_html(html, screenshot, renderer, viewport)
        fb["round"] = r
        rounds.append(fb)
        if best is None or fb["ssim"] > best:
            best_html, best = html, fb["ssim"]
        if fb["ssim"] >= threshold or r == max_rounds:
            break
        html = coder(screenshot, html, fb)
    return Revision(best_html, best >= threshold, rounds)


_BOX = re.compile(
    r"left:\s*(-?[\d.]+)px;\s*top:\s*(-?[\d.]+)px;\s*width:\s*([\d.]+)px;\s*height:\s*([\d.]+)px"
)


def sample_colours(screenshot: Image.Image, html: str, feedback: dict, scale: float = 1.0) -> str:
    """Rule-based coder: paint each absolutely placed box with the screenshot's colours there.

    The structure-only translation of an accessibility tree knows where things
    are but not what colour they are; the screenshot does.
    """
    img = np.asarray(screenshot.convert("RGB"))
    soup = BeautifulSoup(html, "html.parser")

    def colour(x0, y0, x1, y1, pick):
        x0, y0 = max(0, int(x0 * scale)), max(0, int(y0 * scale))
        x1, y1 = min(img.shape[1], int(x1 * scale)), min(img.shape[0], int(y1 * scale))
        if x1 <= x0 or y1 <= y0:
            return None
        px = img[y0:y1, x0:x1].reshape(-1, 3)
        vals, counts = np.unique(px // 8 * 8, axis=0, return_counts=True)
        order = np.argsort(-counts)
        bg = vals[order[0]] + 4
        if pick == "bg":
            return bg
        # the text colour: the commonest colour that stands out from the background (a second
        # shade of the background would paint invisible text), else black or white
        for k in order[1:8]:
            if contrast(vals[k] + 4, bg) >= 1.5:
                return vals[k] + 4
        return np.array(readable(bg, bg))

    def css(c) -> str:
        return "rgb({},{},{})".format(*(int(v) for v in c))

    root = soup.find(attrs={"data-root": True}) or soup.body
    if root is not None:
        bg = colour(0, 0, img.shape[1] / scale, img.shape[0] / scale, "bg")
        root["style"] = (root.get("style") or "") + f";background:{css(bg)}"
    for el in soup.find_all(style=_BOX):
        x, y, w, h = (float(v) for v in _BOX.search(el["style"]).groups())
        bg = colour(x, y, x + w, y + h, "bg")
        fg = colour(x, y, x + w, y + h, "fg")
        if bg is None:
            continue
        el["style"] = el["style"] + f";background:{css(bg)};color:{css(fg)}"
    return str(soup)


REVISE_GOAL = (
    "Rewrite the current screen's HTML so that it renders exactly like the screenshot "
    "(last render scored SSIM {ssim:.3f}); the screen does not change."
)


def backend_coder(model, renderer: Renderer | None = None) -> Coder:
    """Use any world model (a spec, a Backend or a WorldModel) as the reviser: 'after waiting, the
    screen is the same' asks it to rewrite the draft HTML it is shown, with the screenshot beside
    it, as a whole document."""
    from worldmodel.model import WorldModel
    from worldmodel.types import Action, Screen

    wm = WorldModel.load(model, renderer)

    def coder(screenshot: Image.Image, html: str, feedback: dict) -> str:
        goal = REVISE_GOAL.format(ssim=feedback.get("ssim", float("nan")))
        return wm.predict(Screen(screenshot, html=html), Action("wait"), goal, "document").html

    return coder


# ---- per-region revision of translated phone screens (corpus/translate.py) --------------------

TILE = 16  # screenshot pixels per side of a scored region
TILE_OFF = 0.04  # a region with more of its pixels off than this is wrong (a 1-px divider is 6%)


@dataclass
class ScreenRevision:
    """A translated screen after revision: its HTML, every round's scores, whether it reached the
    floor, and why not when it did not."""

    html: str
    passed: bool
    rounds: list[dict] = field(default_factory=list)
    reason: str = ""
    final: dict = field(default_factory=dict)  # the kept round's scores

    @property
    def score(self) -> float:
        return self.final.get("blur_ssim", float("nan"))


def region_scores(pred: np.ndarray, ref: np.ndarray, tile: int = TILE) -> np.ndarray:
    """Share of pixels off (render/metrics.PIXEL_TOL) in each tile x tile region: which boxes are wrong."""
    from render.metrics import PIXEL_TOL

    H, W = ref.shape[:2]
    off = (np.abs(pred[:H, :W].astype(np.int16) - ref.astype(np.int16)).max(axis=2) > PIXEL_TOL).astype(
        np.float32
    )
    th, tw = -(-H // tile), -(-W // tile)
    pad = np.zeros((th * tile, tw * tile), np.float32)
    pad[:H, :W] = off
    return pad.reshape(th, tile, tw, tile).mean(axis=(1, 3))


def _ink_box(img: np.ndarray, box, bg) -> tuple[int, int, int, int] | None:
    from .translate import ink_mask

    x0, y0, x1, y1 = box
    if x1 - x0 < 2 or y1 - y0 < 2:
        return None
    m = ink_mask(img, box, bg)
    if not m.any():
        return None
    rows, cols = np.flatnonzero(m.any(axis=1)), np.flatnonzero(m.any(axis=0))
    return x0 + int(cols[0]), y0 + int(rows[0]), x0 + int(cols[-1]) + 1, y0 + int(rows[-1]) + 1


def _around(ink, box) -> tuple[int, int, int, int]:
    """The text's ink box grown by half its height up and down and its height sideways, inside
    the element's box: room for a render that landed a little off, none for the box's edges."""
    x0, y0, x1, y1 = (int(v) for v in ink)
    h = max(4, y1 - y0)
    return (
        max(box[0], x0 - h),
        max(box[1], y0 - h // 2),
        min(box[2], x1 + h),
        min(box[3], y1 + h // 2),
    )


def _fix_text(e, pred: np.ndarray, ref: np.ndarray) -> bool:
    """Move and resize an element's text so its rendered ink lands on the screenshot's; True if changed."""
    from .translate import dominant

    p = e.props
    if "ink" not in p or not e.text:
        return False
    # read both inks around where the text's ink was found, against the colour there: over the
    # whole box, a button's fill narrower than its box made its margin (and shadow) count as ink
    region = _around(p["ink"], e.box)
    want = _ink_box(ref, region, dominant(ref, region)[0])
    got = _ink_box(pred, region, dominant(pred, region)[0])
    if want is None or got is None:
        return False
    changed = False
    ww, wg = want[2] - want[0], got[2] - got[0]
    # one line: sized by its width (many pixels, so a precise ratio); then placed by its ink
    if p.get("lines", 1) == 1 and not p.get("ellipsis") and wg > 8 and abs(ww / wg - 1) > 0.006:
        p.setdefault("fs0", p["fs"])
        p["fs"] = min(1.3 * p["fs0"], max(0.77 * p["fs0"], p["fs"] * ww / wg))
        lh = round(p["fs"] * 1.25)
        p["ty"] += (p["lh"] - lh) / 2  # the line box shrinks or grows around the same middle
        p["lh"] = lh
        changed = True
    else:
        dy = want[1] - got[1]
        if abs(dy) >= 1:
            p["ty"] += dy
            changed = True
        if p.get("align") == "left" and abs(want[0] - got[0]) >= 1:
            p["tx"] += want[0] - got[0]
            changed = True
        if p.get("align") == "right" and abs(want[2] - got[2]) >= 1:
            p["rx"] += want[2] - got[2]
            changed = True
    return changed


def revise_regions(draft, ref: np.ndarray, pred: np.ndarray, tile: int = TILE) -> int:
    """One round of fixes on the regions that render wrong: text moved/resized onto its ink, and
    what no element explains carried as a crop of the screenshot (text painted out) under the
    text. Returns how many fixes were made."""
    from .translate import Elem, crop_asset

    scores = region_scores(pred, ref, tile)
    bad = scores > TILE_OFF
    if not bad.any():
        return 0
    fixes = 0
    texts = np.zeros_like(bad)
    for w in draft.windows:
        for e in w.elems:
            if e.kind in ("text", "button", "check", "input") and "ink" in e.props or e.kind == "input":
                x0, y0, x1, y1 = e.props.get("ink", e.box)
                t = texts[y0 // tile : -(-y1 // tile), x0 // tile : -(-x1 // tile)]
                region = bad[y0 // tile : -(-y1 // tile), x0 // tile : -(-x1 // tile)]
                if region.any() and e.kind != "input" and _fix_text(e, pred, ref):
                    fixes += 1
                t[:] = True
    rest = bad & ~texts
    if rest.any():
        from scipy.ndimage import find_objects, label

        lab, _ = label(rest)
        clean = draft.clean if draft.clean is not None else ref
        H, W = ref.shape[:2]
        for sl in find_objects(lab):
            box = (
                sl[1].start * tile,
                sl[0].start * tile,
                min(W, sl[1].stop * tile),
                min(H, sl[0].stop * tile),
            )
            patch = Elem("patch", box, props={"asset": crop_asset(clean, box)})
            # into the topmost window whose content holds the region, under its text; else over all
            cx, cy = (box[0] + box[2]) // 2, (box[1] + box[3]) // 2
            for w in reversed(draft.windows):
                x0, y0, x1, y1 = w.content
                if x0 <= cx < x1 and y0 <= cy < y1:
                    k = next((i for i, e in enumerate(w.elems) if e.kind != "bg"), len(w.elems))
                    w.elems.insert(k, patch)
                    for e in w.elems[k + 1 :]:  # boxes over the patch let it show through
                        if e.props.get("bg") is not None and _inside(e.box, box):
                            e.props["bg"] = None
                    break
            else:
                draft.over.append(patch)
            fixes += 1
    return fixes


def _inside(a, b) -> bool:
    return a[0] >= b[0] and a[1] >= b[1] and a[2] <= b[2] and a[3] <= b[3]


def revise_drafts(
    items,
    renderer: Renderer,
    floor: float = 0.9,
    max_off: float = 0.05,
    rounds: int = 2,
    deadline_s: float | None = None,
    target: tuple[float, float] = (0.9, 0.05),
) -> list[ScreenRevision]:
    """Revise many (draft, screenshot array) pairs together: each round renders every screen not
    yet at `target` (blurred SSIM, pixels off) in one pooled batch, scores it (blurred SSIM,
    pixels off, per region) and fixes the wrong regions. Rounds are bounded and so is time
    (`deadline_s` from the call: no new round starts after it). The round with the fewest pixels
    off is kept; it passes at `floor` and `max_off`, else the reason is recorded."""
    import time

    from render.metrics import blur_ssim, pixels_off

    t0 = time.perf_counter()
    items = list(items)
    out: list[ScreenRevision | None] = [None] * len(items)
    best: list[tuple | None] = [None] * len(items)  # (pixels off, html, image, round's scores)
    hist: list[list[dict]] = [[] for _ in items]
    todo = list(range(len(items)))

    def finish(i: int, r: int, late: bool) -> None:
        off, html, img, fb = best[i]
        if fb["blur_ssim"] != fb["blur_ssim"]:  # not measured in its round: measure it now
            fb["blur_ssim"] = round(blur_ssim(img, items[i][1]), 4)
        ok = fb["blur_ssim"] >= floor and off <= max_off
        why = "" if ok else _why(items[i][0], fb, floor, max_off, r, late)
        out[i] = ScreenRevision(html, ok, hist[i], why, dict(fb))

    for r in range(rounds + 1):
        htmls = {i: items[i][0].html() for i in todo}
        res = renderer.render_many(
            [
                (htmls[i], Viewport.for_screen(items[i][0].width, items[i][0].height, items[i][0].scale))
                for i in todo
            ],
            boxes=False,
        )
        nxt = []
        late = deadline_s is not None and time.perf_counter() - t0 > deadline_s
        for i, rr in zip(todo, res):
            draft, ref = items[i]
            if isinstance(rr, RenderError):
                hist[i].append({"round": r, "error": str(rr), "blur_ssim": -1.0, "pixels_off": 1.0})
                if best[i] is None:
                    out[i] = ScreenRevision(htmls[i], False, hist[i], f"render failed: {rr.reason}")
                else:
                    finish(i, r, late)
                continue
            off = pixels_off(rr.image, ref)
            # blurred SSIM (the slow one) only where the pixels could pass
            bs = blur_ssim(rr.image, ref) if off <= max(max_off, target[1]) else float("nan")
            fb = {"pixels_off": round(off, 4), "blur_ssim": round(bs, 4) if bs == bs else bs, "round": r}
            hist[i].append(fb)
            if best[i] is None or off < best[i][0]:
                best[i] = (off, htmls[i], rr.image, fb)
            at_target = bs >= target[0] and off <= target[1]
            if at_target or r == rounds or late or revise_regions(draft, ref, rr.image) == 0:
                finish(i, r, late)
                continue
            nxt.append(i)
        todo = nxt
        if not todo:
            break
    return out  # type: ignore[return-value]


def _why(draft, fb: dict, floor: float, max_off: float, r: int, late: bool) -> str:
    what = []
    if fb["blur_ssim"] < floor:
        what.append(f"blurred SSIM {fb['blur_ssim']:.3f} < {floor}")
    if fb["pixels_off"] > max_off:
        what.append(f"{fb['pixels_off']:.1%} pixels off > {max_off:.0%}")
    end = "time budget spent" if late else (f"after {r} rounds" if r else "no region could be fixed")
    return "; ".join(what) + f" ({end})"
