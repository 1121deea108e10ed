"""Recording real apps live, storing them, and importing AndroidControl episodes."""

import functools
import json

import numpy as np
import pytest
import tfrecord
from PIL import Image
from typer.testing import CliRunner

from corpus.android import forest_class, import_android, tree_to_html, write_episode
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

    from corpus.android import PROTO_DIR

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
    root = w.tree.nodes.add(unique_id=0, class_name="android.widget.FrameLayout", is_visible_to_user=True)
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
        )
        (
            n.bounds_in_screen.left,
            n.bounds_in_screen.top,
            n.bounds_in_screen.right,
            n.bounds_in_screen.bottom,
        ) = box
    return f.SerializeToString()


def _android_fixture(path, renderer):
    """A two-step AndroidControl episode; screenshots are coloured renders the tree does not know about."""
    trees = [
        _forest(
            [
                ((0, 0, 360, 56), "Inbox", "TextView", False),
                ((0, 56, 360, 120), "Lunch at noon?", "TextView", True),
            ]
        ),
        _forest(
            [
                ((0, 0, 360, 56), "Message", "TextView", False),
                ((16, 80, 344, 140), "Lunch at noon? Sure", "TextView", False),
            ]
        ),
        _forest([((0, 0, 360, 56), "Inbox", "TextView", False)]),
    ]
    shots = []
    for t in trees:
        html = tree_to_html(t, 360, 640).replace("background:#fff", "background:rgb(30,40,60)")
        html = html.replace(
            "top:0px;width:360px;height:56px;", "top:0px;width:360px;height:56px;background:rgb(200,60,60);"
        )
        shots.append(renderer.render(html, Viewport(360, 640)).png)
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
    assert "Battery low" not in html  # system windows are not the app
    assert 'aria-label="keyboard"' in html and ">q</div>" in html  # the IME, drawn as a keyboard


def test_visual_feedback_revision_raises_fidelity(tmp_path, renderer):
    _android_fixture(tmp_path / "ep.tfrecord", renderer)
    t = next(iter(import_android(tmp_path / "ep.tfrecord")))
    rev = revise_until(t.screen.image, t.screen.html, sample_colours, renderer, Viewport(360, 640), 0.9, 2)
    assert rev.rounds[0]["ssim"] < 0.9 <= rev.rounds[-1]["ssim"] and rev.passed
    never = revise_until(
        t.screen.image, t.screen.html, lambda i, h, f: h, renderer, Viewport(360, 640), 0.99, 2
    )
    assert not never.passed and len(never.rounds) == 3


def test_a_world_model_backend_can_be_the_reviser(tmp_path, renderer):
    _android_fixture(tmp_path / "ep.tfrecord", renderer)
    t = next(iter(import_android(tmp_path / "ep.tfrecord")))

    class Painter(Backend):  # a backend that answers every query with a dark page, as a coder might
        name = "painter"

        def complete(self, queries):
            assert queries[0].action.type == "wait" and queries[0].screen.html == t.screen.html
            return [
                "```html\n" + t.screen.html.replace("background:#fff", "background:rgb(30,40,60)") + "\n```"
            ]

    rev = revise_until(
        t.screen.image, t.screen.html, backend_coder(Painter()), renderer, Viewport(360, 640), 0.8, 1
    )
    assert rev.rounds[1]["ssim"] > rev.rounds[0]["ssim"]


def test_import_android_cli_reports_drops(tmp_path, renderer):
    _android_fixture(tmp_path / "ep.tfrecord", renderer)

    def run(out, *flags):
        args = ["corpus", "import-android", str(tmp_path / "ep.tfrecord"), "-o", str(tmp_path / out), *flags]
        return CliRunner().invoke(cli, args)

    res = run("c", "--threshold", "0.9")
    assert res.exit_code == 0, res.output
    assert "kept 2 transitions, dropped 0" in res.output
    rows = [r for s in load_corpus(tmp_path / "c").values() for r in s]
    assert len(rows) == 2 and all(json.loads(r["meta"])["revision"][0]["round"] == 0 for r in rows)
    assert "kept 0 transitions, dropped 2" in run("d", "--threshold", "0.999", "--rounds", "0").output


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
