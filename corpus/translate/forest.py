"""Walking a phone screen's accessibility forest: every window in z-order, every visible node in
drawing order, each made the element of its kind (text, input, checkbox/radio/switch, button,
image, box) with its look read from the screenshot (corpus/translate/pixels.py, text.py).

What no window covers (status and navigation bars, the dimmed app behind a dialog) and a web
page inside a WebView or a browser come over as the screenshot's pixels, with the page's nodes
placed over them, named by their words.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

import numpy as np
from PIL import Image

from .draft import MAX_INPUT_FONT, Draft, Elem, Window
from .pixels import (
    corner_radius,
    crop_asset,
    dominant,
    erase,
    field_edge,
    find_widget,
    own_colour,
    readable,
    uncovered,
)
from .text import fit_text

ROOT_ID = 0  # "the root node is the node whose ID is 0"
PICTURED = 0.5  # a window with less of its area in one colour keeps its own pixels behind its nodes


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
    from ..a11y import forest_class

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
    for band in uncovered(covered) if screenshot is not None else []:
        d.over.append(Elem("patch", band, props={"asset": crop_asset(img, band)}))
    d.clean = clean
    return d


@dataclass
class _Walk:
    """What the walk over one window's nodes reads and keeps: the screenshot and its copy with
    drawn text painted out, the tree's links, and the colour each node's box is painted."""

    img: np.ndarray
    clean: np.ndarray
    rx: float
    ry: float
    scale: float
    by_id: dict
    parent: dict
    base: tuple
    pictured: bool
    drawn_below: dict
    web: set
    pages: set
    painted: dict = field(default_factory=dict)  # node id -> the colour its box is painted
    texts: list = field(default_factory=list)  # ink boxes of the text the HTML draws

    def box(self, n):
        return _bounds(n, self.rx, self.ry, self.img.shape[1], self.img.shape[0])


def _content(nodes, wb, rx, ry, W, H) -> tuple[int, int, int, int]:
    """What a window's nodes below its root cover; a decor view around the content keeps the
    window's columns but the content's rows."""
    inner = [
        b
        for b in (_bounds(n, rx, ry, W, H) for n in nodes)
        if b != wb and b[2] - b[0] >= 2 and b[3] - b[1] >= 2
    ]
    if not inner:
        return wb
    c = (
        min(b[0] for b in inner),
        min(b[1] for b in inner),
        max(b[2] for b in inner),
        max(b[3] for b in inner),
    )
    if c == wb:
        return c
    c = (min(c[0], wb[0] + 0), c[1], max(c[2], wb[2]), c[3])
    return (max(wb[0], c[0]), max(wb[1], c[1]), min(wb[2], c[2]), min(wb[3], c[3]))


def _window(win, wb, img, clean, rx, ry, scale) -> Window:
    W, H = img.shape[1], img.shape[0]
    w = Window(win.window_type, wb)
    nodes = [n for n in tree_order(win.tree.nodes) if n.is_visible_to_user]
    w.content = _content(nodes, wb, rx, ry, W, H)
    base, share = dominant(img, w.content, step=4)
    radius = corner_radius(img, w.content, base)
    # no one colour behind most of it (a gradient, a wallpaper, a photo): the window's own pixels
    pictured = share < PICTURED
    w.elems.append(Elem("bg", w.content, props={"bg": tuple(base), "radius": radius, "face": pictured}))
    by_id = {n.unique_id: n for n in win.tree.nodes}
    parent = {c: n.unique_id for n in win.tree.nodes for c in n.child_ids}
    web, pages = _web_content(nodes, by_id)
    k = _Walk(
        img, clean, rx, ry, scale, by_id, parent, tuple(base), pictured, _drawn_below(nodes), web, pages
    )
    for n in nodes:
        e = _node(k, n)
        if e is not None:
            w.elems.append(e)
    for ink in k.texts:
        erase(clean, ink, None)
    for e in w.elems:
        if e.kind == "img":
            e.props["asset"] = crop_asset(clean, e.box)
        elif e.props.get("face"):  # a filled button inside a larger box: its look as pixels
            e.props["face"] = crop_asset(clean, e.box)
            e.props["bg"] = None
    return w


def _node(k: _Walk, n) -> Elem | None:
    """One node as an element of its kind (None: it adds nothing), its colour noted for its
    children."""
    box = k.box(n)
    x0, y0, x1, y1 = box
    if x1 - x0 < 2 or y1 - y0 < 2:
        return None
    under = k.painted.get(k.parent.get(n.unique_id, -1), k.base)
    col, share = own_colour(k.img, box, [k.box(k.by_id[c]) for c in n.child_ids if c in k.by_id])
    paints = share >= (0.75 if n.child_ids else 0.45) and np.abs(col - np.asarray(under)).max() > 10
    mine = tuple(col) if paints else under
    k.painted[n.unique_id] = mine
    cls = _cls(n)
    attrs = {"data-class": cls}
    if n.view_id_resource_name:
        attrs["data-id"] = n.view_id_resource_name.rsplit("/", 1)[-1]
    label = n.text or ""
    desc = n.content_description or ""
    kids = [k.by_id[c] for c in n.child_ids if c in k.by_id]
    # a labelled container whose children draw the same words (or the start of them, the
    # rest scrolled away) leaves the drawing to them
    spelled = "".join(k.drawn_below.get(c.unique_id, "") for c in kids)
    if (
        label
        and not n.is_editable
        and spelled
        and (_squeeze(label).startswith(spelled) or _squeeze(label) in spelled)
    ):
        label = ""
    if n.unique_id in k.pages:  # a web page: its pixels under the nodes it exposes; its text is its title
        if label or desc:
            attrs["aria-label"] = label or desc
        return Elem("bg", box, "", props={"attrs": attrs, "bg": None, "face": True})
    if "Image" in cls and not n.is_editable:  # an image's text (a web <img>'s alt) is not drawn
        desc, label = desc or label, ""
    # a page, or a pictured window, paints its own backgrounds: flat boxes would only cover them
    bg = mine if paints and n.unique_id not in k.web and not k.pictured else None
    radius = corner_radius(k.img, box, col) if paints else 0
    props = {"attrs": attrs, "bg": bg, "radius": radius}
    if n.is_editable:
        return _field(k, n, box, mine, props)
    if n.is_checkable:
        e = _checkable(k, n, box, mine, label, props)
        if e is not None:
            return e
    return _plain(k, n, box, mine, (label, desc), share, props)


def _field(k: _Walk, n, box, mine, props) -> Elem:
    """An editable node: an input (or textarea) with its text fitted and its outline or underline."""
    attrs = props["attrs"]
    props |= {"password": n.is_password, "hint": n.hint_text, "fg": readable((0, 0, 0), mine)}
    fit = fit_text(k.img, box, mine, n.text or n.hint_text, k.scale) if (n.text or n.hint_text) else None
    if fit:
        props |= {key: fit[key] for key in ("fg", "tx", "ty", "lh", "lines")}
        props["fs"] = min(fit["fs"], MAX_INPUT_FONT * k.scale)
        erase(k.clean, fit["ink"], mine)
    if n.unique_id not in k.web:  # a page's own field is in its pixels
        props["edge"] = field_edge(k.img, box, mine)
    if n.is_password and n.text and not set(n.text) <= {"•", "*"}:
        attrs["data-masked"] = "1"
    return Elem("input", box, n.text, props)


def _checkable(k: _Walk, n, box, mine, label: str, props) -> Elem | None:
    """A checkbox, radio or switch drawn as one, its label fitted beside the control; None for
    any other checkable thing (a toggle button, marked pressed and drawn as a plain node)."""
    x0, y0, x1, y1 = box
    attrs = props["attrs"]
    sibs = [k.by_id[c] for c in k.by_id.get(k.parent.get(n.unique_id, -1), n).child_ids if c in k.by_id] or [
        n
    ]
    role = _role(n, sibs)
    if role == "pressed":
        attrs["aria-pressed"] = "true" if n.is_checked else "false"
        return None
    widget, accent = find_widget(k.img, box, mine, role, k.scale)
    props |= {"role": role, "checked": n.is_checked, "widget": widget, "accent": accent}
    if label:
        tb = (widget[2], y0, x1, y1) if widget[0] - x0 < (x1 - x0) / 2 else (x0, y0, widget[0], y1)
        fit = fit_text(k.img, tb, mine, label, k.scale) if tb[2] - tb[0] > 4 else None
        if fit:
            props |= fit
            erase(k.clean, fit["ink"], mine)
        else:  # words the screen does not show (a switch's on/off text)
            attrs["aria-label"], label = label, ""
    erase(k.clean, widget, mine)
    return Elem("check", box, label, props)


def _plain(k: _Walk, n, box, mine, words, share: float, props) -> Elem | None:
    """An image (cropped later, once every text is painted out), text, a button or a box."""
    label, desc = words
    cls, attrs = _cls(n), props["attrs"]
    kids = [c for c in n.child_ids if c in k.by_id]
    is_image = (
        not label and ("Image" in cls or (not kids and desc)) or (not label and not kids and share < 0.6)
    )
    if is_image:
        if desc:
            attrs["aria-label"] = desc
        props |= {"asset": None, "click": n.is_clickable}
        return Elem("img", box, desc, props)
    if label:
        # a page's text is set in its own faces and layout, which Roboto spans cannot redo
        # line by line: the page's pixels show it and its node names it
        fit = fit_text(k.img, box, mine, label, k.scale) if n.unique_id not in k.web else None
        if fit and fit["rich"]:  # styled text in many sizes: its pixels, its words as their name
            attrs["aria-label"] = label
            return Elem("img", box, label, props | {"asset": None, "click": n.is_clickable})
        if fit:
            props |= fit
            k.texts.append(fit["ink"])
        else:  # no ink of its own on the screen: named, not drawn
            attrs["aria-label"], label = label, ""
    kind = "button" if n.is_clickable and (label or desc) else "bg"
    if kind == "button" and desc and not label:
        attrs["aria-label"] = desc
    if kind == "bg" and label:
        kind = "text"
    if kind == "bg" and props["bg"] is None and not n.is_clickable and "aria-label" not in attrs:
        return None  # a container that paints nothing and does nothing adds only a box
    return Elem(kind, box, label, props)


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
