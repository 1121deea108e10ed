"""Visual-feedback revision (corpus/revise.py): colours sampled from the screenshot, a world model as
the reviser."""

import re

from phone_fixtures import android_fixture
from PIL import Image

from corpus.android import import_android, tree_to_html
from corpus.revise import backend_coder, revise_until, sample_colours
from render import Viewport
from worldmodel import Backend


def test_visual_feedback_revision_raises_fidelity(tmp_path, renderer):
    trees = android_fixture(tmp_path / "ep.tfrecord", renderer)
    t = next(iter(import_android(tmp_path / "ep.tfrecord")))
    blank = tree_to_html(trees[0], 360, 640)  # structure only: no screenshot to colour it from
    rev = revise_until(t.screen.image, blank, sample_colours, renderer, Viewport(360, 640), 0.9, 2)
    assert rev.rounds[0]["ssim"] < 0.9 <= rev.rounds[-1]["ssim"] and rev.passed
    never = revise_until(t.screen.image, blank, lambda i, h, f: h, renderer, Viewport(360, 640), 0.99, 2)
    assert not never.passed and len(never.rounds) == 3


def test_a_world_model_backend_can_be_the_reviser(tmp_path, renderer):
    trees = android_fixture(tmp_path / "ep.tfrecord", renderer)
    t = next(iter(import_android(tmp_path / "ep.tfrecord")))
    blank = tree_to_html(trees[0], 360, 640)  # structure only, drawn on white and black

    class Painter(Backend):  # a backend that answers every query with a dark page, as a coder might
        name = "painter"

        def complete(self, queries):
            assert queries[0].action.type == "wait" and queries[0].screen.html == blank
            dark = blank.replace("#ffffff", "rgb(30,40,60)").replace(
                "background:#000", "background:rgb(30,40,60)"
            )
            return ["```html\n" + dark + "\n```"]

    rev = revise_until(t.screen.image, blank, backend_coder(Painter()), renderer, Viewport(360, 640), 0.99, 1)
    assert len(rev.rounds) == 2 and rev.rounds[1]["ssim"] > rev.rounds[0]["ssim"]


def test_sample_colours_never_paints_text_in_a_shade_of_its_background():
    from corpus.translate import contrast

    shot = Image.new("RGB", (100, 60), (30, 30, 30))
    shot.paste((34, 34, 34), (0, 30, 100, 60))  # a second shade of the background, commoner than text
    shot.paste((240, 240, 240), (10, 10, 20, 14))
    html = '<div data-root style="position:relative"><div style="position:absolute;left:0px;top:0px;width:100px;height:60px">x</div></div>'
    out = sample_colours(shot, html, {})
    bg, fg = (
        re.findall(r"background:rgb\((\d+),(\d+),(\d+)\);color:rgb\((\d+),(\d+),(\d+)\)", out)[0][:3],
        None,
    )
    fg = re.findall(r"color:rgb\((\d+),(\d+),(\d+)\)", out)[-1]
    assert contrast([int(v) for v in fg], [int(v) for v in bg]) >= 1.5
