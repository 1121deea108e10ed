"""Recording real apps live, storing them, and importing AndroidControl episodes."""

import functools
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
import tfrecord
from PIL import Image
from typer.testing import CliRunner

from corpus.a11y import forest_class
from corpus.android import import_android, tree_to_html, write_episode
from corpus.apps import local_file_for, miniwob_app, phone_app
from corpus.explorer import explore, solver_policy
from corpus.recorder import Recorder
from corpus.revise import backend_coder, revise_until, sample_colours
from corpus.store import assign_splits, load_corpus, save_corpus
from render import Viewport
from render.metrics import ssim
from wmcli import app as cli
from worldmodel import Backend
from worldmodel.types import Action

# A stored snapshot is rendered by the same Chromium at the same viewport as the screenshot it
# was taken with, so it should match almost exactly (measured: 0.99-1.0). 0.95 leaves room for
# anti-aliasing and caret differences; a snapshot missing its styles scores far lower (<0.8).
SNAPSHOT_SSIM = 0.95


@pytest.fixture(scope="module")
def recorder():
    with Recorder() as r:
        yield r


def test_miniwob_task_recorded_live_and_solved(recorder, renderer):
    tr = recorder.record_trajectory(
        miniwob_app("enter-text"), solver_policy, max_steps=5, seed=11, episode_id="e"
    )
    assert [t.action.type for t in tr] == ["type", "tap"]
    assert tr[0].goal.startswith("Enter") and tr[-1].meta["reward"] > 0.5
    typed = tr[0].action.text
    assert f'value="{typed}"' in tr[0].next_screen.html  # form state frozen into the snapshot
    assert "<script" not in tr[0].next_screen.html.lower()
    for t in tr:
        res = renderer.render(t.next_screen.html, t.next_screen.viewport())
        assert ssim(res.image, t.next_screen.array) > SNAPSHOT_SSIM


def test_a_task_whose_widget_scrolls_on_start_is_recorded_in_view(recorder):
    # click-dialog's dialog focuses its close button as it opens, which scrolls a window the
    # task's size sideways: the episode starts with the window home, the query and dialog shown
    seen = {}

    def look(ctx):
        seen["screen"], seen["scroll"] = ctx.screen, ctx.page.evaluate("[scrollX, scrollY]")

    recorder.record_trajectory(miniwob_app("click-dialog"), look, max_steps=1, seed=100)
    assert seen["scroll"] == [0, 0]
    html = seen["screen"].html
    assert "data-wm-scroll" not in html and "ui-dialog-titlebar-close" in html
    top = seen["screen"].array[:40]
    assert (top[..., 2] < 80).mean() > 0.5  # the yellow query banner along the top


def test_phone_app_exploration_changes_screens(recorder, renderer):
    tr = recorder.record_trajectory(phone_app("contacts", seed=4), explore, max_steps=6, seed=4)
    assert len(tr) == 6
    assert tr[0].screen.size == (360, 640)
    assert any(not np.array_equal(t.screen.array, t.next_screen.array) for t in tr)
    for t in tr[:3]:
        res = renderer.render(t.next_screen.html, t.next_screen.viewport())
        assert ssim(res.image, t.next_screen.array) > SNAPSHOT_SSIM


def test_pseudo_elements_survive_the_snapshot(recorder, renderer):
    # the Settings toggles draw their knobs with ::after; a snapshot has no stylesheet to do that
    tr = recorder.record_trajectory(
        phone_app("settings", seed=1), lambda c: Action("wait") if c.step == 0 else None
    )
    s = tr[0].next_screen
    img = renderer.render(s.html, s.viewport()).image
    assert np.abs(img.astype(int) - s.array.astype(int)).max() < 40 and ssim(img, s.array) > 0.999


def test_back_and_open_app_drive_the_phone(recorder):
    plan = [Action("tap", x=180, y=87), Action("back"), Action("open_app", app="Settings")]
    tr = recorder.record_trajectory(
        phone_app("contacts", seed=2), lambda c: plan[c.step] if c.step < 3 else None
    )
    assert "Contacts" in tr[1].next_screen.html and "Dark theme" in tr[2].next_screen.html
    assert "+1 555" in tr[0].next_screen.html  # the tap opened a contact


