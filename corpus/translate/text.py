"""Fitting a node's text to its ink in the screenshot: the size, weight, colour, alignment and
lines that make Chromium set the words where and as the phone drew them.

The tree gives the words and the box; the pixels give where the ink sits. A line's size comes
from its ink's height and the letters it has (capitals, descenders, emoji, Arabic), refined by
its width measured in the face Chromium will use (Roboto, Noto Color Emoji, DejaVu Sans for
Arabic and Hebrew); wrapped text from the pitch of its lines and where its first line wraps.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image

from .pixels import INK, dominant, ink_mask, readable, runs

ROBOTO = Path("/usr/share/fonts/truetype/roboto/unhinted/RobotoTTF")
RTL_FACE = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")  # Chromium's Arabic beside Roboto
# Roboto's vertical metrics (em units): where the ink of a line sits around its baseline
ASCENT, DESCENT, CAP, XH, DESC = 0.927, 0.244, 0.711, 0.528, 0.21
# Noto Color Emoji as Chromium sets it beside Roboto (measured): ink 0.89 em above the baseline and
# 0.2 below, each emoji 1.25 em wide; Roboto has none, so its widths say nothing about them
EMOJI_UP, EMOJI_DOWN, EMOJI_ADVANCE = 0.89, 0.2, 1.25
WEIGHTS = {100: "Thin", 300: "Light", 400: "Regular", 500: "Medium", 700: "Bold"}


def fit_text(img, box, bg, text: str, scale: float) -> dict | None:
    """Size, weight, colour, alignment and lines of `text` from its ink inside `box`. When the
    "ink" is most of the box (a filled button inside a larger touch area), the text is read
    against that fill instead, and `face` says the element's look must come from the pixels."""
    x0, y0, x1, y1 = box
    m = _within_fill(img, box, bg, _trim(ink_mask(img, box, bg)))
    if not m.any():
        return None
    deco, m = _decoration(m)
    if not m.any():  # a rule, not words
        return None
    face = False
    if m.mean() > 0.3:
        bg, face, m = _against_fill(img, box, bg, m)
        if not m.any():
            return None
    rows = runs(m.any(axis=1), max(2, int(3 * scale)))
    cols = np.flatnonzero(m.any(axis=0))
    ix0, ix1 = int(cols[0]), int(cols[-1]) + 1
    lines = [r for r in rows if r[1] - r[0] >= 3]
    if not lines:
        return None
    words = text.split("\n")
    first = words[0] if words else text
    up, down = ink_ratio(first)
    lt, lb = lines[0]
    fs = (lb - lt) / (up + down)
    n = len(lines)
    pitch = _pitch([a for a, _ in lines], fs) if n > 1 else fs * 1.2
    if down and n > 1 and lb - lt <= 0.88 * float(np.median([b - a for a, b in lines[1:]])):
        # the text's descenders all lie below its first line, shorter than the rest
        bare = (lb - lt) / up
        if _pitch([a for a, _ in lines], bare) >= bare:
            fs, down, pitch = bare, 0.0, _pitch([a for a, _ in lines], bare)
    if n > 1 and pitch < fs:  # two rows of one line (e.g. accents): treat as one
        n, pitch = 1, fs * 1.2
    script = text_script(text)
    spine = None
    if n > 1 and script == "rtl" and "\n" not in text.strip():
        # Arabic's marks above and below make line tops uneven: lines are where their letters
        # join (the row of most ink), sized so the words wrap as the phone's lines do
        spines = [a + int(np.argmax(m[a:b].sum(axis=1))) for a, b in lines]
        pitch, spine = float(np.median(np.diff(spines))), spines[0]
        fs = rtl_wrapped_size(text.split(), [m[a:b] for a, b in lines], fs, ix1)
    elif n > 1 and script in ("latin", "rtl"):
        avail = ix1 if script == "rtl" else (x1 - x0) - ix0  # from where the lines start
        fs = wrapped_size(text, m[lt:lb], fs, pitch, avail, script)
        if script == "latin" and "\n" not in text.strip():
            fs = broken_size(text.split(), [m[a:b] for a, b in lines], fs, avail)
    ellipsis, weight = False, 400
    if n == 1 and script in ("latin", "rtl"):
        fs, weight, ellipsis = _one_line(img, box, bg, m, (lt, lb, ix0, ix1), first, fs, script, scale)
    fg = _ink_colour(img, box, bg, m)
    lh = pitch if n > 1 else round(fs * 1.25)
    baseline = y0 + lb - (down * fs) if spine is None else y0 + spine + 1
    ty = baseline - (lh - (ASCENT + DESCENT) * fs) / 2 - ASCENT * fs
    return {
        "fs": float(fs),
        "lh": float(lh),
        "fg": tuple(int(v) for v in fg),
        "tx": x0 + ix0 - fs * 0.06,
        "ty": float(ty),
        "lines": n,
        "bold": weight >= 500,
        "weight": weight,
        "deco": deco,
        "align": _align(m, lines, n, box, (ix0, ix1), script, scale),
        "ellipsis": ellipsis,
        "ink": (x0 + ix0, y0 + lt, x0 + ix1, y0 + lines[-1][1]),
        "rich": _rich(lines),
        "rx": x0 + ix1,
        "face": face,
        "rtl": script == "rtl",
    }


