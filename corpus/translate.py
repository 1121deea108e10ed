"""A phone screen (accessibility forest + screenshot) translated into HTML that looks like it.

The forest says where things are and what they are (text, editable, checkable, clickable); the
screenshot says how they look. So every node becomes an absolutely placed element of its kind
(text fitted to its box, `input`, `button`, checkbox/radio/switch), coloured from the pixels
under it: a box paints its background only where it differs from what is beneath it, text gets
the size, weight, colour and alignment its ink has in the screenshot, and images and icons are
crops of the screenshot named by content hash (render/assets.py), so a document stays short and
an icon seen on many screens is stored once. What no node covers (the status and navigation
bars, the dimmed app behind a dialog or sheet) comes from the screenshot too, and so does a web
page (a WebView: an app's help page, a browser it opened), whose tree exposes only part of what
it draws, in faces and a layout Roboto spans cannot redo; its nodes name what they cover.

The translation is kept as a `Draft` (a list of `Elem`s per window) so the visual-feedback
revision (corpus/revise.py) can fix the elements whose region renders wrong and emit again.
"""

from __future__ import annotations

import html as htmllib
import io
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image

from render.assets import STORE

# android_env's WindowType values
TYPE_APPLICATION, TYPE_INPUT_METHOD, TYPE_SYSTEM = 1, 2, 3
ROOT_ID = 0  # "the root node is the node whose ID is 0"
FONT_STACK = "Roboto,'Noto Sans CJK SC','Noto Color Emoji',sans-serif"
ROBOTO = Path("/usr/share/fonts/truetype/roboto/unhinted/RobotoTTF")
RTL_FACE = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")  # Chromium's Arabic beside Roboto
# Roboto's vertical metrics (em units): where the ink of a line sits around its baseline
ASCENT, DESCENT, CAP, XH, DESC = 0.927, 0.244, 0.711, 0.528, 0.21
# Noto Color Emoji as Chromium sets it beside Roboto (measured): ink 0.89 em above the baseline and
# 0.2 below, each emoji 1.25 em wide; Roboto has none, so its widths say nothing about them
EMOJI_UP, EMOJI_DOWN, EMOJI_ADVANCE = 0.89, 0.2, 1.25
WEIGHTS = {100: "Thin", 300: "Light", 400: "Regular", 500: "Medium", 700: "Bold"}
MAX_INPUT_FONT = 24.0  # CSS px: an input's text is never sized from a tall box alone
INK = 48  # a channel this far from the background is ink
PICTURED = 0.5  # a window with less of its area in one colour keeps its own pixels behind its nodes
# The switch, drawn as a switch; colours come from each element's own CSS variables.
STYLE = (
    "*{box-sizing:border-box}button{border:0;padding:0;margin:0;background:transparent;font:inherit;color:inherit}"
    ".wm-t{position:absolute;margin:0;white-space:pre;overflow:visible}"
    ".wm-w{white-space:pre-wrap;overflow-wrap:anywhere}"
    "input,textarea{font-family:inherit}"
    ".wm-e{overflow:hidden;text-overflow:ellipsis}"
    "input.wm-sw{appearance:none;position:absolute;margin:0;border-radius:999px;background:var(--off)}"
    "input.wm-sw::before{content:'';position:absolute;top:50%;left:0;width:var(--k);height:var(--k);"
    "margin-top:calc(var(--k) / -2);border-radius:50%;background:var(--knob-off);box-shadow:0 1px 2px #0006}"
    "input.wm-sw:checked{background:var(--on)}"
    "input.wm-sw:checked::before{left:auto;right:0;background:var(--knob-on)}"
)


@dataclass
class Elem:
    """One element of a draft: `kind` is one of bg, img, text, input, check, button, patch."""

    kind: str
    box: tuple[int, int, int, int]  # x0, y0, x1, y1 in screenshot pixels
    text: str = ""
    props: dict = field(default_factory=dict)


@dataclass
class Window:
    kind: int
    box: tuple[int, int, int, int]
    elems: list[Elem] = field(default_factory=list)
    content: tuple[int, int, int, int] = (0, 0, 0, 0)  # what its nodes below the root cover