def test_app_files_cannot_escape_their_folder():
    assert local_file_for("http://wm.local/phone/index.html") is not None
    assert local_file_for("http://wm.local/phone/../../../etc/passwd") is None
    assert local_file_for("http://example.com/phone/index.html") is None


def test_store_round_trip_splits_by_app(recorder, tmp_path):
    tr = recorder.record_trajectory(miniwob_app("click-button"), solver_policy, 3, seed=1)
    tr += recorder.record_trajectory(miniwob_app("focus-text"), solver_policy, 3, seed=1)
    tr += recorder.record_trajectory(phone_app("notes", 1), explore, 3, seed=1)
    splits = {"miniwob-click-button": "train", "miniwob-focus-text": "test", "phone-notes": "train"}
    save_corpus(tr, tmp_path / "c", splits=splits)
    (tmp_path / "c").rename(tmp_path / "moved")  # images must be embedded, not paths
    dd = load_corpus(tmp_path / "moved")
    assert set(dd["test"]["app"]) == {"miniwob-focus-text"}
    assert "miniwob-focus-text" not in set(dd["train"]["app"])
    row = dd["train"][0]
    assert row["screen"].size == (160, 210) and row["action"]["type"] == "tap"  # a typed struct column


def test_failed_save_keeps_the_old_corpus(recorder, tmp_path):
    tr = recorder.record_trajectory(miniwob_app("click-button"), solver_policy, 2, seed=3)
    save_corpus(tr, tmp_path / "c", splits={"miniwob-click-button": "train"})
    with pytest.raises(ValueError, match="no split given"):
        save_corpus(tr, tmp_path / "c", splits={"other": "train"})
    assert len(load_corpus(tmp_path / "c")["train"]) == len(tr)


def test_split_assignment_is_by_whole_app():
    apps = [f"app{i}" for i in range(20)]
    s = assign_splits(apps, test_frac=0.2, val_frac=0.1, pinned={"app0": "train"})
    assert s["app0"] == "train"
    assert sum(v == "test" for v in s.values()) == 4 and sum(v == "validation" for v in s.values()) == 2
    with pytest.raises(ValueError, match="split 'dev'"):
        assign_splits(apps, pinned={"app1": "dev"})


@functools.lru_cache(maxsize=1)
def real_a11y():
    """android_env's a11y protos compiled by protoc into Python, independent of the importer's loader."""
    import importlib
    import subprocess
    import sys
    import tempfile

    from corpus.a11y import PROTO_DIR

    out = tempfile.mkdtemp(prefix="a11y_pb2_")
    files = [str(p.relative_to(PROTO_DIR)) for p in (PROTO_DIR / "android_env/proto/a11y").glob("*.proto")]
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_DIR}", f"--python_out={out}", *files],
        check=True,
    )
    sys.path.insert(0, out)
    return importlib.import_module("android_env.proto.a11y.android_accessibility_forest_pb2")


def _forest(nodes):
    pb = real_a11y()
    f = pb.AndroidAccessibilityForest()
    w = f.windows.add(window_type=1, layer=1)  # TYPE_APPLICATION
    root = w.tree.nodes.add(
        unique_id=0,
        class_name="android.widget.FrameLayout",
        is_visible_to_user=True,
        package_name="org.example",
    )
    root.bounds_in_screen.right, root.bounds_in_screen.bottom = 360, 640
    for i, (box, text, cls, click) in enumerate(nodes, start=1):
        root.child_ids.append(i)
        n = w.tree.nodes.add(
            unique_id=i,
            text=text,
            class_name="android.widget." + cls,
            is_clickable=click,
            is_visible_to_user=True,
            depth=1,
            package_name="org.example",
        )
        (
            n.bounds_in_screen.left,
            n.bounds_in_screen.top,
            n.bounds_in_screen.right,
            n.bounds_in_screen.bottom,
        ) = box
    return f.SerializeToString()


