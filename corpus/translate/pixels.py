"""Reading a phone screenshot: the colour behind a box, where ink is, a field's outline, a card's
rounded corner, a control's place, and the crops that carry what HTML cannot redraw.

The accessibility tree says where things are, never how they look, so every colour, edge and
picture of a translated screen comes from these readings of the screenshot's pixels (an RGB
array, rows first). Crops are stored by content hash (render/assets.py).
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from render.assets import STORE

INK = 48  # a channel this far from the background is ink


def dominant(img: np.ndarray, box, step: int = 2) -> tuple[np.ndarray, float]:
    """The commonest colour in `box` (quantised to 8 levels) and the share of pixels near it."""
    x0, y0, x1, y1 = box
    px = img[y0:y1:step, x0:x1:step].reshape(-1, 3).astype(np.int32)
    if len(px) == 0:
        return np.array([255, 255, 255]), 0.0
    q = px >> 3
    keys = (q[:, 0] << 10) | (q[:, 1] << 5) | q[:, 2]
    counts = np.bincount(keys, minlength=32768)
    k = int(counts.argmax())
    mask = keys == k
    c = px[mask].mean(axis=0)
    near = (np.abs(px - c).max(axis=1) <= 12).mean()
    return np.round(c).astype(int), float(near)


def luminance(c) -> float:
    v = np.asarray(c, dtype=float) / 255
    v = np.where(v <= 0.03928, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)
    return float(0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2])


def contrast(a, b) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def readable(fg, bg, floor: float = 1.5):
    """`fg` when it stands out from `bg`, else black or white, whichever stands out more."""
    if contrast(fg, bg) >= floor:
        return fg
    return (0, 0, 0) if contrast((0, 0, 0), bg) >= contrast((255, 255, 255), bg) else (255, 255, 255)


def ink_mask(img: np.ndarray, box, bg) -> np.ndarray:
    x0, y0, x1, y1 = box
    return np.abs(img[y0:y1, x0:x1].astype(np.int16) - np.asarray(bg, dtype=np.int16)).max(axis=2) > INK


def runs(flags: np.ndarray, gap: int) -> list[tuple[int, int]]:
    """Runs of True in `flags`, joining runs separated by fewer than `gap` False."""
    idx = np.flatnonzero(flags)
    if len(idx) == 0:
        return []
    out = [[idx[0], idx[0] + 1]]
    for i in idx[1:]:
        if i - out[-1][1] < gap:
            out[-1][1] = i + 1
        else:
            out.append([i, i + 1])
    return [tuple(r) for r in out]


def _lines(share: np.ndarray, lo: int, hi: int, full: float = 0.8) -> list[tuple[int, int]]:
    """Runs (start, end) of rows (or columns) between `lo` and `hi` whose share of line is `full`."""
    return [(lo + a, lo + b) for a, b in runs(share[lo:hi] >= full, 1)]


def field_edge(img, box, bg) -> dict | None:
    """A text field's outline (a line along all four sides) or underline (a line across its lower
    part) from the screenshot: long straight runs of one colour, fainter than text's ink."""
    x0, y0, x1, y1 = box
    h, w = y1 - y0, x1 - x0
    if h < 8 or w < 16:
        return None
    m = np.abs(img[y0:y1, x0:x1].astype(np.int16) - np.asarray(bg, dtype=np.int16)).max(axis=2) > 24
    bottom = _lines(m.mean(axis=1), h // 2, h)
    if not bottom:
        return None
    b0, b1 = bottom[-1]
    if b1 - b0 > max(3, h // 8):  # a filled band, not a line
        return None
    cols = np.flatnonzero(m[b0:b1].any(axis=0))
    lx0, lx1 = int(cols[0]), int(cols[-1]) + 1
    line = img[y0 + b0 : y0 + b1, x0 + lx0 : x0 + lx1].reshape(-1, 3)
    edge = {"sides": "bottom", "width": b1 - b0, "colour": tuple(int(v) for v in np.median(line, axis=0))}
    top = _lines(m.mean(axis=1), 0, h // 2)
    sides = _lines(m[top[0][0] : b1].mean(axis=0), 0, w, 0.7) if top else []
    if top and len(sides) >= 2 and sides[0][0] <= lx0 + 2 and sides[-1][1] >= lx1 - 2:
        left, t0 = sides[0][0], top[0][0]
        straight = np.flatnonzero(m[t0, left:])  # a rounded corner starts the top line late
        edge |= {"sides": "all", "radius": int(straight[0]) if len(straight) else 0}
        edge["box"] = (x0 + left, y0 + t0, x0 + sides[-1][1], y0 + b1)
    else:
        edge["box"] = (x0 + lx0, y0 + b0, x0 + lx1, y0 + b1)
    return edge


def corner_radius(img, box, bg) -> int:
    """How far along the diagonal the box's top-left corner is not its own colour (rounded cards)."""
    x0, y0, x1, y1 = box
    if x1 - x0 < 12 or y1 - y0 < 12:
        return 0
    mx, my = (x0 + x1) // 2, (y0 + y1) // 2
    for px in (img[y0 + 1, mx], img[my, x0 + 1], img[y1 - 2, mx], img[my, x1 - 2]):
        if np.abs(px.astype(int) - bg).max() > 16:  # an edge of another colour: not a card
            return 0
    r = 0
    for k in range(min(40, (x1 - x0) // 3, (y1 - y0) // 3)):
        if np.abs(img[y0 + k, x0 + k].astype(int) - bg).max() <= 16:
            break
        r = k + 1
    return int(round(r * 3.4)) if r else 0  # a quarter circle of radius R leaves ~0.29R off the diagonal


def crop_asset(img: np.ndarray, box) -> str:
    x0, y0, x1, y1 = box
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(img[y0:y1, x0:x1])).save(buf, "PNG", compress_level=3)
    return STORE.put(buf.getvalue())


def own_colour(img, box, kids) -> tuple[np.ndarray, float]:
    """The commonest colour of a box where its children leave it showing (all of it for a leaf)."""
    if not kids:
        return dominant(img, box)
    x0, y0, x1, y1 = box
    show = np.ones((y1 - y0, x1 - x0), bool)
    for k in kids:
        show[max(0, k[1] - y0) : max(0, k[3] - y0), max(0, k[0] - x0) : max(0, k[2] - x0)] = False
    if show.mean() < 0.08:
        return dominant(img, box)[0], 0.0  # nothing of its own shows: it paints nothing
    px = img[y0:y1, x0:x1][show][::3]
    return dominant(px.reshape(1, -1, 3), (0, 0, len(px), 1), step=1)


def erase(clean: np.ndarray, ink, colour) -> None:
    """Paint a text's ink box (grown by 2 px) with the colour around it, so crops do not repeat it."""
    H, W = clean.shape[:2]
    x0, y0, x1, y1 = ink
    x0, y0, x1, y1 = max(0, x0 - 2), max(0, y0 - 2), min(W, x1 + 2), min(H, y1 + 2)
    if colour is None:
        ring = np.concatenate(
            [clean[y0, x0:x1], clean[y1 - 1, x0:x1], clean[y0:y1, x0], clean[y0:y1, x1 - 1]]
        ).astype(int)
        if len(ring) == 0:
            return
        colour = np.median(ring, axis=0)
    clean[y0:y1, x0:x1] = np.asarray(colour, dtype=np.uint8)


def uncovered(covered: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Rectangles (x0, y0, x1, y1) that together hold every uncovered pixel: full-width row bands
    where a row has any uncovered pixel, narrowed to their uncovered columns."""
    H, W = covered.shape
    free_rows = ~covered.all(axis=1)
    out = []
    for r0, r1 in runs(free_rows, 1):
        cols = np.flatnonzero(~covered[r0:r1].all(axis=0))
        out.append((int(cols[0]), r0, int(cols[-1]) + 1, r1))
    return out


def find_widget(img, box, bg, role, scale):
    """Where a checkable node's control is drawn: the ink cluster at one end of its box."""
    x0, y0, x1, y1 = box
    h = y1 - y0
    m = ink_mask(img, box, bg)
    clusters = runs(m.any(axis=0), max(4, int(h * 0.35)))
    want = (1.4, 3.0) if role == "switch" else (0.6, 1.6)
    for c in (clusters[-1:] + clusters[:1]) if clusters else []:
        rows = np.flatnonzero(m[:, c[0] : c[1]].any(axis=1))
        wh = rows[-1] + 1 - rows[0]
        if want[0] <= (c[1] - c[0]) / max(1, wh) <= want[1]:
            widget = (x0 + c[0], y0 + int(rows[0]), x0 + c[1], y0 + int(rows[-1]) + 1)
            px = img[widget[1] : widget[3], widget[0] : widget[2]].reshape(-1, 3).astype(int)
            sat = px.max(axis=1) - px.min(axis=1)
            accent = px[sat.argmax()] if sat.max() > 40 else px[np.abs(px - bg).max(axis=1).argmax()]
            return widget, tuple(int(v) for v in accent)
    side = max(8, int(min(h * 0.5, 24 * scale)))
    wx = x1 - side - int(16 * scale) if role == "switch" else x0 + int(16 * scale)
    widget = (wx, y0 + (h - side) // 2, wx + side * (2 if role == "switch" else 1), y0 + (h + side) // 2)
    return widget, (0, 133, 119)