@dataclass
class Draft:
    """A translated screen: windows in z-order, each with elements in drawing order."""

    width: int  # screenshot pixels
    height: int
    scale: float  # screenshot pixels per CSS pixel
    windows: list[Window] = field(default_factory=list)
    over: list[Elem] = field(default_factory=list)  # what no window's content covers, from the screenshot
    notes: list[str] = field(default_factory=list)

    def html(self) -> str:
        s = self.scale
        parts = []
        for i, w in enumerate(self.windows):
            x0, y0, x1, y1 = w.box
            inner = "".join(_elem_html(e, s, (x0, y0)) for e in w.elems)
            label = ' role="group" aria-label="keyboard"' if w.kind == TYPE_INPUT_METHOD else ""
            cls = {TYPE_APPLICATION: "app", TYPE_INPUT_METHOD: "InputMethod", TYPE_SYSTEM: "system"}.get(
                w.kind, "window"
            )
            parts.append(
                f'<div data-window="{cls}"{label} style="position:absolute;{_pos(x0, y0, x1, y1, s)}'
                f'overflow:hidden;z-index:{i + 1}">{inner}</div>'
            )
        if self.over:
            n = len(self.windows) + 1
            parts.append(
                f'<div data-window="screen" style="position:absolute;left:0;top:0;z-index:{n}">'
                + "".join(_elem_html(e, s) for e in self.over)
                + "</div>"
            )
        W, H = self.width / s, self.height / s
        return (
            f'<!DOCTYPE html><html><head><meta charset="utf-8"><style>{STYLE}</style></head>'
            f'<body style="margin:0"><div data-root style="position:relative;width:{W:.0f}px;height:{H:.0f}px;'
            f'overflow:hidden;font-family:{FONT_STACK};background:#000">'
            + "".join(parts)
            + "</div></body></html>"
        )


def _pos(x0, y0, x1, y1, s, origin=(0, 0)) -> str:
    ox, oy = origin
    return (
        f"left:{(x0 - ox) / s:.0f}px;top:{(y0 - oy) / s:.0f}px;"
        f"width:{(x1 - x0) / s:.0f}px;height:{(y1 - y0) / s:.0f}px;"
    )


def _rgb(c) -> str:
    return "#{:02x}{:02x}{:02x}".format(*(int(v) for v in c))


def _esc(t: str) -> str:
    return htmllib.escape(t, quote=True)


def _text_span(e: Elem, s: float) -> str:
    """The text of an element placed where its ink is (coordinates relative to the element)."""
    p = e.props
    if not e.text or "fs" not in p:
        return _esc(e.text)
    x0, y0, x1, y1 = e.box
    fs = p["fs"]
    wt = p.get("weight", 500 if p.get("bold") else 400)
    weight = f";font-weight:{wt}" if wt != 400 else ""
    if p.get("deco"):
        weight += f";text-decoration:{p['deco']}"
    style = f"font-size:{fs / s:.1f}px;line-height:{p['lh'] / s:.1f}px;color:{_rgb(p['fg'])}{weight};"
    top = (p["ty"] - y0) / s
    if p.get("align") == "center":
        style += f"left:0;width:{(x1 - x0) / s:.0f}px;text-align:center;top:{top:.1f}px"
    elif p.get("align") == "right":
        style += f"right:{(x1 - p['rx']) / s:.1f}px;text-align:right;top:{top:.1f}px"
        if p.get("lines", 1) > 1:
            style += f";width:{(p['rx'] - x0) / s + 2:.0f}px;direction:rtl"
        return f'<span class="wm-t{" wm-w" if p.get("lines", 1) > 1 else ""}" style="{style}">{_esc(e.text)}</span>'
    else:
        style += f"left:{(p['tx'] - x0) / s:.1f}px;top:{top:.1f}px"
    cls = "wm-t"
    if p.get("lines", 1) > 1:
        cls += " wm-w"
        if p.get("align") != "center":
            style += f";width:{(x1 - p['tx']) / s:.0f}px"
    if p.get("ellipsis"):  # the phone cut the text short with an ellipsis: so does the page
        cls += " wm-e"
        style += f";width:{(p['ink'][2] - p['tx']) / s + 2:.0f}px"
    return f'<span class="{cls}" style="{style}">{_esc(e.text)}</span>'


