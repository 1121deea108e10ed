"""Phone screen translation (corpus/translate.py) on hand-made screens: each test builds a forest in
android_env's real schema and a screenshot that real Chromium renders from a small phone page, then
checks one fault of the translation stays fixed (issue #41). No real trace is read here."""

from __future__ import annotations

import re

import numpy as np
import pytest

from render import Viewport
from render.metrics import blur_ssim, pixels_off

W, H = 360, 640
FACE = "font-family:Roboto,'Noto Color Emoji',sans-serif"


def forest(nodes: list[tuple]) -> bytes:
    """One application window; `nodes` are (id, parent id or None, box, class, fields) with
    android.widget. prefixed to a bare class name."""
    from corpus.android import forest_class

    f = forest_class()()
    w = f.windows.add(window_type=1, layer=1, id=1)
    w.bounds_in_screen.right, w.bounds_in_screen.bottom = W, H
    made = {}
    for uid, parent, box, cls, fields in nodes:
        n = w.tree.nodes.add(
            unique_id=uid,
            class_name=cls if "." in cls else "android.widget." + cls,
            is_visible_to_user=True,
            package_name="org.example.app",
            **fields,
        )
        b = n.bounds_in_screen
        b.left, b.top, b.right, b.bottom = box
        made[uid] = n
        if parent is not None:
            made[parent].child_ids.append(uid)
    return f.SerializeToString()


def shot(renderer, body: str) -> np.ndarray:
    """The screenshot: `body` (absolutely placed elements) rendered at 360x640 by Chromium."""
    html = (
        f'<!DOCTYPE html><html><body style="margin:0;{FACE}"><div style="position:relative;width:{W}px;'
        f'height:{H}px;overflow:hidden;background:#fafafa">{body}</div></body></html>'
    )
    return renderer.render(html, Viewport(W, H), boxes=False).image


def draw(renderer, nodes, body):
    """(screenshot, draft, first render) of a hand-made screen."""
    from corpus.translate import translate

    img = shot(renderer, body)
    d = translate(forest(nodes), img)
    return img, d, renderer.render(d.html(), Viewport(W, H), boxes=False).image


def box_off(a, b, box) -> float:
    x0, y0, x1, y1 = box
    return pixels_off(a[y0:y1, x0:x1], b[y0:y1, x0:x1])


def spans(html: str, text: str) -> int:
    """How many drawn text elements carry exactly `text`."""
    return len(re.findall(rf"<span[^>]*>{re.escape(text)}</span>", html))


ROOT = (0, None, (0, 0, W, H), "FrameLayout", {})


def test_a_web_page_keeps_its_pixels_and_its_title_is_not_drawn(renderer):
    """A WebView's text is its page's title: drawn over the page it came out many times too large.
    A page exposes only part of what it draws (a picture, a heading), so its pixels are carried."""
    nodes = [
        ROOT,
        (1, 0, (0, 0, W, H), "android.webkit.WebView", {"text": "Fish Eating Fish download"}),
        (2, 1, (16, 24, 200, 56), "android.view.View", {"text": "Downloads"}),
        (3, 1, (16, 80, 344, 240), "Image", {"text": "Screenshot of the game"}),
        (4, 1, (300, 24, 340, 56), "Button", {"text": "Menu", "is_clickable": True}),
    ]
    body = (
        '<div style="position:absolute;left:16px;top:24px;font:500 26px Roboto;color:#123">Downloads</div>'
        '<div style="position:absolute;left:16px;top:80px;width:328px;height:160px;'
        'background:linear-gradient(90deg,#0a6,#fc0 60%,#c03)"></div>'
        '<div style="position:absolute;left:16px;top:270px;font:700 30px serif;color:#222">Not in the tree</div>'
        + "".join(
            f'<div style="position:absolute;left:306px;top:{30 + 8 * k}px;width:28px;height:3px;background:#333"></div>'
            for k in range(3)
        )
    )
    img, d, first = draw(renderer, nodes, body)
    html = d.html()
    assert "Fish Eating Fish" not in re.sub(r'aria-label="[^"]*"', "", html)  # named, not drawn
    assert spans(html, "Menu") == 0 and spans(html, "Screenshot of the game") == 0  # an icon, a picture
    assert box_off(first, img, (16, 80, 344, 240)) <= 0.02  # the picture
    assert box_off(first, img, (16, 260, 344, 320)) <= 0.05  # what the page does not expose
    assert blur_ssim(first, img) >= 0.95 and pixels_off(first, img) <= 0.03


def test_a_list_item_and_its_link_draw_their_words_once(renderer):
    """A web list item's node carries the words its bullet and link nodes draw between them."""
    nodes = [ROOT]
    body = ""
    for k, words in enumerate(["1. About", "2. Reinstall", "3. Autostart"]):
        y = 40 + 40 * k
        item, bullet, link, label = 10 * k + 1, 10 * k + 2, 10 * k + 3, 10 * k + 4
        nodes += [
            (item, 0, (16, y, 344, y + 32), "android.view.View", {"text": f"• {words}"}),
            (bullet, item, (16, y, 40, y + 32), "android.view.View", {"text": "• "}),
            (link, item, (40, y, 200, y + 32), "android.view.View", {"content_description": words}),
            (label, link, (40, y, 200, y + 32), "android.view.View", {"text": words}),
        ]
        body += (
            f'<div style="position:absolute;left:22px;top:{y + 4}px;font:20px Roboto;color:#124">•</div>'
            f'<div style="position:absolute;left:42px;top:{y + 4}px;font:20px Roboto;color:#124">{words}</div>'
        )
    img, d, first = draw(renderer, nodes, body)
    html = d.html()
    for words in ["1. About", "2. Reinstall", "3. Autostart"]:
        assert spans(html, words) == 1 and f"• {words}</span>" not in html
    assert pixels_off(first, img) <= 0.01


@pytest.mark.parametrize("outline", [False, True])
def test_a_text_field_keeps_its_underline_or_outline(renderer, outline):
    line = "border:2px solid #1565c0;border-radius:8px" if outline else "border-bottom:2px solid #00897b"
    nodes = [ROOT, (1, 0, (16, 100, 344, 156), "EditText", {"text": "milk", "is_editable": True})]
    body = (
        f'<div style="position:absolute;left:16px;top:100px;width:328px;height:56px;box-sizing:border-box;'
        f'{line}"></div><div style="position:absolute;left:28px;top:114px;font:20px Roboto;color:#222">milk</div>'
    )
    img, d, first = draw(renderer, nodes, body)
    html = d.html()
    assert ("border:2" if outline else "border-bottom:2") in html
    band = (16, 100, 344, 104) if outline else (16, 152, 344, 156)
    assert box_off(first, img, band) <= 0.1  # the line is where the screenshot has it
    assert box_off(first, img, (16, 100, 344, 156)) <= 0.06
