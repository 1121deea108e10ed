"""Reading AndroidControl episodes (corpus/android.py, corpus/a11y.py): real-schema forests parsed and
turned into transitions."""

import pytest
from phone_fixtures import android_fixture, real_a11y

from corpus.a11y import forest_class
from corpus.android import import_android, tree_to_html


def test_android_import_translates_trees(tmp_path, renderer):
    android_fixture(tmp_path / "ep.tfrecord", renderer)
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


def test_missing_android_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.tfrecord"):
        list(import_android(tmp_path / "nope.tfrecord"))