def _edge_html(edge: dict, s: float, origin) -> str:
    """A text field's outline or underline, drawn over the field where the screenshot has it."""
    x0, y0, x1, y1 = edge["box"]
    sides = "border" if edge["sides"] == "all" else "border-bottom"
    radius = f"border-radius:{edge['radius'] / s:.0f}px;" if edge.get("radius") else ""
    return (
        f'<div aria-hidden="true" style="position:absolute;{_pos(x0, y0, x1, y1, s, origin)}{radius}'
        f'{sides}:{max(1.0, edge["width"] / s):.1f}px solid {_rgb(edge["colour"])};pointer-events:none"></div>'
    )


def _elem_html(e: Elem, s: float, origin=(0, 0)) -> str:
    x0, y0, x1, y1 = e.box
    pos = "position:absolute;" + _pos(x0, y0, x1, y1, s, origin)
    p = e.props
    attrs = "".join(f' {k}="{_esc(str(v))}"' for k, v in p.get("attrs", {}).items())
    bg = f"background:{_rgb(p['bg'])};" if p.get("bg") is not None else ""
    if isinstance(p.get("face"), str):
        bg = f"background:url(asset:{p['face']}) 0 0/100% 100%;"
    radius = f"border-radius:{p['radius'] / s:.0f}px;" if p.get("radius") else ""
    if e.kind in ("patch", "img"):
        img = f'<img src="asset:{p["asset"]}" alt="{_esc(e.text)}" style="{pos}display:block">'
        if e.kind == "img" and p.get("click"):
            return (
                f'<button{attrs} aria-label="{_esc(e.text)}" style="{pos}">'
                f'<img src="asset:{p["asset"]}" alt="" style="width:100%;height:100%;display:block"></button>'
            )
        return img.replace("<img", f"<img{attrs}", 1) if attrs else img
    if e.kind == "bg":
        return f'<div{attrs} style="{pos}{bg}{radius}"></div>'
    if e.kind == "input":
        fs = min(p.get("fs", (y1 - y0) * 0.45), MAX_INPUT_FONT * s)
        typ = "password" if p.get("password") else "text"
        ph = f' placeholder="{_esc(p["hint"])}"' if p.get("hint") else ""
        fg = _rgb(p.get("fg", (0, 0, 0)))
        pad = max(0, (p.get("tx", x0 + 4) - x0)) / s
        style = (
            f"{pos}{bg or 'background:transparent;'}border:0;margin:0;font-size:{fs / s:.1f}px;color:{fg};"
        )
        edge = _edge_html(p["edge"], s, origin) if p.get("edge") else ""
        if p.get("lines", 1) > 1 and not p.get("password"):
            top = max(0, p.get("ty", y0) - y0) / s
            return (
                f'<textarea{attrs}{ph} style="{style}padding:{top:.0f}px {pad:.0f}px 0 {pad:.0f}px;resize:none;'
                f'line-height:{p["lh"] / s:.1f}px;overflow:hidden;outline:0">{_esc(e.text)}</textarea>{edge}'
            )
        return (
            f'<input{attrs} type="{typ}" value="{_esc(e.text)}"{ph} style="{style}padding:0 0 0 {pad:.0f}px">'
            + edge
        )

    if e.kind == "check":
        wx0, wy0, wx1, wy1 = p["widget"]
        wpos = _pos(wx0, wy0, wx1, wy1, s, (x0, y0))
        checked = " checked" if p.get("checked") else ""
        role = p["role"]
        if role == "switch":
            on, off = _rgb(p["accent"]), _rgb(p.get("track", (170, 170, 170)))
            k = (wy1 - wy0) / s
            ctl = (
                f'<input type="checkbox" role="switch" class="wm-sw"{checked} style="{wpos}'
                f"--on:{on}99;--off:{off};--knob-on:{on};--knob-off:#ececec;--k:{k * 1.3:.0f}px;"
                f'height:{k * 0.6:.0f}px;top:{(wy0 - y0) / s + k * 0.2:.0f}px">'
            )
        else:
            typ = "radio" if role == "radio" else "checkbox"
            ctl = (
                f'<input type="{typ}"{checked} style="position:absolute;margin:0;{wpos}'
                f'accent-color:{_rgb(p["accent"])}">'
            )
        return f'<label{attrs} style="{pos}{bg}{radius}display:block">{ctl}{_text_span(e, s)}</label>'
    tag = "button" if e.kind == "button" else "div"
    return f'<{tag}{attrs} style="{pos}{bg}{radius}">{_text_span(e, s)}</{tag}>'


