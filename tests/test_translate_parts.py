"""The translator's parts on their own (corpus/translate/): reading pixels, fitting text to its ink,
walking the forest, and the draft's HTML. Screenshots here are small arrays drawn with PIL in
Roboto (the face the translator measures in), so each part's answer can be checked exactly; the
whole translation against Chromium's pixels is tests/test_translate_phone.py's job."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from corpus.translate import pixels, text
from corpus.translate.draft import Draft, Elem, Window
from corpus.translate.forest import translate, tree_order

ROBOTO = text.ROBOTO / "Roboto-Regular.ttf"
needs_roboto = pytest.mark.skipif(not ROBOTO.is_file(), reason="Roboto is not installed")


def canvas(w=200, h=60, bg=(250, 250, 250)) -> np.ndarray:
    return np.full((h, w, 3), bg, np.uint8)


def write(img: np.ndarray, xy, words: str, size: int, fill=(20, 20, 20)) -> np.ndarray:
    im = Image.fromarray(img)
    ImageDraw.Draw(im).text(xy, words, font=ImageFont.truetype(str(ROBOTO), size), fill=fill)
    return np.asarray(im).copy()


# ---- pixels ----------------------------------------------------------------------------------


def test_dominant_is_the_commonest_colour_and_its_share():
    img = canvas(100, 100, (10, 200, 30))
    img[:20] = (255, 255, 255)
    col, share = pixels.dominant(img, (0, 0, 100, 100))
    assert tuple(col) == (10, 200, 30) and 0.75 <= share <= 0.85


def test_runs_join_across_short_gaps_only():
    flags = np.array([0, 1, 1, 0, 1, 0, 0, 0, 1, 1], bool)
    assert pixels.runs(flags, 1) == [(1, 3), (4, 5), (8, 10)]
    assert pixels.runs(flags, 2) == [(1, 5), (8, 10)]
    assert pixels.runs(np.zeros(4, bool), 3) == []


def test_ink_mask_and_readable_colours():
    img = canvas(10, 10)
    img[2:4, 2:4] = (0, 0, 0)
    assert pixels.ink_mask(img, (0, 0, 10, 10), (250, 250, 250)).sum() == 4
    assert pixels.readable((245, 245, 245), (255, 255, 255)) == (0, 0, 0)  # too faint: black
    assert pixels.readable((200, 0, 0), (255, 255, 255)) == (200, 0, 0)
    assert pixels.contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)


def test_field_edge_tells_an_underline_from_an_outline():
    under = canvas(120, 40)
    under[34:36, 4:116] = (120, 120, 120)
    e = pixels.field_edge(under, (0, 0, 120, 40), (250, 250, 250))
    assert e["sides"] == "bottom" and e["box"] == (4, 34, 116, 36) and e["width"] == 2
    box = canvas(120, 40)
    box[2:4, 6:114] = box[36:38, 6:114] = (120, 120, 120)
    box[2:38, 6:8] = box[2:38, 112:114] = (120, 120, 120)
    e = pixels.field_edge(box, (0, 0, 120, 40), (250, 250, 250))
    assert e["sides"] == "all" and e["box"] == (6, 2, 114, 38)
    assert pixels.field_edge(canvas(120, 40), (0, 0, 120, 40), (250, 250, 250)) is None


def test_corner_radius_of_a_rounded_card():
    img = canvas(100, 100, (0, 0, 0))
    im = Image.fromarray(img)
    ImageDraw.Draw(im).rounded_rectangle((0, 0, 99, 99), radius=20, fill=(250, 250, 250))
    r = pixels.corner_radius(np.asarray(im), (0, 0, 100, 100), np.array([250, 250, 250]))
    assert 14 <= r <= 26
    assert pixels.corner_radius(canvas(100, 100), (0, 0, 100, 100), np.array([250, 250, 250])) == 0


def test_own_colour_reads_where_children_leave_the_box_showing():
    img = canvas(100, 100, (30, 60, 200))
    img[10:90, 10:90] = (255, 255, 255)  # a child covers the middle
    col, share = pixels.own_colour(img, (0, 0, 100, 100), [(10, 10, 90, 90)])
    assert tuple(col) == (30, 60, 200) and share > 0.9


def test_erase_paints_a_text_box_with_the_colour_around_it():
    img = write(canvas(), (10, 10), "Hello", 24)
    pixels.erase(img, (8, 8, 90, 45), None)
    assert (img == 250).all()


def test_uncovered_bands_hold_every_uncovered_pixel():
    covered = np.ones((100, 50), bool)
    covered[:10] = False  # a status bar
    covered[90:, 20:30] = False
    bands = pixels.uncovered(covered)
    assert bands == [(0, 0, 50, 10), (20, 90, 30, 100)]


# ---- text ------------------------------------------------------------------------------------


def test_scripts_and_ink_ratios():
    assert text.text_script("Settings") == "latin"
    assert text.text_script("الإعدادات") == "rtl"
    assert text.text_script("设置") == "cjk"
    assert text.ink_ratio("ace") == (text.XH, 0.0)
    assert text.ink_ratio("Apply") == (text.CAP, text.DESC)
    assert text.ink_ratio("🏆 x") == (text.EMOJI_UP, text.EMOJI_DOWN)


@needs_roboto
def test_widths_and_greedy_wrapping():
    w = text.text_width("Hello world", 20)
    assert w == pytest.approx(2 * text.text_width("Hello world", 10))
    assert text.text_width("🏆", 20) == pytest.approx(text.EMOJI_ADVANCE * 20)
    one = text.text_width("one", 20)
    lines = text.wrap_widths("one two three".split(), 20, one + 1)
    assert len(lines) == 3 and lines[0] == pytest.approx(one)
    assert text.first_line_width("one two three".split(), 20, 10_000) == pytest.approx(
        text.text_width("one two three", 20)
    )


@needs_roboto
@pytest.mark.parametrize("size", [16, 24, 36])
def test_fit_text_reads_size_colour_and_place_from_the_ink(size):
    img = write(canvas(300, 80), (12, 10), "Settings", size, fill=(200, 30, 30))
    fit = text.fit_text(img, (0, 0, 300, 80), (250, 250, 250), "Settings", 1.0)
    assert fit["fs"] == pytest.approx(size, rel=0.08)
    assert fit["lines"] == 1 and fit["align"] == "left" and not fit["ellipsis"]
    assert np.abs(np.array(fit["fg"]) - (200, 30, 30)).max() <= 40
    assert 10 <= fit["ink"][0] <= 16


@needs_roboto
def test_fit_text_sees_a_cut_short_line_and_no_ink():
    words = "A long title the phone cut short"
    img = write(canvas(300, 60), (8, 10), "A long title the phone…", 20)
    fit = text.fit_text(img, (0, 0, 300, 60), (250, 250, 250), words, 1.0)
    assert fit["ellipsis"] and fit["fs"] == pytest.approx(20, rel=0.1)
    assert text.fit_text(canvas(), (0, 0, 200, 60), (250, 250, 250), "nothing", 1.0) is None


@needs_roboto
def test_fit_text_counts_wrapped_lines_and_their_pitch():
    img = write(canvas(200, 100), (4, 4), "First line\nSecond line", 18)
    fit = text.fit_text(img, (0, 0, 200, 100), (250, 250, 250), "First line Second line", 1.0)
    assert fit["lines"] == 2 and fit["lh"] > fit["fs"]


def test_an_ellipsis_is_three_level_dots_at_the_end():
    ink = np.zeros((20, 60), bool)
    ink[2:18, 0:30] = True  # letters
    for x in (36, 42, 48):
        ink[15:18, x : x + 3] = True
    assert text.ends_in_ellipsis(ink, 20)
    ink[5:8, 48:51], ink[15:18, 48:51] = True, False  # the last dot raised: not an ellipsis
    assert not text.ends_in_ellipsis(ink, 20)


# ---- the forest and the draft ----------------------------------------------------------------


def forest(nodes) -> bytes:
    from corpus.a11y import forest_class

    f = forest_class()()
    w = f.windows.add(window_type=1, layer=1, id=1)
    w.bounds_in_screen.right, w.bounds_in_screen.bottom = 200, 100
    made = {}
    for uid, parent, box, cls, fields in nodes:
        n = w.tree.nodes.add(
            unique_id=uid, class_name="android.widget." + cls, is_visible_to_user=True, **fields
        )
        (
            n.bounds_in_screen.left,
            n.bounds_in_screen.top,
            n.bounds_in_screen.right,
            n.bounds_in_screen.bottom,
        ) = box
        made[uid] = n
        if parent is not None:
            made[parent].child_ids.append(uid)
    return f.SerializeToString()


def test_tree_order_walks_depth_first_from_the_root_then_the_unreachable():
    from corpus.a11y import forest_class

    f = forest_class()()
    t = f.windows.add().tree
    for uid, kids, depth in ((0, [2, 1], 0), (1, [], 1), (2, [3], 1), (3, [], 2), (9, [], 5)):
        n = t.nodes.add(unique_id=uid, depth=depth)
        n.child_ids.extend(kids)
    assert [n.unique_id for n in tree_order(t.nodes)] == [0, 2, 3, 1, 9]


def test_the_walk_makes_each_node_the_element_of_its_kind():
    nodes = [
        (0, None, (0, 0, 200, 100), "FrameLayout", {}),
        (1, 0, (0, 0, 200, 30), "TextView", {"text": "Title"}),
        (2, 0, (0, 30, 200, 60), "EditText", {"text": "typed", "is_editable": True}),
        (3, 0, (0, 60, 100, 100), "CheckBox", {"text": "Remember", "is_checkable": True, "is_checked": True}),
        (4, 0, (100, 60, 200, 100), "ImageView", {"content_description": "logo"}),
    ]
    d = translate(forest(nodes), None, 1.0, (200, 100))
    kinds = {e.text: e.kind for w in d.windows for e in w.elems if e.text}
    assert kinds["typed"] == "input" and kinds["logo"] == "img"
    checks = [e for w in d.windows for e in w.elems if e.kind == "check"]
    assert checks and checks[0].props["checked"] and checks[0].props["role"] == "checkbox"
    assert d.clean is not None and d.clean.shape == (100, 200, 3)


def test_a_label_its_children_spell_out_is_drawn_once():
    nodes = [
        (0, None, (0, 0, 200, 100), "FrameLayout", {}),
        (1, 0, (0, 0, 200, 40), "LinearLayout", {"text": "• Read more"}),
        (2, 1, (0, 0, 20, 40), "TextView", {"text": "•"}),
        (3, 1, (20, 0, 200, 40), "TextView", {"text": "Read more"}),
    ]
    html = translate(forest(nodes), None, 1.0, (200, 100)).html()
    assert html.count("Read more") == 1 and "• Read more" not in html


def test_the_draft_writes_its_windows_in_order_in_css_pixels():
    d = Draft(200, 100, 2.0)
    w = Window(1, (0, 0, 200, 100))
    w.elems.append(Elem("bg", (0, 0, 200, 100), props={"bg": (1, 2, 3)}))
    w.elems.append(Elem("button", (20, 40, 120, 80), "OK", props={"attrs": {"data-id": "ok"}}))
    d.windows.append(w)
    html = d.html()
    assert 'data-window="app"' in html and "background:#010203" in html
    assert 'data-id="ok"' in html and "left:10px;top:20px;width:50px;height:20px" in html
    assert ">OK</button>" in html
