"""Bad input as a careless or hostile user gives it: one `error:` line and the right exit code.

Also: a corpus save killed at any point still leaves a whole corpus at the path.
"""

import os
import struct
import subprocess
import sys
import textwrap
import zlib

import pytest
from PIL import Image

from corpus.store import clean_leftovers, load_corpus, save_corpus
from wmcli import main
from worldmodel import Action, CorpusError, Screen, Transition


def _png_header_only(path, w, h):
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))

    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")
    )


def _transitions(n=3, app="demo", colour=(255, 255, 255)):
    img = Image.new("RGB", (64, 48), colour)
    return [
        Transition(
            Screen(img, html=f"<p>{i}</p>"),
            Action("tap", x=3, y=4),
            Screen(img, html=f"<p>{i + 1}</p>"),
            goal="g",
            app=app,
            episode_id="e",
            step=i,
        )
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    (d / "ok.html").write_text("<p>ok</p>")
    (d / "bin.html").write_bytes(bytes(range(256)))
    (d / "empty.html").write_text("")
    Image.new("RGB", (360, 640), "white").save(d / "s.png")
    (d / "corrupt.png").write_bytes(b"\x89PNG\r\n\x1a\n garbage")
    (d / "text.png").write_text("not an image")
    _png_header_only(d / "huge.png", 20000, 20000)
    save_corpus(_transitions(), d / "corpus", splits={"demo": "test"})
    save_corpus(_transitions(), d / "broken", splits={"demo": "test"})
    arrow = next((d / "broken").resolve().rglob("*.arrow"))
    os.truncate(arrow, arrow.stat().st_size // 2)
    return d


TAP = '{"type":"wait"}'
CASES = [
    # (argv, exit code, words the one error line must contain)
    ("render ok.html -o o.png --width 0", 2, ["--width", "16"]),
    ("render ok.html -o o.png --height 99999", 2, ["--height"]),
    ("render ok.html -o o.png --scale 0", 2, ["--scale", "0.25"]),
    ("render bin.html -o o.png", 2, ["binary"]),
    ("render empty.html -o o.png", 2, ["empty"]),
    ("render nope.html -o o.png", 2, ["nope.html", "does not exist"]),
    (f"predict --screen corrupt.png --action {TAP} -o n.html", 2, ["--screen", "corrupt.png"]),
    (f"predict --screen text.png --action {TAP} -o n.html", 2, ["--screen", "not a readable"]),
    (f"predict --screen huge.png --action {TAP} -o n.html", 2, ["--screen", "huge.png"]),
    (f"predict --screen s.png --scale 0 --action {TAP} -o n.html", 2, ["--scale"]),
    (f"predict --screen s.png --model nosuch:thing --action {TAP} -o n.html", 2, ["--model", "nosuch:thing"]),
    ('predict --screen s.png -o n.html --action {"type":"tap","x":true,"y":300}', 2, ["--action", "bool"]),
    ('predict --screen s.png -o n.html --action {"type":"tap","x":5000,"y":30}', 2, ["--action", "outside"]),
    ('predict --screen s.png -o n.html --action {"type":"tap","x":NaN,"y":30}', 2, ["--action"]),
    ("predict --screen s.png -o n.html --action nojson", 2, ["--action", "JSON"]),
    ("predict --screen s.png -o n.html --html bin.html --action {TAP}", 2, ["--html", "binary"]),
    ("eval --corpus /nonexistent/corpus", 2, ["--corpus", "does not exist"]),
    ("eval --corpus broken -m copy", 2, ["--corpus", "damaged", ".arrow"]),
    ("eval --corpus corpus --split nosplit", 2, ["--split", "nosplit"]),
    ("eval --corpus corpus -m hf:/no/such/model", 1, ["/no/such/model"]),
    ("corpus stats .", 2, ["not a corpus"]),
    ("corpus stats /nonexistent/corpus", 2, ["does not exist"]),
    ("corpus stats broken", 2, ["damaged", ".arrow", "wm corpus build"]),
    ("corpus import-android nope.tfrecord -o out", 2, ["nope.tfrecord"]),
    ("train --preset nosuch", 2, ["nosuch"]),
    ("nosuchcommand", 2, ["nosuchcommand"]),
]


@pytest.mark.parametrize("argv,code,words", CASES, ids=[c[0][:50] for c in CASES])
def test_bad_input_gives_one_error_line(files, monkeypatch, capsys, argv, code, words):
    monkeypatch.chdir(files)
    args = argv.replace("{TAP}", TAP).split(" ")
    rc = main(args)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == code, err
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert "Traceback" not in err[0]
    for w in words:
        assert w in err[0], (w, err[0])
    assert not (files / "o.png").exists() and not (files / "n.html").exists()


def test_debug_shows_the_traceback(files, monkeypatch, capsys):
    monkeypatch.chdir(files)
    rc = main(["--debug", "eval", "--corpus", "corpus", "-m", "hf:/no/such/model"])
    err = capsys.readouterr().err
    assert rc == 1 and "Traceback" in err


def test_render_makes_missing_folders(files, monkeypatch, capsys):
    monkeypatch.chdir(files)
    assert main(["render", "ok.html", "-o", "made/sub/o.png", "--width", "50", "--height", "40"]) == 0
    assert Image.open(files / "made/sub/o.png").size == (50, 40)


@pytest.mark.parametrize(
    "bad",
    [
        dict(x=True, y=3),
        dict(x=float("nan"), y=3),
        dict(x=float("inf"), y=3),
        dict(x=-1, y=3),
        dict(x="3", y=3),
    ],
)
def test_action_takes_only_real_finite_numbers(bad):
    with pytest.raises(ValueError, match="action x"):
        Action("tap", **bad)


def test_action_outside_a_known_screen_is_named():
    assert Action("tap", x=10, y=10).check_within((64, 48)).x == 10
    with pytest.raises(ValueError, match="outside the 64x48 screen"):
        Action("tap", x=65, y=10).check_within((64, 48))


def test_bad_corpus_records_are_reported_with_episode_and_step(tmp_path):
    from worldmodel import iter_transitions

    dd = save_corpus(_transitions(), tmp_path / "c", splits={"demo": "train"})
    rows = dd["train"].to_list()
    rows[1]["action"] = {**rows[1]["action"], "x": 9999.0}
    skipped = []
    got = list(iter_transitions(rows, skipped))
    assert len(got) == 2 and skipped == [
        "episode 'e' step 1: action point (9999, 4) is outside the 64x48 screen"
    ]
    with pytest.raises(ValueError, match="step 1"):
        list(iter_transitions(rows))


# ---- the store: a whole corpus at every instant ------------------------------------------------

_SAVER = textwrap.dedent(
    """
    import os, sys
    from PIL import Image
    sys.path.insert(0, {root!r})
    from corpus.store import save_corpus
    from worldmodel import Action, Screen, Transition
    img = Image.new("RGB", (64, 48), (0, 0, 255))
    tr = [Transition(Screen(img, html="<p>new</p>"), Action("wait"), Screen(img, html="<p>new</p>"),
                     app="demo", episode_id="new", step=i) for i in range(5)]
    def step(name):
        if name == {point!r}:
            os._exit(9)  # killed right here
    save_corpus(tr, {path!r}, splits={{"demo": "train"}}, on_step=step)
    """
)


@pytest.mark.parametrize("layout", ["real_folder", "symlink"])
@pytest.mark.parametrize("point", ["written", "old_moved", "swapped", "never"])
def test_a_save_killed_anywhere_leaves_a_whole_corpus(tmp_path, layout, point):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = tmp_path / "c"
    old = _transitions(n=3)
    if layout == "real_folder":
        # a corpus checked into git is a real folder, and stays one
        from corpus.store import build_dataset

        build_dataset(old, {"demo": "train"}).save_to_disk(str(path))
    else:
        save_corpus(old, path, splits={"demo": "train"})
        assert path.is_symlink()
    script = tmp_path / "saver.py"
    script.write_text(_SAVER.format(root=root, point=point, path=str(path)))
    rc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    killed = point != "never" and not (layout == "symlink" and point == "old_moved")
    assert rc.returncode == (9 if killed else 0), rc.stderr[-1500:]
    import warnings

    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        n = len(load_corpus(path)["train"])  # never FileNotFoundError
    assert n in (3, 5)
    if point in ("swapped", "never"):
        assert n == 5
    # the next save cleans what the dead process left and leaves exactly one corpus beside nothing
    save_corpus(_transitions(n=4), path, splits={"demo": "train"})
    assert len(load_corpus(path)["train"]) == 4
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".c.")]
    live = [p for p in leftovers if path.is_symlink() and p == path.resolve().name]
    assert sorted(leftovers) == sorted(live), leftovers