# ---- reading the screenshot -------------------------------------------------------------------


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


def _runs(flags: np.ndarray, gap: int) -> list[tuple[int, int]]:
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


def _script(text: str) -> str:
    """'rtl' (Arabic, Hebrew), 'cjk', 'other' (beyond Latin) or 'latin'."""
    if any(0x590 <= ord(c) <= 0x8FF or 0xFB1D <= ord(c) <= 0xFEFF for c in text):
        return "rtl"
    if any(0x2E80 <= ord(c) <= 0xFFEF for c in text):
        return "cjk"
    return "other" if any(0x250 <= ord(c) < 0x2E80 for c in text) else "latin"


def _ink_ratio(line: str) -> tuple[float, float]:
    """(top, bottom) of a line's ink relative to its baseline, in em, from which letters it has."""
    script = _script(line)
    if script == "rtl":
        return 0.72, 0.3
    if script == "cjk":
        return 0.8, 0.08
    up = any(c.isupper() or c.isdigit() or c in "bdfhklt!?/()[]{}|'\"" or ord(c) > 0x2E80 for c in line)
    down = any(c in "gjpqy,;()[]{}|" for c in line)
    if any(_is_emoji(c) for c in line):  # an emoji reaches above capitals and below the baseline
        return EMOJI_UP, EMOJI_DOWN
    return (CAP if up else XH), (DESC if down else 0.0)


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
        ys, xs = np.nonzero(m)
        inner = (x0 + int(xs.min()), y0 + int(ys.min()), x0 + int(xs.max()) + 1, y0 + int(ys.max()) + 1)
        fill, share = dominant(img, inner)
        if share > 0.4:
            bg, face = fill, True
            m = ink_mask(img, box, bg) & (
                np.abs(img[y0:y1, x0:x1].astype(int) - np.asarray(fill)).max(axis=2) > INK
            )
            # only what lies inside the fill is text
            m[: inner[1] - y0] = m[inner[3] - y0 :] = False
            m[:, : inner[0] - x0] = m[:, inner[2] - x0 :] = False
            m = _trim(m & ink_mask(img, box, bg))
            if not m.any():
                return None
    rows = _runs(m.any(axis=1), max(2, int(3 * scale)))
    cols = np.flatnonzero(m.any(axis=0))
    ix0, ix1 = int(cols[0]), int(cols[-1]) + 1
    lines = [r for r in rows if r[1] - r[0] >= 3]
    if not lines:
        return None
    words = text.split("\n")
    first = words[0] if words else text
    up, down = _ink_ratio(first)
    lt, lb = lines[0]
    fs = (lb - lt) / (up + down)
    n = len(lines)
    pitch = _pitch([a for a, _ in lines], fs) if n > 1 else fs * 1.2
    if n > 1 and pitch < fs:  # two rows of one line (e.g. accents): treat as one
        n, pitch = 1, fs * 1.2
    script = _script(text)
    if n > 1 and script in ("latin", "rtl"):  # size at which the words wrap as the first line's ink does
        c1 = np.flatnonzero(m[lt:lb].any(axis=0))
        w1 = c1[-1] + 1 - c1[0] if len(c1) else 0
        avail = ix1 if script == "rtl" else (x1 - x0) - ix0  # from where the lines start
        best = None
        # Android spaces lines by the font's height (ascent + descent): the size the pitch says,
        # refined to where the words wrap as the first line's ink does
        fp = pitch / (ASCENT + DESCENT)
        if fp > 1.12 * fs:  # lines set wider apart than the face (extra spacing): the letters' size
            fp = fs
        for f in fp * np.linspace(0.8, 1.2, 41):
            got = _first_line_width(text.split(), f, avail, rtl_width if script == "rtl" else None)
            if got is None:
                break
            err = abs(got - w1) / max(1, w1) + abs(f - fp) / fp
            if best is None or err < best[0]:
                best = (err, f)
        fs = float(best[1]) if best is not None and best[0] <= 0.1 else fp
    ellipsis, weight = False, 400
    if n == 1 and script == "latin":
        inkw = ix1 - ix0
        if text_width(first, fs):
            px = img[y0:y1, x0:x1][m].astype(np.int32)
            reach = np.abs(px - np.asarray(bg)).max(axis=1).max() if len(px) else 255
            # thin and light faces only in large type (a heading, a splash), where strokes are wide
            # enough to tell them apart
            weights = (100, 300, 400, 500) if fs / scale >= 22 else (400, 500)
            weight = _weight(m[lt:lb, ix0:ix1], first, fs, reach, weights)
            r = inkw / max(1.0, text_width(first, fs, weight))
            if 0.8 <= r <= 1.25:
                fs *= r
            elif r < 0.8:  # the box holds less than the text: the phone ellipsized it
                ellipsis = True
    elif n == 1 and script == "rtl":  # sized by its width in the face the page will set it in
        w = rtl_width(first, fs)
        r = (ix1 - ix0) / max(1.0, w or 0.0)
        if w and 0.6 <= r <= 1.25:
            fs *= r
    # colour: the ink pixels furthest from the background
    px = img[y0:y1, x0:x1][m].astype(np.int32)
    d = np.abs(px - np.asarray(bg)).max(axis=1)
    fg = px[d >= np.percentile(d, 70)].mean(axis=0)
    fg = readable(np.round(fg).astype(int), bg)
    lh = pitch if n > 1 else round(fs * 1.25)
    baseline = y0 + lb - (down * fs)
    ty = baseline - (lh - (ASCENT + DESCENT) * fs) / 2 - ASCENT * fs
    left, right = ix0, (x1 - x0) - ix1
    sym = [_margins(m[a:b]) for a, b in lines]
    centred = all(lm > 6 * scale and abs(lm - rm) <= max(4, 0.06 * (x1 - x0)) for lm, rm in sym)
    align = "center" if centred and (n == 1 or len({lm for lm, _ in sym}) > 1) else "left"
    if align == "left" and (script == "rtl" or (right < left - 10 * scale and right < 24 * scale)):
        align = "right"
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
        "align": align,
        "ellipsis": ellipsis,
        "ink": (x0 + ix0, y0 + lt, x0 + ix1, y0 + lines[-1][1]),
        "rich": _rich(lines),
        "rx": x0 + ix1,
        "face": face,
    }


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