def _against_fill(img, box, bg, m: np.ndarray) -> tuple[np.ndarray, bool, np.ndarray]:
    """(background, face, ink) when most of a box is "ink": a filled button inside a larger touch
    area. If one colour fills most of the ink's extent, the text is what differs from that fill,
    inside it, and `face` is True (the look comes from the pixels); else nothing changes."""
    x0, y0, x1, y1 = box
    ys, xs = np.nonzero(m)
    inner = (x0 + int(xs.min()), y0 + int(ys.min()), x0 + int(xs.max()) + 1, y0 + int(ys.max()) + 1)
    fill, share = dominant(img, inner)
    if share <= 0.4:
        return bg, False, m
    m = ink_mask(img, box, fill) & (
        np.abs(img[y0:y1, x0:x1].astype(int) - np.asarray(fill)).max(axis=2) > INK
    )
    # only what lies inside the fill is text
    m[: inner[1] - y0] = m[inner[3] - y0 :] = False
    m[:, : inner[0] - x0] = m[:, inner[2] - x0 :] = False
    return fill, True, _trim(m & ink_mask(img, box, fill))


def wrapped_size(
    text: str, first_ink: np.ndarray, fs: float, pitch: float, avail: float, script: str
) -> float:
    """The size of wrapped text: Android spaces lines by the font's height (ascent + descent), so
    the pitch says the size, refined to where the words wrap as the first line's ink
    (`first_ink`, its rows of the mask) does within `avail` pixels from where the lines start."""
    c1 = np.flatnonzero(first_ink.any(axis=0))
    w1 = c1[-1] + 1 - c1[0] if len(c1) else 0
    best = None
    fp = pitch / (ASCENT + DESCENT)
    if fp > 1.12 * fs:  # lines set wider apart than the face (extra spacing): the letters' size
        fp = fs
    for f in fp * np.linspace(0.8, 1.2, 41):
        got = first_line_width(text.split(), f, avail, rtl_width if script == "rtl" else None)
        if got is None:
            break
        err = abs(got - w1) / max(1, w1) + abs(f - fp) / fp
        if best is None or err < best[0]:
            best = (err, f)
    return float(best[1]) if best is not None and best[0] <= 0.1 else fp


def rtl_wrapped_size(words: list[str], line_inks: list[np.ndarray], fs: float, avail: float) -> float:
    """The size at which right-to-left words, wrapped greedily into `avail` pixels in the face
    Chromium sets them in, make lines as wide as the screenshot's (`line_inks`, each line's rows
    of the mask); a size making fewer lines than the screen shows is worse still. `fs` (from the
    ink's height) is where the search centres."""
    inks = []
    for ink in line_inks:
        c = np.flatnonzero(ink.any(axis=0))
        inks.append(int(c[-1]) + 1 - int(c[0]) if len(c) else 0)
    best = None
    for f in fs * np.linspace(0.6, 1.3, 71):
        got = wrap_widths(words, f, avail, rtl_width)
        if got is None:
            return fs
        k = min(len(got), len(inks))
        err = sum(abs(g - i) for g, i in zip(got, inks)) / max(1, sum(inks[:k])) + max(
            0, len(inks) - len(got)
        )
        if best is None or err < best[0]:
            best = (err, f)
    return float(best[1]) if best is not None else fs


