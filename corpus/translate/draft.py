"""A translated phone screen kept as data (`Draft`: windows of `Elem`s) and written out as HTML.

The translation (corpus/translate/forest.py) fills a draft; the visual-feedback revision
(corpus/revise.py) edits its elements and emits again, so the HTML is written from the draft
each time rather than kept: every element is absolutely placed in CSS pixels, text where its ink
was, controls drawn as controls, pictures as content-addressed assets (render/assets.py).
"""

from __future__ import annotations

import html as htmllib
from dataclasses import dataclass, field

import numpy as np

# android_env's WindowType values
TYPE_APPLICATION, TYPE_INPUT_METHOD, TYPE_SYSTEM = 1, 2, 3
FONT_STACK = "Roboto,'Noto Sans CJK SC','Noto Color Emoji',sans-serif"
MAX_INPUT_FONT = 24.0  # CSS px: an input's text is never sized from a tall box alone
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
    # the screenshot with the text the HTML draws painted out: crops (the reviser's too) come from it
    clean: np.ndarray | None = field(default=None, repr=False, compare=False)

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
        style += ";direction:rtl" if p.get("rtl") else ""
    elif p.get("align") == "right":
        style += f"right:{(x1 - p['rx']) / s:.1f}px;text-align:right;top:{top:.1f}px"
        if p.get("lines", 1) > 1:
            style += f";width:{(p['rx'] - x0) / s + 2:.0f}px;direction:rtl"
        elif p.get("rtl"):  # a line's closing marks go to its left end, as the phone sets them
            style += ";direction:rtl"
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