def _first_line_width(words: list[str], fs: float, avail: float, measure=None) -> float | None:
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


def _weight(ink: np.ndarray, text: str, fs: float, reach: float = 255.0, weights=(400, 500)) -> int:
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


def _lines(share: np.ndarray, lo: int, hi: int, full: float = 0.8) -> list[tuple[int, int]]:
    """Runs (start, end) of rows (or columns) between `lo` and `hi` whose share of line is `full`."""
    return [(lo + a, lo + b) for a, b in _runs(share[lo:hi] >= full, 1)]


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


# ---- the forest -------------------------------------------------------------------------------


def tree_order(nodes) -> list:
    """Nodes in drawing order: depth-first from the root (id 0) along child_ids; nodes the walk
    cannot reach (a tree without a root) follow in depth order."""
    by_id = {n.unique_id: n for n in nodes}
    seen, order = set(), []
    stack = [ROOT_ID] if ROOT_ID in by_id else []
    while stack:
        i = stack.pop()
        if i in seen or i not in by_id:
            continue
        seen.add(i)
        order.append(by_id[i])
        stack.extend(reversed(list(by_id[i].child_ids)))
    order += sorted((n for n in nodes if n.unique_id not in seen), key=lambda n: n.depth)
    return order


def _cls(n) -> str:
    return n.class_name.rsplit(".", 1)[-1]


def _role(n, siblings) -> str:
    c = _cls(n)
    if "Switch" in c or "Toggle" in c:
        return "switch"
    if "Radio" in c:
        return "radio"
    if c == "CheckedTextView":  # a single-choice list's rows are radios, a multi-choice list's boxes
        return "radio" if sum(s.is_checked for s in siblings) <= 1 and len(siblings) > 1 else "checkbox"
    if "CheckBox" in c:
        return "checkbox"
    return "pressed"  # any other checkable thing (an eye button, a star): a toggle button