def broken_size(words: list[str], line_inks: list[np.ndarray], fs: float, avail: float) -> float:
    """For wrapped text with a word wider than its lines (a package name, a URL), which the phone
    breaks where a line fills: the size near `fs` at which its lines come out as wide as the
    screenshot's (`line_inks`), since where the word breaks says its size to a letter. Other
    text keeps `fs`."""
    if not any((text_width(w, fs) or 0.0) > avail for w in words):
        return fs
    inks = []
    for ink in line_inks:
        c = np.flatnonzero(ink.any(axis=0))
        inks.append(int(c[-1]) + 1 - int(c[0]) if len(c) else 0)
    best = None
    for f in fs * np.linspace(0.92, 1.08, 33):
        got = wrap_widths(words, f, avail, breaks=True)
        if not got:
            return fs
        k = min(len(got), len(inks))
        err = (
            sum(abs(g - i) for g, i in zip(got, inks)) / max(1, sum(inks[:k]))
            + max(0, len(inks) - len(got))
            + 0.2 * abs(f / fs - 1)
        )
        if best is None or err < best[0]:
            best = (err, f)
    return float(best[1])


def _broken(word: str, fs: float, avail: float) -> list[str]:
    """A word too wide for a line, cut into the longest starts that fit (at least a letter each)."""
    parts = []
    while word:
        lo, hi = 1, len(word)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if (text_width(word[:mid], fs) or 0.0) <= avail:
                lo = mid
            else:
                hi = mid - 1
        parts.append(word[:lo])
        word = word[lo:]
    return parts


def wrap_widths(words: list[str], fs: float, avail: float, measure=None, breaks=False) -> list[float] | None:
    """The widths of the lines `words` make wrapped greedily into `avail` pixels at `fs` (Roboto,
    or the face `measure` measures in); None without the face. `breaks`: a word wider than a
    line is cut where the line fills (Roboto only)."""
    if breaks:
        words = [
            p for w in words for p in ((_broken(w, fs, avail)) if (text_width(w, fs) or 0) > avail else [w])
        ]
    out, line, w = [], "", 0.0
    for word in words:
        cand = (line + " " + word) if line else word
        cw = (measure or text_width)(cand, fs)
        if cw is None:
            return None
        if cw > avail and line:
            out.append(w)
            line, w = word, (measure or text_width)(word, fs) or 0.0
        else:
            line, w = cand, cw
    return out + [w] if line else out


def _one_line(img, box, bg, m, where, first: str, fs: float, script: str, scale: float):
    """(size, weight, ellipsis) of a one-line text from its ink's width: in Roboto with the weight
    its strokes show (Latin; narrower than the words: the phone ellipsized it), or in the face
    Chromium sets Arabic and Hebrew in."""
    x0, y0, x1, y1 = box
    lt, lb, ix0, ix1 = where
    if script == "rtl":  # sized by its width in the face the page will set it in
        w = rtl_width(first, fs)
        r = (ix1 - ix0) / max(1.0, w or 0.0)
        return (fs * r if w and 0.6 <= r <= 1.25 else fs), 400, False
    if not text_width(first, fs):
        return fs, 400, False
    px = img[y0:y1, x0:x1][m].astype(np.int32)
    reach = np.abs(px - np.asarray(bg)).max(axis=1).max() if len(px) else 255
    # thin and light faces only in large type (a heading, a splash), where strokes are wide
    # enough to tell them apart
    weights = (100, 300, 400, 500) if fs / scale >= 22 else (400, 500)
    weight = font_weight(m[lt:lb, ix0:ix1], first, fs, reach, weights)
    r = (ix1 - ix0) / max(1.0, text_width(first, fs, weight))
    cut = r < 0.97 and not first.rstrip().endswith(("…", "...")) and ends_in_ellipsis(m[lt:lb, ix0:ix1], fs)
    if 0.8 <= r <= 1.25 and not cut:
        return fs * r, weight, False
    return fs, weight, r < 0.8 or cut  # the box holds less than the text: the phone ellipsized it


def ends_in_ellipsis(ink: np.ndarray, fs: float) -> bool:
    """Whether a line's ink ends in an ellipsis the text does not have: three small dots, evenly
    spaced, level with each other in the line's lower half (the phone cut the words short there,
    leaving the ink a little narrower than the words would be)."""
    cols = runs(ink.any(axis=0), 1)
    if len(cols) < 4:
        return False
    tops, bottoms = [], []
    for a, b in cols[-3:]:
        rows = np.flatnonzero(ink[:, a:b].any(axis=1))
        if b - a > 0.2 * fs or rows[-1] + 1 - rows[0] > 0.2 * fs:
            return False
        tops.append(rows[0])
        bottoms.append(rows[-1])
    gaps = [cols[-2][0] - cols[-3][1], cols[-1][0] - cols[-2][1]]
    return (
        max(bottoms) - min(bottoms) <= 1
        and min(tops) >= ink.shape[0] * 0.5
        and min(gaps) >= 1
        and abs(gaps[0] - gaps[1]) <= max(1.0, 0.05 * fs)
    )


