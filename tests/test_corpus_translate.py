"""Phone screens translated to HTML (corpus/translate/): a real-schema forest that looks like its
screenshot, each known defect fixed, assets named again after the sim, the fonts installed."""

import io
import re
from pathlib import Path

import numpy as np
from phone_fixtures import font, node, phone_screen, real_a11y
from PIL import Image

from render import Viewport


def test_android_translation_of_a_real_schema_forest_looks_like_its_screenshot(renderer):
    from corpus.revise import revise_drafts
    from corpus.translate import translate
    from render.assets import STORE, names_in
    from render.metrics import blur_ssim, pixels_off

    forest, shot = phone_screen()
    d = translate(forest, shot)
    html = d.html()
    # the image node is carried as pixels, by name, from the asset store
    img = re.search(r'<img[^>]*src="asset:([0-9a-f]+)"[^>]*alt="Basket"', html)
    assert img and STORE.get(img.group(1)) is not None
    crop = np.asarray(Image.open(io.BytesIO(STORE.get(img.group(1)))).convert("RGB"))
    assert crop.shape == (64, 64, 3) and np.abs(crop.astype(int) - np.asarray(shot)[96:160, 16:80]).max() <= 1
    assert "base64" not in html and len(names_in(html)) >= 2  # the status bar is a crop too
    # text fitted to its ink: the screenshot's colour and about its size
    span = re.search(
        r'<span[^>]*style="font-size:([\d.]+)px;[^"]*color:#([0-9a-f]{6})[^"]*">Shopping list<', html
    )
    assert span and 20 <= float(span.group(1)) <= 28
    assert np.abs(np.array(list(bytes.fromhex(span.group(2)))) - (30, 60, 200)).max() <= 40
    # the checkbox is a checked checkbox, the password field masks, the keyboard is a window above
    assert re.search(r'<input type="checkbox" checked', html)
    assert 'type="password" value="hunter2"' in html
    assert html.index('data-window="app"') < html.index('aria-label="keyboard"')
    assert re.search(r">q</span>", html)
    rev = revise_drafts([(d, np.asarray(shot))], renderer, floor=0.9, max_off=0.05)[0]
    got = renderer.render(rev.html, Viewport(360, 640)).image
    assert blur_ssim(got, shot) >= 0.9 and pixels_off(got, shot) <= 0.05, rev.rounds
    # in the page, the password is masked: its value is not drawn as text
    boxes = renderer.render(rev.html, Viewport(360, 640)).boxes
    assert not any("hunter2" in b.text for b in boxes)


def test_android_screen_defects_each_fixed():
    from corpus.translate import contrast, translate

    pb = real_a11y()
    f = pb.AndroidAccessibilityForest()
    w = f.windows.add(window_type=1, layer=1)
    w.bounds_in_screen.right, w.bounds_in_screen.bottom = 1080, 1920
    node(w.tree, 0, (0, 0, 1080, 1920), "FrameLayout", kids=[1, 2, 3, 4, 5, 6])
    node(w.tree, 1, (0, 200, 1080, 600), "EditText", "", is_editable=True, hint_text="Search")
    node(w.tree, 2, (0, 600, 1080, 700), "Switch", "Wi-Fi", is_checkable=True, is_checked=True)
    node(w.tree, 3, (0, 700, 1080, 800), "RadioButton", "Small", is_checkable=True)
    node(
        w.tree, 4, (0, 800, 1080, 900), "ImageButton", is_checkable=True, content_description="Show password"
    )
    lab = node(w.tree, 5, (0, 900, 1080, 1000), "LinearLayout", "Dark theme", kids=[7], is_clickable=True)
    lab.content_description = ""
    node(w.tree, 7, (40, 920, 600, 980), "TextView", "Dark theme")
    node(w.tree, 6, (0, 1000, 1080, 1300), "TextView", "one two three four five six seven eight nine ten")
    # a recorded 1080-px layout for a 540-px screenshot: bounds rescaled, and said
    shot = Image.new("RGB", (540, 960), (24, 24, 24))
    from PIL import ImageDraw

    dr = ImageDraw.Draw(shot)
    dr.multiline_text(
        (10, 505),
        "one two three four\nfive six seven eight\nnine ten",
        font=font(24),
        fill=(220, 220, 220),
        spacing=6,
    )
    d = translate(f.SerializeToString(), shot, 1.0, (1080, 1920))
    html = d.html()
    assert any("1080x1920" in n and "rescaled" in n for n in d.notes)
    assert 'data-class="EditText"' in html and re.search(
        r'data-class="EditText"[^>]*left:0px;top:100px;width:540px;height:200px', html
    )
    size = float(re.search(r'data-class="EditText"[^>]*font-size:([\d.]+)px', html).group(1))
    assert size <= 24  # a tall box does not make huge input text
    assert 'role="switch"' in html and 'type="radio"' in html  # drawn as what they are
    assert re.search(r'data-class="ImageButton"[^>]*aria-pressed="false"', html)  # a toggle, not a box
    assert html.count("Dark theme") == 1  # the container leaves its child's label to the child
    multi = re.search(r'class="wm-t wm-w"[^>]*>one two three', html)
    assert multi  # wraps like the screenshot's three lines
    # text is never a shade of its background
    for m in re.finditer(r"color:#([0-9a-f]{6})", html):
        assert contrast(list(bytes.fromhex(m.group(1))), (24, 24, 24)) >= 1.5


def test_android_sim_result_names_assets_again(renderer):
    from corpus.translate import translate

    forest, shot = phone_screen()
    html = translate(forest, shot).html()
    got = renderer.interact(html, Viewport(360, 640), [("click", 118, 125)])
    assert "base64" not in got.html and "asset:" in got.html


def test_install_script_installs_cjk_emoji_and_android_fonts():
    text = (Path(__file__).parents[1] / "scripts" / "install.sh").read_text()
    for pkg in ("fonts-noto-cjk", "fonts-noto-color-emoji", "fonts-roboto-unhinted"):
        assert pkg in text