def _android_fixture(path, renderer):
    """A two-step AndroidControl episode; screenshots are painted here (a dark app with a red header)."""
    from PIL import ImageDraw

    screens = [
        [
            ((0, 0, 360, 56), "Inbox", "TextView", False),
            ((0, 56, 360, 120), "Lunch at noon?", "TextView", True),
        ],
        [
            ((0, 0, 360, 56), "Message", "TextView", False),
            ((16, 80, 344, 140), "Lunch at noon? Sure", "TextView", False),
        ],
        [((0, 0, 360, 56), "Inbox", "TextView", False)],
    ]
    trees, shots = [], []
    for nodes in screens:
        trees.append(_forest(nodes))
        im = Image.new("RGB", (360, 640), (30, 40, 60))
        d = ImageDraw.Draw(im)
        d.rectangle((0, 0, 359, 55), fill=(200, 60, 60))
        for (x0, y0, _x1, y1), text, _, _ in nodes:
            d.text((x0 + 16, (y0 + y1) // 2 - 12), text, font=_font(20), fill=(240, 240, 240))
        buf = io.BytesIO()
        im.save(buf, "PNG")
        shots.append(buf.getvalue())
    w = tfrecord.TFRecordWriter(str(path))
    write_episode(
        w,
        42,
        "Read the lunch message",
        shots,
        trees,
        [(360, 640)] * 3,
        [{"action_type": "click", "x": 180, "y": 88}, {"action_type": "navigate_back"}],
        ["open the message", "go back"],
    )
    w.close()
    return trees


def test_android_import_translates_trees(tmp_path, renderer):
    _android_fixture(tmp_path / "ep.tfrecord", renderer)
    tr = list(import_android(tmp_path / "ep.tfrecord"))
    assert [t.action.type for t in tr] == ["tap", "back"]
    assert (tr[0].action.x, tr[0].action.y) == (180, 88)
    assert tr[0].goal == "Read the lunch message" and tr[0].episode_id == "42"
    assert "Lunch at noon? Sure" in tr[0].next_screen.html
    assert tr[0].next_screen is tr[1].screen


def test_a_real_schema_forest_with_child_ids_spans_and_non_ascii_text_parses():
    pb = real_a11y()
    f = pb.AndroidAccessibilityForest()
    app = f.windows.add(window_type=1, layer=2, id=7)
    system = f.windows.add(window_type=3, layer=5)  # a notification: not the app
    ime = f.windows.add(window_type=2, layer=3)  # the keyboard, above the app
    nodes = [
        # (id, children, text, bounds)
        (0, [2, 1], "", (0, 0, 360, 640)),
        (1, [], "Second café ☕", (0, 100, 360, 150)),
        (2, [], "First 日本語", (0, 50, 360, 100)),
    ]
    for uid, kids, text, (x0, y0, x1, y1) in nodes:
        n = app.tree.nodes.add(
            unique_id=uid, text=text, is_visible_to_user=True, class_name="android.widget.TextView"
        )
        n.child_ids.extend(kids)
        (
            n.bounds_in_screen.left,
            n.bounds_in_screen.top,
            n.bounds_in_screen.right,
            n.bounds_in_screen.bottom,
        ) = x0, y0, x1, y1
        n.actions.add(id=16, label="click")
        n.clickable_spans.add(text="lien é", url="https://example.org/é", source=1, start=0, node_id=uid)
        n.tooltip_text, n.drawing_order, n.labeled_by_id = "astuce ✓", uid + 1, 0
    s = system.tree.nodes.add(unique_id=0, text="Battery low", is_visible_to_user=True)
    s.bounds_in_screen.right, s.bounds_in_screen.bottom = 360, 40
    ime.bounds_in_screen.top, ime.bounds_in_screen.right, ime.bounds_in_screen.bottom = 400, 360, 640
    k = ime.tree.nodes.add(unique_id=0, text="q", is_visible_to_user=True)
    k.bounds_in_screen.left, k.bounds_in_screen.top, k.bounds_in_screen.right, k.bounds_in_screen.bottom = (
        0,
        420,
        36,
        470,
    )
    data = f.SerializeToString()

    parsed = forest_class().FromString(data)
    n1 = [n for n in parsed.windows[0].tree.nodes if n.unique_id == 1][0]
    assert list(parsed.windows[0].tree.nodes[0].child_ids) == [2, 1]
    assert n1.clickable_spans[0].text == "lien é" and n1.tooltip_text == "astuce ✓" and n1.actions[0].id == 16
    html = tree_to_html(data, 360, 640)
    assert html.index("First 日本語") < html.index("Second café ☕")  # child_ids order from root 0
    # every window in z-order: the app (layer 2), the keyboard (3), the system's notification (5)
    assert html.index('data-window="app"') < html.index('aria-label="keyboard"') < html.index("Battery low")
    assert 'aria-label="q"' in html  # a key the (blank) screenshot shows no ink for is named, not drawn


def test_visual_feedback_revision_raises_fidelity(tmp_path, renderer):
    trees = _android_fixture(tmp_path / "ep.tfrecord", renderer)
    t = next(iter(import_android(tmp_path / "ep.tfrecord")))
    blank = tree_to_html(trees[0], 360, 640)  # structure only: no screenshot to colour it from
    rev = revise_until(t.screen.image, blank, sample_colours, renderer, Viewport(360, 640), 0.9, 2)
    assert rev.rounds[0]["ssim"] < 0.9 <= rev.rounds[-1]["ssim"] and rev.passed
    never = revise_until(t.screen.image, blank, lambda i, h, f: h, renderer, Viewport(360, 640), 0.99, 2)
    assert not never.passed and len(never.rounds) == 3


def test_a_world_model_backend_can_be_the_reviser(tmp_path, renderer):
    trees = _android_fixture(tmp_path / "ep.tfrecord", renderer)
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


def test_import_android_cli_reports_drops(tmp_path, renderer):
    _android_fixture(tmp_path / "ep.tfrecord", renderer)

    def run(out, *flags):
        args = ["corpus", "import-android", str(tmp_path / "ep.tfrecord"), "-o", str(tmp_path / out), *flags]
        return CliRunner().invoke(cli, args)

    res = run("c", "--floor", "0.9")
    assert res.exit_code == 0, res.output
    assert "kept 2 of 2 transitions, dropped 0" in res.output
    rows = [r for s in load_corpus(tmp_path / "c").values() for r in s]
    assert len(rows) == 2 and all(json.loads(r["meta"])["revision"][0]["round"] == 0 for r in rows)
    assert {r["app"] for r in rows} == {"org.example"}  # the episode's package, not "android"
    low = run("d", "--threshold", "0.9999", "--max-off", "0", "--rounds", "0").output
    assert "kept 0 of 2 transitions, dropped 2" in low and "below the blurred-SSIM floor" in low


def test_missing_android_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.tfrecord"):
        list(import_android(tmp_path / "nope.tfrecord"))


def test_stats_on_bundled_corpus(tmp_path):
    res = CliRunner().invoke(cli, ["corpus", "stats", "--worst", "2", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output.strip().splitlines()[-1])
    assert report["train"]["transitions"] > 100 and report["test"]["transitions"] > 10
    assert set(report["train"]["apps"]).isdisjoint(report["test"]["apps"])
    cap = report["train"]["capture"]
    assert set(cap) == set(report["train"]["apps"])
    bad = {a: c for a, c in cap.items() if not (c["blur_ssim_mean"] > 0.95 and c["pixels_off_mean"] < 0.02)}
    assert not bad, bad
    worst = [line.split("worst: ")[1] for line in res.output.splitlines() if "worst: " in line]
    assert len(worst) == 2 and all(Image.open(p).size[0] > 300 for p in worst)


def _uncompacted(html: str) -> str:
    """A bundled (already compacted) screen with what compaction removes put back: an off-screen
    positioned panel, a data-* attribute and a state class no rule reads, stylesheet spaces."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    screen = soup.find(id="screen") or soup.body
    screen["data-junk"] = "1"
    screen["class"] = [*screen.get("class", []), "wm-focus-within"]
    panel = soup.new_tag("div", style="position:absolute;left:-900px;top:0;width:80px;height:80px")
    panel.string = "off to the side"
    soup.body.append(panel)
    if soup.style is not None and soup.style.string:
        soup.style.string = soup.style.string.replace("{", " {  ").replace(";", " ;  ")
    return str(soup)


def test_compact_shortens_a_corpus_and_keeps_every_render(tmp_path, renderer):
    import dataclasses

    from corpus.store import iter_transitions

    dd = load_corpus()
    src = [t for t in iter_transitions(dd["train"]) if t.app == "miniwob-click-button"][:3]
    src += [t for t in iter_transitions(dd["test"]) if t.app.startswith("phone-")][:2]
    src = [
        dataclasses.replace(
            t, next_screen=dataclasses.replace(t.next_screen, html=_uncompacted(t.next_screen.html))
        )
        for t in src
    ]
    splits = {t.app: ("test" if t.app.startswith("phone-") else "train") for t in src}
    save_corpus(src, tmp_path / "big", splits)
    res = CliRunner().invoke(cli, ["corpus", "compact", str(tmp_path / "big"), "-o", str(tmp_path / "small")])
    assert res.exit_code == 0, res.output
    small = load_corpus(tmp_path / "small")
    got = {(t.app, t.step, t.episode_id): t for sp in small for t in iter_transitions(small[sp])}
    for t in src:
        c = got[(t.app, t.step, t.episode_id)].next_screen.html
        assert len(c) < len(t.next_screen.html)
        assert "data-junk" not in c and "wm-focus-within" not in c and "off to the side" not in c
        a, b = renderer.render_many([(h, t.next_screen.viewport()) for h in (t.next_screen.html, c)])
        assert np.array_equal(a.image, b.image)


def test_merge_joins_corpora_keeping_each_apps_split(tmp_path):
    from corpus.store import iter_transitions

    dd = load_corpus()
    a = [t for t in iter_transitions(dd["train"]) if t.app == "miniwob-click-button"][:2]
    b = [t for t in iter_transitions(dd["test"]) if t.app == "miniwob-click-link"][:2]
    save_corpus(a, tmp_path / "a", {"miniwob-click-button": "train"})
    save_corpus(b, tmp_path / "b", {"miniwob-click-link": "test"})
    save_corpus(b, tmp_path / "c", {"miniwob-click-link": "train"})

    def merge(*args):
        return CliRunner().invoke(cli, ["corpus", "merge", *map(str, args)])

    res = merge(tmp_path / "a", tmp_path / "b", "-o", tmp_path / "ab")
    assert res.exit_code == 0, res.output
    ab = load_corpus(tmp_path / "ab")
    assert set(ab["train"]["app"]) == {"miniwob-click-button"} and len(ab["test"]) == len(b)
    # an app both corpora hold in different splits is named, and --split settles it
    res = merge(tmp_path / "b", tmp_path / "c", "-o", tmp_path / "bc")
    assert res.exit_code != 0 and "miniwob-click-link is in test" in res.output
    assert not (tmp_path / "bc").exists()
    res = merge(
        tmp_path / "b", tmp_path / "c", "-o", tmp_path / "bc", "--split", "miniwob-click-link=validation"
    )
    assert res.exit_code == 0, res.output
    assert list(load_corpus(tmp_path / "bc")) == ["validation"]
    assert "not APP=SPLIT" in merge(tmp_path / "a", "-o", tmp_path / "x", "--split", "nope").output


def test_every_bundled_app_is_pinned_to_its_split_and_no_reserved_page_is_recorded():
    from corpus.build import BUNDLED_MINIWOB, DEFAULT_PINNED
    from corpus.store import app_splits

    dd = load_corpus()
    got = app_splits(dd)  # an app's held-out id-test episodes do not move it
    # a fresh `wm corpus build` puts every app where the bundle has it
    assert {a: DEFAULT_PINNED.get(a) for a in got} == got
    tasks = BUNDLED_MINIWOB
    assert len(set(tasks)) == len(tasks)
    assert not [t for t in tasks if "flight" in t]  # reserved for independent evaluation


# ---- real phone screens: translation, revision, DroidBot (issue 31) -----------------------------

ROBOTO = "/usr/share/fonts/truetype/roboto/unhinted/RobotoTTF/Roboto-Regular.ttf"


def _node(tree, uid, box, cls="TextView", text="", kids=(), **flags):
    n = tree.nodes.add(
        unique_id=uid,
        text=text,
        class_name="android.widget." + cls,
        is_visible_to_user=True,
        package_name="org.example.notes",
        **flags,
    )
    n.child_ids.extend(kids)
    b = n.bounds_in_screen
    b.left, b.top, b.right, b.bottom = box
    return n


def _font(size):
    from PIL import ImageFont

    try:
        return ImageFont.truetype(ROBOTO, size)
    except OSError:
        return ImageFont.load_default(size)


def _phone_screen():
    """A real-schema forest (an app window with a text, an image, a checkbox and a password field,
    and a keyboard window above it) and a synthetic screenshot of it, drawn here with PIL."""
    from PIL import ImageDraw

    pb = real_a11y()
    f = pb.AndroidAccessibilityForest()
    app = f.windows.add(window_type=1, layer=1, id=1)
    app.bounds_in_screen.right, app.bounds_in_screen.bottom = 360, 640
    _node(app.tree, 0, (0, 24, 360, 640), "FrameLayout", kids=[1, 2, 3, 4])
    _node(app.tree, 1, (16, 40, 344, 80), "TextView", "Shopping list")
    _node(app.tree, 2, (16, 96, 80, 160), "ImageView", content_description="Basket")
    _node(
        app.tree,
        3,
        (96, 100, 344, 150),
        "CheckBox",
        "Buy milk",
        is_checkable=True,
        is_checked=True,
        is_clickable=True,
    )
    _node(app.tree, 4, (16, 170, 344, 220), "EditText", "hunter2", is_editable=True, is_password=True)
    ime = f.windows.add(window_type=2, layer=2, id=2)
    ime.bounds_in_screen.top, ime.bounds_in_screen.right, ime.bounds_in_screen.bottom = 440, 360, 640
    keys = "qwertyuiop"
    _node(ime.tree, 0, (0, 440, 360, 640), "FrameLayout", kids=list(range(1, 11)))
    for i, k in enumerate(keys, start=1):
        _node(ime.tree, i, (36 * (i - 1), 450, 36 * i, 500), "Button", k)

    im = Image.new("RGB", (360, 640), (250, 250, 250))
    d = ImageDraw.Draw(im)
    d.rectangle((0, 0, 359, 23), fill=(20, 20, 20))  # the status bar: no node covers it
    d.text((20, 0), "9:41", font=_font(16), fill=(255, 255, 255))
    d.text((16, 46), "Shopping list", font=_font(24), fill=(30, 60, 200))
    for y in range(96, 160):  # a picture: a gradient with a stripe
        d.line((16, y, 79, y), fill=(200, 120 + y - 96, 40))
    d.rectangle((30, 120, 66, 128), fill=(20, 100, 20))
    d.rectangle((106, 113, 130, 137), fill=(0, 120, 110))  # the checkbox, ticked
    d.line((110, 125, 117, 132, 127, 117), fill=(255, 255, 255), width=3)
    d.text((146, 112), "Buy milk", font=_font(20), fill=(40, 40, 40))
    d.text((20, 184), "•••••••", font=_font(20), fill=(40, 40, 40))
    d.line((16, 218, 343, 218), fill=(0, 120, 110), width=2)
    d.rectangle((0, 440, 359, 639), fill=(210, 214, 220))  # the keyboard
    for i, k in enumerate(keys):
        d.rectangle((36 * i + 2, 452, 36 * i + 33, 497), fill=(255, 255, 255))
        d.text((36 * i + 12, 462), k, font=_font(20), fill=(10, 10, 10))
    return f.SerializeToString(), im


def test_android_translation_of_a_real_schema_forest_looks_like_its_screenshot(renderer):
    from corpus.revise import revise_drafts
    from corpus.translate import translate
    from render.assets import STORE, names_in
    from render.metrics import blur_ssim, pixels_off

    forest, shot = _phone_screen()
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
    _node(w.tree, 0, (0, 0, 1080, 1920), "FrameLayout", kids=[1, 2, 3, 4, 5, 6])
    _node(w.tree, 1, (0, 200, 1080, 600), "EditText", "", is_editable=True, hint_text="Search")
    _node(w.tree, 2, (0, 600, 1080, 700), "Switch", "Wi-Fi", is_checkable=True, is_checked=True)
    _node(w.tree, 3, (0, 700, 1080, 800), "RadioButton", "Small", is_checkable=True)
    _node(
        w.tree, 4, (0, 800, 1080, 900), "ImageButton", is_checkable=True, content_description="Show password"
    )
    lab = _node(w.tree, 5, (0, 900, 1080, 1000), "LinearLayout", "Dark theme", kids=[7], is_clickable=True)
    lab.content_description = ""
    _node(w.tree, 7, (40, 920, 600, 980), "TextView", "Dark theme")
    _node(w.tree, 6, (0, 1000, 1080, 1300), "TextView", "one two three four five six seven eight nine ten")
    # a recorded 1080-px layout for a 540-px screenshot: bounds rescaled, and said
    shot = Image.new("RGB", (540, 960), (24, 24, 24))
    from PIL import ImageDraw

    dr = ImageDraw.Draw(shot)
    dr.multiline_text(
        (10, 505),
        "one two three four\nfive six seven eight\nnine ten",
        font=_font(24),
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


def test_android_import_takes_the_app_from_the_package_and_the_licence_from_the_source(tmp_path, renderer):
    from corpus.phone import import_android_episodes

    forest, shot = _phone_screen()
    buf = io.BytesIO()
    shot.save(buf, "PNG")
    w = tfrecord.TFRecordWriter(str(tmp_path / "ep.tfrecord"))
    write_episode(
        w,
        7,
        "tick milk",
        [buf.getvalue()] * 2,
        [forest] * 2,
        [(360, 640)] * 2,
        [{"action_type": "click", "x": 200, "y": 125}],
        ["tick it"],
    )
    w.close()
    rep = import_android_episodes(tmp_path / "ep.tfrecord", tmp_path / "c", renderer=renderer, progress=False)
    kept = [r for s in load_corpus(tmp_path / "c").values() for r in s]
    assert rep.kept_count == 1 and [r["app"] for r in kept] == ["org.example.notes"], rep.summary()
    assert "translation_notes" not in json.loads(kept[0]["meta"])  # the recorded size is the screenshot's
    card = (tmp_path / "c" / "README.md").read_text()
    assert "AndroidControl" not in card and "unknown" in card
    (tmp_path / "LICENSE").write_text("CC-BY-4.0\n")
    rep = import_android_episodes(tmp_path / "ep.tfrecord", tmp_path / "d", renderer=renderer, progress=False)
    assert "CC-BY-4.0" in (tmp_path / "d" / "README.md").read_text()
    # the screens' crops travel with the corpus and are found again when it is loaded
    names = list((tmp_path / "d" / "assets").glob("*.png"))
    assert names
    from render.assets import STORE

    h = names[0].stem
    STORE._mem.pop(h, None)
    rows = load_corpus(tmp_path / "d")
    assert STORE.get(h) is not None and f"asset:{h}" in "".join(
        r["screen_html"] for s in rows.values() for r in s
    )


def test_android_sim_result_names_assets_again(renderer):
    from corpus.translate import translate

    forest, shot = _phone_screen()
    html = translate(forest, shot).html()
    got = renderer.interact(html, Viewport(360, 640), [("click", 118, 125)])
    assert "base64" not in got.html and "asset:" in got.html


def _droidbot_folder(root):
    """A small DroidBot output folder: two states, three events (touch, back, an intent)."""
    forest, shot = _phone_screen()
    (root / "events").mkdir(parents=True)
    (root / "states").mkdir()
    views = [
        {
            "temp_id": 0,
            "parent": -1,
            "children": [1, 2],
            "bounds": [[0, 0], [720, 1280]],
            "class": "android.widget.FrameLayout",
            "package": "org.example.notes",
            "visible": True,
        },
        {
            "temp_id": 1,
            "parent": 0,
            "children": [],
            "bounds": [[32, 80], [688, 160]],
            "class": "android.widget.TextView",
            "text": "Shopping list",
            "package": "org.example.notes",
            "visible": True,
        },
        {
            "temp_id": 2,
            "parent": 0,
            "children": [],
            "bounds": [[192, 200], [688, 300]],
            "class": "android.widget.CheckBox",
            "text": "Buy milk",
            "checkable": True,
            "checked": True,
            "clickable": True,
            "package": "org.example.notes",
            "visible": True,
        },
    ]
    for tag, key in (("2024-01-01_000001", "aaa"), ("2024-01-01_000002", "bbb")):
        st = {
            "tag": tag,
            "state_str": key,
            "foreground_activity": "org.example.notes/.Main",
            "width": 1280,
            "height": 720,
            "views": views,
        }
        (root / "states" / f"state_{tag}.json").write_text(json.dumps(st))
        shot.save(root / "states" / f"screen_{tag}.jpg", quality=95)
    events = [
        {"event_type": "touch", "view": views[2]},
        {"event_type": "key", "name": "BACK"},
        {"event_type": "intent", "intent": "am start org.example.notes"},
        {"event_type": "set_text", "view": views[1], "text": "eggs"},
    ]
    for i, ev in enumerate(events):
        rec = {
            "tag": f"e{i}",
            "event": ev,
            "start_state": "aaa",
            "stop_state": "bbb",
            "event_str": ev["event_type"],
        }
        (root / "events" / f"event_2024-01-01_00001{i}.json").write_text(json.dumps(rec))
    (root / "utg.js").write_text("var utg = {}")


def test_import_droidbot_joins_events_to_states(tmp_path):
    from corpus.phone import read_droidbot

    _droidbot_folder(tmp_path / "db")
    skipped, drop = [], __import__("collections").Counter()
    trs = list(read_droidbot(tmp_path / "db", skipped, drop))
    assert [t.action.type for t in trs] == ["tap", "back", "type"]
    assert (trs[0].action.x, trs[0].action.y) == (220.0, 125.0)  # the view's centre, in the 360-px screenshot
    assert trs[2].action.text == "eggs" and trs[0].app == "org.example.notes"
    assert drop == {"intent event": 1} and not skipped


def test_import_droidbot_cli_writes_a_corpus_with_a_card(tmp_path):
    _droidbot_folder(tmp_path / "db")
    res = CliRunner().invoke(
        cli,
        ["corpus", "import-droidbot", str(tmp_path / "db"), "-o", str(tmp_path / "c"), "--licence", "MIT"],
    )
    assert res.exit_code == 0, res.output
    assert "kept 3 of 4 transitions" in res.output and "1 intent event (not usable)" in res.output
    card = (tmp_path / "c" / "README.md").read_text()
    assert "| droidbot | MIT |" in card
    bad = CliRunner().invoke(cli, ["corpus", "import-droidbot", str(tmp_path), "-o", str(tmp_path / "e")])
    assert bad.exit_code == 2 and "not a DroidBot output folder" in re.sub(r"[\s│]+", " ", bad.output)


def test_install_script_installs_cjk_emoji_and_android_fonts():
    text = (Path(__file__).parents[1] / "scripts" / "install.sh").read_text()
    for pkg in ("fonts-noto-cjk", "fonts-noto-color-emoji", "fonts-roboto-unhinted"):
        assert pkg in text
