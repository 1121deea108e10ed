"""The phone importers (corpus/phone.py): the app from the package, the licence from the source,
DroidBot events joined to their states."""

import io
import json

import tfrecord
from phone_fixtures import droidbot_folder, phone_screen

from corpus.android import write_episode
from corpus.store import load_corpus


def test_android_import_takes_the_app_from_the_package_and_the_licence_from_the_source(tmp_path, renderer):
    from corpus.phone import import_android_episodes

    forest, shot = phone_screen()
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


def test_import_droidbot_joins_events_to_states(tmp_path):
    from corpus.phone import read_droidbot

    droidbot_folder(tmp_path / "db")
    skipped, drop = [], __import__("collections").Counter()
    trs = list(read_droidbot(tmp_path / "db", skipped, drop))
    assert [t.action.type for t in trs] == ["tap", "back", "type"]
    assert (trs[0].action.x, trs[0].action.y) == (220.0, 125.0)  # the view's centre, in the 360-px screenshot
    assert trs[2].action.text == "eggs" and trs[0].app == "org.example.notes"
    assert drop == {"intent event": 1} and not skipped