def _ink_colour(img, box, bg, m) -> tuple:
    """The text's colour: the ink pixels furthest from the background, kept readable on it."""
    x0, y0, x1, y1 = box
    px = img[y0:y1, x0:x1][m].astype(np.int32)
    d = np.abs(px - np.asarray(bg)).max(axis=1)
    fg = px[d >= np.percentile(d, 70)].mean(axis=0)
    return readable(np.round(fg).astype(int), bg)


def _align(m, lines, n: int, box, cols, script: str, scale: float) -> str:
    """'center' when every line has even margins (`n`, the lines counted, is one, or they differ
    in width), 'right' for Arabic and Hebrew or ink hugging the right edge, else 'left'."""
    x0, _, x1, _ = box
    ix0, ix1 = cols
    left, right = ix0, (x1 - x0) - ix1
    sym = [_margins(m[a:b]) for a, b in lines]
    centred = all(lm > 6 * scale and abs(lm - rm) <= max(4, 0.06 * (x1 - x0)) for lm, rm in sym)
    align = "center" if centred and (n == 1 or len({lm for lm, _ in sym}) > 1) else "left"
    if align == "left" and (script == "rtl" or (right < left - 10 * scale and right < 24 * scale)):
        align = "right"
    return align


@lru_cache(maxsize=256)
def _font(weight: int, size: int):
    from PIL import ImageFont

    name = f"Roboto-{WEIGHTS.get(weight, 'Regular')}.ttf"
    try:
        return ImageFont.truetype(str(ROBOTO / name), size)
    except OSError:
        return None


def text_width(text: str, fs: float, weight: int = 400) -> float | None:
    """Width in pixels of one line of `text` in Roboto at `fs` px (None without the font)."""
    f = _font(weight, 100)
    if f is None:
        return None
    emoji = sum(_is_emoji(c) for c in text) - text.count("\u200d")  # a ZWJ sequence is one glyph
    plain = "".join(c for c in text if not _is_emoji(c) and c not in "\u200d\ufe0f")
    return (f.getlength(plain) if plain else 0.0) * fs / 100 + max(0, emoji) * EMOJI_ADVANCE * fs


def rtl_width(text: str, fs: float) -> float | None:
    """Width of a line of Arabic or Hebrew at `fs` px in the face Chromium sets it in beside Roboto
    (DejaVu Sans, shaped; measured 3% wider than Chromium draws it), None without that face."""
    f = _rtl_font()
    return None if f is None else f.getlength(text) * fs / 100 / 1.03


@lru_cache(maxsize=1)
def _rtl_font():
    from PIL import ImageFont

    try:
        return ImageFont.truetype(str(RTL_FACE), 100)
    except OSError:
        return None


def _is_emoji(c: str) -> bool:
    o = ord(c)
    return o >= 0x1F000 or 0x2600 <= o < 0x27C0 or 0x2B00 <= o < 0x2C00


def text_script(text: str) -> str:
    """'rtl' (Arabic, Hebrew), 'cjk', 'other' (beyond Latin) or 'latin'."""
    if any(0x590 <= ord(c) <= 0x8FF or 0xFB1D <= ord(c) <= 0xFEFF for c in text):
        return "rtl"
    if any(0x2E80 <= ord(c) <= 0xFFEF for c in text):
        return "cjk"
    return "other" if any(0x250 <= ord(c) < 0x2E80 for c in text) else "latin"


def ink_ratio(line: str) -> tuple[float, float]:
    """(top, bottom) of a line's ink relative to its baseline, in em, from which letters it has."""
    script = text_script(line)
    if script == "rtl":
        return 0.72, 0.3
    if script == "cjk":
        return 0.8, 0.08
    up = any(c.isupper() or c.isdigit() or c in "bdfhklt!?/()[]{}|'\"" or ord(c) > 0x2E80 for c in line)
    down = any(c in "gjpqy,;()[]{}|" for c in line)
    if any(_is_emoji(c) for c in line):  # an emoji reaches above capitals and below the baseline
        return EMOJI_UP, EMOJI_DOWN
    return (CAP if up else XH), (DESC if down else 0.0)