def test_a_reader_polling_during_saves_always_finds_a_corpus(tmp_path):
    import threading

    path = tmp_path / "c"
    save_corpus(_transitions(n=2), path, splits={"demo": "train"})
    errors, stop = [], threading.Event()

    def poll():
        while not stop.is_set():
            try:
                load_corpus(path)
            except (CorpusError, FileNotFoundError) as e:
                errors.append(str(e))

    t = threading.Thread(target=poll)
    t.start()
    try:
        for i in range(6):
            save_corpus(_transitions(n=2 + i), path, splits={"demo": "train"})
    finally:
        stop.set()
        t.join()
    assert errors == []
    assert len(load_corpus(path)["train"]) == 7


def test_stale_temp_folders_of_dead_processes_are_removed(tmp_path):
    path = tmp_path / "c"
    save_corpus(_transitions(), path, splits={"demo": "train"})
    dead = 2**22 + 12345  # above pid_max's default: no such process
    (tmp_path / f".c.tmp-{dead}").mkdir()
    (tmp_path / f".c.v-1-{dead}").mkdir()
    removed = clean_leftovers(path)
    assert {p.name for p in removed} == {f".c.tmp-{dead}", f".c.v-1-{dead}"}
    assert len(load_corpus(path)["train"]) == 3


def test_a_saved_corpus_carries_its_dataset_card(tmp_path):
    ts = _transitions(n=3, app="miniwob-demo") + _transitions(n=2, app="phone-x")
    for t in ts[:3]:
        t.meta["html_ssim"] = 0.99
    save_corpus(ts, tmp_path / "c", splits={"miniwob-demo": "train", "phone-x": "test"})
    card = (tmp_path / "c" / "README.md").read_text()
    assert "| miniwob-demo | train | 3 | miniwob | MIT" in card and "0.9900" in card
    assert "| phone-x | test | 2 | phone | Apache-2.0" in card
    assert "| action | struct{type, x, y, direction, text, key, app} |" in card


def test_a_file_written_whole_keeps_the_old_one_when_the_write_fails(tmp_path):
    """One atomic write for cards, figures and predicted pages: a failure leaves the old file and no
    temporary file; a success replaces it whole."""
    from worldmodel.files import write_whole

    path = tmp_path / "figures.json"
    write_whole(path, '{"ssim": 0.5}')
    with pytest.raises(TypeError):
        write_whole(path, 12345)  # neither text nor bytes
    (tmp_path / "busy").mkdir()
    with pytest.raises(OSError):
        write_whole(tmp_path / "busy", "x")  # the temporary file is written, the rename fails
    assert path.read_text() == '{"ssim": 0.5}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["busy", "figures.json"]
    write_whole(path, b"\x89PNG")
    assert path.read_bytes() == b"\x89PNG"