def _widget(img, box, bg, role, scale):
    """Where a checkable node's control is drawn: the ink cluster at one end of its box."""
    x0, y0, x1, y1 = box
    h = y1 - y0
    m = ink_mask(img, box, bg)
    clusters = _runs(m.any(axis=0), max(4, int(h * 0.35)))
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


def _bounds(n, rx: float, ry: float, W: int, H: int):
    b = n.bounds_in_screen
    x0, y0 = max(0, int(round(b.left * rx))), max(0, int(round(b.top * ry)))
    x1, y1 = min(W, int(round(b.right * rx))), min(H, int(round(b.bottom * ry)))
    return x0, y0, x1, y1


def translate(
    forest_bytes: bytes,
    screenshot,
    scale: float = 1.0,
    recorded_size: tuple[int, int] | None = None,
) -> Draft:
    """A Draft of the screen: every window of the forest in z-order, coloured from `screenshot`
    (PNG bytes, a PIL image or an array; None: a blank white screen of `recorded_size`).

    Tree bounds are in the recorded screen's pixels (`recorded_size`, the screenshot's own by
    default); when the recorded size disagrees with the screenshot's, bounds are rescaled to the
    screenshot and the draft's notes say so."""
    from .a11y import forest_class

    if screenshot is None:
        if recorded_size is None:
            raise ValueError("a screen without a screenshot needs its recorded size")
        img = np.full((recorded_size[1], recorded_size[0], 3), 255, np.uint8)
    elif isinstance(screenshot, np.ndarray):
        img = screenshot[..., :3]
    else:
        im = screenshot if isinstance(screenshot, Image.Image) else Image.open(io.BytesIO(screenshot))
        img = np.asarray(im.convert("RGB"))
    H, W = img.shape[:2]
    d = Draft(W, H, scale)
    rw, rh = recorded_size or (W, H)
    rx, ry = W / max(1, rw), H / max(1, rh)
    if abs(rx - 1) > 0.01 or abs(ry - 1) > 0.01:
        d.notes.append(f"recorded size {rw}x{rh} is not the screenshot's {W}x{H}: bounds rescaled")
    forest = forest_class().FromString(forest_bytes)
    wins = sorted(forest.windows, key=lambda w: w.layer)
    clean = img.copy()  # the screenshot with the text the HTML draws painted out (crops come from it)
    covered = np.zeros((H, W), bool)
    for win in wins:
        wb = _bounds(win, rx, ry, W, H)
        if wb[2] - wb[0] < 2 or wb[3] - wb[1] < 2:  # a window without bounds: its nodes' extent
            boxes = [_bounds(n, rx, ry, W, H) for n in win.tree.nodes if n.is_visible_to_user]
            boxes = [b for b in boxes if b[2] - b[0] >= 2 and b[3] - b[1] >= 2]
            if not boxes:
                continue
            wb = (
                min(b[0] for b in boxes),
                min(b[1] for b in boxes),
                max(b[2] for b in boxes),
                max(b[3] for b in boxes),
            )
        win_d = _window(win, wb, img, clean, rx, ry, scale)
        d.windows.append(win_d)
        cx0, cy0, cx1, cy1 = win_d.content
        covered[cy0:cy1, cx0:cx1] = True
    # what no window's content covers, as bands of the screenshot drawn over the windows: the
    # status and navigation bars (system UI over a full-screen window), the app under a dialog.
    # Without a screenshot there are no pixels to carry: a blank crop would only hide what a
    # reviser paints there.
    for band in _uncovered(covered) if screenshot is not None else []:
        d.over.append(Elem("patch", band, props={"asset": crop_asset(img, band)}))
    d.clean = clean  # type: ignore[attr-defined]
    return d