def _rich(lines: list[tuple[int, int]]) -> bool:
    """Whether a text's lines are set in several sizes (a TextView showing styled HTML: headings
    over paragraphs), which one size cannot draw: its tallest line far above the usual one."""
    hs = [b - a for a, b in lines]
    return len(hs) >= 3 and max(hs) > 1.35 * float(np.median(hs))


def _pitch(tops: list[int], fs: float) -> float:
    """Distance between lines from where they start: a gap spanning empty lines (between
    paragraphs) counts as the lines it spans, by the letters' own size (`fs`, from their ink)."""
    gaps = np.diff(tops).astype(float)
    slots = np.maximum(1, np.round(gaps / max(1.0, fs * (ASCENT + DESCENT))))
    return float(np.median(gaps / slots))


def _within_fill(img, box, bg, m: np.ndarray) -> np.ndarray:
    """Ink only where the box's own colour is: a button's fill narrower than its touch area has a
    margin of the colour behind it and a shadow around it, neither of them text."""
    x0, y0, x1, y1 = box
    near = np.abs(img[y0:y1, x0:x1].astype(np.int16) - np.asarray(bg, dtype=np.int16)).max(axis=2) <= 16
    rows, cols = np.flatnonzero(near.mean(axis=1) >= 0.3), np.flatnonzero(near.mean(axis=0) >= 0.3)
    if len(rows) < 3 or len(cols) < 3:
        return m
    out = np.zeros_like(m)
    out[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1] = m[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
    return out


def _trim(m: np.ndarray) -> np.ndarray:
    """Ink less the rows and columns that are nearly all ink: a border or a margin, not glyphs."""
    m = m.copy()
    m[m.mean(axis=1) > 0.85] = False
    m[:, m.mean(axis=0) > 0.85] = False
    return m


def first_line_width(words: list[str], fs: float, avail: float, measure=None) -> float | None:
    """Width of the first line when `words` wrap greedily into `avail` pixels at `fs` (Roboto, or
    the face `measure` measures in)."""
    line = ""
    w = 0.0
    for word in words:
        cand = (line + " " + word) if line else word
        cw = (measure or text_width)(cand, fs)
        if cw is None:
            return None
        if cw > avail and line:
            break
        line, w = cand, cw
    return w


def _margins(m: np.ndarray) -> tuple[int, int]:
    cols = np.flatnonzero(m.any(axis=0))
    return (int(cols[0]), m.shape[1] - int(cols[-1]) - 1) if len(cols) else (0, 0)


def font_weight(ink: np.ndarray, text: str, fs: float, reach: float = 255.0, weights=(400, 500)) -> int:
    """Which of Roboto's `weights` a line's ink is set in: the one whose own rendering (PIL, same
    size, thresholded as the screenshot's ink is: `reach` is how far the text's colour lies from
    its background) covers a share of its box closest to the screenshot's."""
    from PIL import ImageDraw

    got = ink.mean()
    cut = 255.0 * INK / max(float(reach), INK + 1.0)
    best, chosen = None, 400
    for weight in weights:
        f = _font(weight, max(6, int(round(fs))))
        if f is None:
            return 400
        bl, bt, br, bb = f.getbbox(text)
        if br - bl < 2 or bb - bt < 2:
            return 400
        im = Image.new("L", (br - bl + 4, bb - bt + 4), 0)
        ImageDraw.Draw(im).text((2 - bl, 2 - bt), text, font=f, fill=255)
        a = np.asarray(im) > cut
        if not a.any():
            return 400
        ys, xs = np.nonzero(a)
        share = a[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].mean()
        if best is None or abs(share - got) < best:
            best, chosen = abs(share - got), weight
    return chosen


def _decoration(m: np.ndarray) -> tuple[str | None, np.ndarray]:
    """A line struck through or underlined, from rows of ink that run the whole width of the
    text, and the ink without them (so the letters are measured alone)."""
    cols = np.flatnonzero(m.any(axis=0))
    if len(cols) < 12:
        return None, m
    full = np.flatnonzero(m[:, cols[0] : cols[-1] + 1].mean(axis=1) >= 0.92)
    rows = np.flatnonzero(m.any(axis=1))
    if not len(full) or full[-1] - full[0] > max(3, (rows[-1] - rows[0]) // 6):
        return None, m
    at = (full.mean() - rows[0]) / max(1, rows[-1] - rows[0])
    kind = "underline" if at >= 0.8 else "line-through" if 0.25 <= at <= 0.75 else None
    if kind is None:
        return None, m
    out = m.copy()
    out[full[0] : full[-1] + 1] = False
    return kind, out
