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

By job: `draft` (the Draft and its HTML), `pixels` (reading the screenshot), `text` (fitting
text to its ink), `forest` (walking the tree: `translate`).
"""

from .draft import (
    FONT_STACK,
    MAX_INPUT_FONT,
    STYLE,
    TYPE_APPLICATION,
    TYPE_INPUT_METHOD,
    TYPE_SYSTEM,
    Draft,
    Elem,
    Window,
)
from .forest import PICTURED, ROOT_ID, translate, tree_order
from .pixels import (
    INK,
    contrast,
    corner_radius,
    crop_asset,
    dominant,
    field_edge,
    ink_mask,
    luminance,
    readable,
)
from .text import ASCENT, CAP, DESC, DESCENT, ROBOTO, RTL_FACE, XH, fit_text, rtl_width, text_width

__all__ = [
    "ASCENT",
    "CAP",
    "DESC",
    "DESCENT",
    "FONT_STACK",
    "INK",
    "MAX_INPUT_FONT",
    "PICTURED",
    "ROBOTO",
    "ROOT_ID",
    "RTL_FACE",
    "STYLE",
    "TYPE_APPLICATION",
    "TYPE_INPUT_METHOD",
    "TYPE_SYSTEM",
    "XH",
    "Draft",
    "Elem",
    "Window",
    "contrast",
    "corner_radius",
    "crop_asset",
    "dominant",
    "field_edge",
    "fit_text",
    "ink_mask",
    "luminance",
    "readable",
    "rtl_width",
    "text_width",
    "translate",
    "tree_order",
]
