"""Phone screens built here for the corpus tests: real-schema a11y forests (android_env's protos,
compiled by protoc), screenshots drawn with PIL, an AndroidControl episode and a DroidBot folder.

Not a test module: tests/test_corpus_*.py, test_parallel.py and test_phone_split.py import it.
"""

import functools
import io
import json

import tfrecord
from PIL import Image

from corpus.android import write_episode


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


def forest(nodes):
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


def android_fixture(path, renderer):
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
        trees.append(forest(nodes))
        im = Image.new("RGB", (360, 640), (30, 40, 60))
        d = ImageDraw.Draw(im)
        d.rectangle((0, 0, 359, 55), fill=(200, 60, 60))
        for (x0, y0, _x1, y1), text, _, _ in nodes:
            d.text((x0 + 16, (y0 + y1) // 2 - 12), text, font=font(20), fill=(240, 240, 240))
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


ROBOTO = "/usr/share/fonts/truetype/roboto/unhinted/RobotoTTF/Roboto-Regular.ttf"


def node(tree, uid, box, cls="TextView", text="", kids=(), **flags):
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


def font(size):
    from PIL import ImageFont

    try:
        return ImageFont.truetype(ROBOTO, size)
    except OSError:
        return ImageFont.load_default(size)


def phone_screen():
    """A real-schema forest (an app window with a text, an image, a checkbox and a password field,
    and a keyboard window above it) and a synthetic screenshot of it, drawn here with PIL."""
    from PIL import ImageDraw

    pb = real_a11y()
    f = pb.AndroidAccessibilityForest()
    app = f.windows.add(window_type=1, layer=1, id=1)
    app.bounds_in_screen.right, app.bounds_in_screen.bottom = 360, 640
    node(app.tree, 0, (0, 24, 360, 640), "FrameLayout", kids=[1, 2, 3, 4])
    node(app.tree, 1, (16, 40, 344, 80), "TextView", "Shopping list")
    node(app.tree, 2, (16, 96, 80, 160), "ImageView", content_description="Basket")
    node(
        app.tree,
        3,
        (96, 100, 344, 150),
        "CheckBox",
        "Buy milk",
        is_checkable=True,
        is_checked=True,
        is_clickable=True,
    )
    node(app.tree, 4, (16, 170, 344, 220), "EditText", "hunter2", is_editable=True, is_password=True)
    ime = f.windows.add(window_type=2, layer=2, id=2)
    ime.bounds_in_screen.top, ime.bounds_in_screen.right, ime.bounds_in_screen.bottom = 440, 360, 640
    keys = "qwertyuiop"
    node(ime.tree, 0, (0, 440, 360, 640), "FrameLayout", kids=list(range(1, 11)))
    for i, k in enumerate(keys, start=1):
        node(ime.tree, i, (36 * (i - 1), 450, 36 * i, 500), "Button", k)

    im = Image.new("RGB", (360, 640), (250, 250, 250))
    d = ImageDraw.Draw(im)
    d.rectangle((0, 0, 359, 23), fill=(20, 20, 20))  # the status bar: no node covers it
    d.text((20, 0), "9:41", font=font(16), fill=(255, 255, 255))
    d.text((16, 46), "Shopping list", font=font(24), fill=(30, 60, 200))
    for y in range(96, 160):  # a picture: a gradient with a stripe
        d.line((16, y, 79, y), fill=(200, 120 + y - 96, 40))
    d.rectangle((30, 120, 66, 128), fill=(20, 100, 20))
    d.rectangle((106, 113, 130, 137), fill=(0, 120, 110))  # the checkbox, ticked
    d.line((110, 125, 117, 132, 127, 117), fill=(255, 255, 255), width=3)
    d.text((146, 112), "Buy milk", font=font(20), fill=(40, 40, 40))
    d.text((20, 184), "•••••••", font=font(20), fill=(40, 40, 40))
    d.line((16, 218, 343, 218), fill=(0, 120, 110), width=2)
    d.rectangle((0, 440, 359, 639), fill=(210, 214, 220))  # the keyboard
    for i, k in enumerate(keys):
        d.rectangle((36 * i + 2, 452, 36 * i + 33, 497), fill=(255, 255, 255))
        d.text((36 * i + 12, 462), k, font=font(20), fill=(10, 10, 10))
    return f.SerializeToString(), im


def droidbot_folder(root):
    """A small DroidBot output folder: two states, three events (touch, back, an intent)."""
    forest, shot = phone_screen()
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