def _uncovered(covered: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Rectangles (x0, y0, x1, y1) that together hold every uncovered pixel: full-width row bands
    where a row has any uncovered pixel, narrowed to their uncovered columns."""
    H, W = covered.shape
    free_rows = ~covered.all(axis=1)
    out = []
    for r0, r1 in _runs(free_rows, 1):
        cols = np.flatnonzero(~covered[r0:r1].all(axis=0))
        out.append((int(cols[0]), r0, int(cols[-1]) + 1, r1))
    return out


def _window(win, wb, img, clean, rx, ry, scale) -> Window:
    W, H = img.shape[1], img.shape[0]
    w = Window(win.window_type, wb)
    nodes = [n for n in tree_order(win.tree.nodes) if n.is_visible_to_user]
    inner = [
        b
        for b in (_bounds(n, rx, ry, W, H) for n in nodes)
        if b != wb and b[2] - b[0] >= 2 and b[3] - b[1] >= 2
    ]
    w.content = (
        (
            min(b[0] for b in inner),
            min(b[1] for b in inner),
            max(b[2] for b in inner),
            max(b[3] for b in inner),
        )
        if inner
        else wb
    )
    if w.content != wb:  # a decor view around the content: keep the window to the content's rows
        w.content = (min(w.content[0], wb[0] + 0), w.content[1], max(w.content[2], wb[2]), w.content[3])
        w.content = (
            max(wb[0], w.content[0]),
            max(wb[1], w.content[1]),
            min(wb[2], w.content[2]),
            min(wb[3], w.content[3]),
        )
    base, share = dominant(img, w.content, step=4)
    radius = corner_radius(img, w.content, base)
    # no one colour behind most of it (a gradient, a wallpaper, a photo): the window's own pixels
    pictured = share < PICTURED
    w.elems.append(Elem("bg", w.content, props={"bg": tuple(base), "radius": radius, "face": pictured}))
    by_id = {n.unique_id: n for n in win.tree.nodes}
    parent = {c: n.unique_id for n in win.tree.nodes for c in n.child_ids}
    painted: dict[int, tuple] = {}  # node id -> the colour its box is painted
    drawn_below = _drawn_below(nodes)
    web, pages = _web_content(nodes, by_id)
    texts = []
    for n in nodes:
        box = _bounds(n, rx, ry, W, H)
        x0, y0, x1, y1 = box
        if x1 - x0 < 2 or y1 - y0 < 2:
            continue
        under = painted.get(parent.get(n.unique_id, -1), tuple(base))
        col, share = _own_colour(
            img, box, [_bounds(by_id[c], rx, ry, W, H) for c in n.child_ids if c in by_id]
        )
        paints = share >= (0.75 if n.child_ids else 0.45) and np.abs(col - np.asarray(under)).max() > 10
        mine = tuple(col) if paints else under
        painted[n.unique_id] = mine
        cls = _cls(n)
        attrs = {"data-class": cls}
        if n.view_id_resource_name:
            attrs["data-id"] = n.view_id_resource_name.rsplit("/", 1)[-1]
        label = n.text or ""
        desc = n.content_description or ""
        kids = [by_id[c] for c in n.child_ids if c in by_id]
        # a labelled container whose children draw the same words (or the start of them, the
        # rest scrolled away) leaves the drawing to them
        spelled = "".join(drawn_below.get(c.unique_id, "") for c in kids)
        if (
            label
            and not n.is_editable
            and spelled
            and (_squeeze(label).startswith(spelled) or _squeeze(label) in spelled)
        ):
            label = ""
        if n.unique_id in pages:  # a web page: its pixels under the nodes it exposes; its text is its title
            if label or desc:
                attrs["aria-label"] = label or desc
            w.elems.append(Elem("bg", box, "", props={"attrs": attrs, "bg": None, "face": True}))
            continue
        if "Image" in cls and not n.is_editable:  # an image's text (a web <img>'s alt) is not drawn
            desc, label = desc or label, ""
        # a page, or a pictured window, paints its own backgrounds: flat boxes would only cover them
        bg = mine if paints and n.unique_id not in web and not pictured else None
        radius = corner_radius(img, box, col) if paints else 0
        props = {"attrs": attrs, "bg": bg, "radius": radius}
        if n.is_editable:
            props |= {"password": n.is_password, "hint": n.hint_text, "fg": readable((0, 0, 0), mine)}
            fit = fit_text(img, box, mine, n.text or n.hint_text, scale) if (n.text or n.hint_text) else None
            if fit:
                props |= {k: fit[k] for k in ("fg", "tx", "ty", "lh", "lines")}
                props["fs"] = min(fit["fs"], MAX_INPUT_FONT * scale)
                _erase(clean, fit["ink"], mine)
            if n.unique_id not in web:  # a page's own field is in its pixels
                props["edge"] = field_edge(img, box, mine)
            if n.is_password and n.text and not set(n.text) <= {"•", "*"}:
                attrs["data-masked"] = "1"
            w.elems.append(Elem("input", box, n.text, props))
            continue
        if n.is_checkable:
            sibs = [by_id[c] for c in by_id.get(parent.get(n.unique_id, -1), n).child_ids if c in by_id] or [
                n
            ]
            role = _role(n, sibs)
            if role == "pressed":
                attrs["aria-pressed"] = "true" if n.is_checked else "false"
            else:
                widget, accent = _widget(img, box, mine, role, scale)
                props |= {"role": role, "checked": n.is_checked, "widget": widget, "accent": accent}
                if label:
                    tb = (
                        (widget[2], y0, x1, y1) if widget[0] - x0 < (x1 - x0) / 2 else (x0, y0, widget[0], y1)
                    )
                    fit = fit_text(img, tb, mine, label, scale) if tb[2] - tb[0] > 4 else None
                    if fit:
                        props |= fit
                        _erase(clean, fit["ink"], mine)
                    else:  # words the screen does not show (a switch's on/off text)
                        attrs["aria-label"], label = label, ""
                _erase(clean, widget, mine)
                w.elems.append(Elem("check", box, label, props))
                continue
        is_image = (
            not label and ("Image" in cls or (not kids and desc)) or (not label and not kids and share < 0.6)
        )
        if is_image:
            if desc:
                attrs["aria-label"] = desc
            props |= {"asset": None, "click": n.is_clickable}  # cropped once every text is painted out
            w.elems.append(Elem("img", box, desc, props))
            continue
        if label:
            # a page's text is set in its own faces and layout, which Roboto spans cannot redo
            # line by line: the page's pixels show it and its node names it
            fit = fit_text(img, box, mine, label, scale) if n.unique_id not in web else None
            if fit and fit["rich"]:  # styled text in many sizes: its pixels, its words as their name
                attrs["aria-label"] = label
                w.elems.append(Elem("img", box, label, props | {"asset": None, "click": n.is_clickable}))
                continue
            if fit:
                props |= fit
                texts.append(fit["ink"])
            else:  # no ink of its own on the screen: named, not drawn
                attrs["aria-label"], label = label, ""
        kind = "button" if n.is_clickable and (label or desc) else "bg"
        if kind == "button" and desc and not label:
            attrs["aria-label"] = desc
        if kind == "bg" and label:
            kind = "text"
        if kind == "bg" and bg is None and not n.is_clickable and "aria-label" not in attrs:
            continue  # a container that paints nothing and does nothing adds only a box
        w.elems.append(Elem(kind, box, label, props))
    for ink in texts:
        _erase(clean, ink, None)
    for e in w.elems:
        if e.kind == "img":
            e.props["asset"] = crop_asset(clean, e.box)
        elif e.props.get("face"):  # a filled button inside a larger box: its look as pixels
            e.props["face"] = crop_asset(clean, e.box)
            e.props["bg"] = None
    return w


def _squeeze(t: str) -> str:
    return "".join(t.split())


def _drawn_below(nodes) -> dict[int, str]:
    """Per node, the words it and its descendants carry, in drawing order and without spaces: a
    label its children spell out between them (a list item of a link and a bullet) is theirs."""
    out: dict[int, str] = {}
    for n in reversed(nodes):  # children come after their parent in tree order
        own, kids = _squeeze(n.text or ""), "".join(out.get(c, "") for c in n.child_ids)
        out[n.unique_id] = kids if own in kids else own  # words spelled out twice count once
    return out


def _web_content(nodes, by_id) -> tuple[set[int], set[int]]:
    """(every node of a web page, the pages' own nodes): a WebView and what lies below it. A page
    exposes only some of what it draws to accessibility (headings, pictures and fields go
    missing) and sets its text in its own faces, so its pixels are carried and its nodes placed
    over them, named by their words; fields stay fields."""
    pages = {n.unique_id for n in nodes if "WebView" in n.class_name}
    web, stack = set(), list(pages)
    while stack:
        i = stack.pop()
        if i in web or i not in by_id:
            continue
        web.add(i)
        stack.extend(by_id[i].child_ids)
    return web, pages


def _own_colour(img, box, kids) -> tuple[np.ndarray, float]:
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


def _erase(clean: np.ndarray, ink, colour) -> None:
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
