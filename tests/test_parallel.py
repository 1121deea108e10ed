"""Corpus pipelines on several processes and machines: the same corpus for 1 and 2 processes, and
the pieces of a sharded run merged equal to the unsharded run (real Chromium, real files)."""

import io
import json

import pytest
import tfrecord
from phone_fixtures import droidbot_folder, font, forest
from PIL import Image, ImageDraw
from typer.testing import CliRunner

import corpus.phone as phone
from corpus.android import write_episode
from corpus.parallel import Shard
from corpus.store import load_corpus
from wmcli import app as cli


def _rows(path) -> dict:
    """Every split's rows, screenshots as bytes: what two corpora must share to be the same."""
    return {s: ds.to_list() for s, ds in load_corpus(path).items()}


def _episode(w, eid: int, package: str, words: list[str]) -> None:
    """One AndroidControl episode of len(words) screens, each a title bar and a line of text."""
    trees, shots = [], []
    for k, word in enumerate(words):
        nodes = [
            ((0, 0, 360, 56), f"{package} {k}", "TextView", False),
            ((0, 80, 360, 140), word, "TextView", True),
        ]
        trees.append(forest(nodes))
        im = Image.new("RGB", (360, 640), (250, 250, 250))
        d = ImageDraw.Draw(im)
        d.rectangle((0, 0, 359, 55), fill=(40, 90, 160))
        d.text((16, 16), f"{package} {k}", font=font(20), fill=(255, 255, 255))
        d.text((16, 96), word, font=font(20), fill=(20, 20, 20))
        buf = io.BytesIO()
        im.save(buf, "PNG")
        shots.append(buf.getvalue())
    acts = [{"action_type": "click", "x": 180, "y": 110}] * (len(words) - 1)
    write_episode(w, eid, f"goal {eid}", shots, trees, [(360, 640)] * len(words), acts, ["tap"] * len(acts))


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """A folder of two TFRecord shards (AndroidControl's release layout), five episodes in all."""
    root = tmp_path_factory.mktemp("ac")
    words = [
        ["milk", "eggs", "bread"],
        ["tea", "jam"],
        ["rice", "beans", "salt"],
        ["oats", "figs"],
        ["kale", "leek"],
    ]
    for f, eps in (("part-00000.tfrecord", range(0, 3)), ("part-00001.tfrecord", range(3, 5))):
        w = tfrecord.TFRecordWriter(str(root / f))
        for e in eps:
            _episode(w, 100 + e, "org.example.list", words[e])
        w.close()
    return root


def test_android_shards_import_the_same_corpus_on_one_and_two_processes(shards, tmp_path):
    one = phone.import_android_episodes(shards, tmp_path / "one", progress=False, num_proc=1)
    two = phone.import_android_episodes(shards, tmp_path / "two", progress=False, num_proc=2)
    assert one.kept_count == two.kept_count > 0 and one.screens == two.screens
    assert one.kept_count + sum(one.dropped.values()) == 2 + 1 + 2 + 1 + 1
    a, b = _rows(tmp_path / "one"), _rows(tmp_path / "two")
    assert a == b
    eps = [r["episode_id"] for rows in a.values() for r in rows]
    assert eps == sorted(eps)  # rows in the order of the episodes, shard after shard


def test_a_sharded_import_merged_equals_the_unsharded_one(shards, tmp_path):
    phone.import_android_episodes(shards, tmp_path / "whole", progress=False, id_test_share=0.3)
    for i in range(3):
        rep = phone.import_android_episodes(
            shards, tmp_path / f"p{i}", progress=False, id_test_share=0.3, shard=Shard(i, 3)
        )
        assert rep.kept_count >= 1
    res = CliRunner().invoke(
        cli, ["corpus", "merge", *(str(tmp_path / f"p{i}") for i in (2, 0, 1)), "-o", str(tmp_path / "m")]
    )
    assert res.exit_code == 0, res.output
    assert _rows(tmp_path / "m") == _rows(tmp_path / "whole")
    assert (tmp_path / "m" / "README.md").read_text() == (tmp_path / "whole" / "README.md").read_text()
    bad = CliRunner().invoke(
        cli, ["corpus", "merge", str(tmp_path / "p0"), str(tmp_path / "p1"), "-o", str(tmp_path / "x")]
    )
    assert bad.exit_code == 2 and "not all N pieces" in bad.output


def test_a_droidbot_run_cut_into_stretches_gives_one_corpus_for_any_process_count(tmp_path, monkeypatch):
    droidbot_folder(tmp_path / "db")
    monkeypatch.setattr(phone, "DROIDBOT_CHUNK", 1)  # four events, four units of work
    assert len(phone.droidbot_units(tmp_path / "db")) == 4
    one = phone.import_droidbot(tmp_path / "db", tmp_path / "one", progress=False)
    two = phone.import_droidbot(tmp_path / "db", tmp_path / "two", progress=False, num_proc=2)
    assert (
        one.summary().split(";")[0]
        == two.summary().split(";")[0]
        == "kept 3 of 4 transitions, dropped 1 (1 intent event (not usable)), skipped 0 bad records"
    )
    assert _rows(tmp_path / "one") == _rows(tmp_path / "two")


def test_bad_shards_and_process_counts_are_named(shards, tmp_path):
    for flags, hint in (
        (["--shard", "3/3"], "--shard"),
        (["--shard", "x"], "--shard"),
        (["--num-proc", "0"], "--num-proc"),
    ):
        res = CliRunner().invoke(
            cli, ["corpus", "import-android", str(shards), "-o", str(tmp_path / "c"), *flags]
        )
        assert res.exit_code == 2 and hint in res.output, res.output
    res = CliRunner().invoke(
        cli, ["corpus", "import-android", str(tmp_path / "none*.tfrecord"), "-o", str(tmp_path / "c")]
    )
    assert res.exit_code == 2 and "not found" in res.output


def _same_recording(a, b) -> bool:
    """Two recorded corpora hold the same rows; MiniWoB++'s reward decays with wall time, so
    it is compared to 3 places."""

    def rows(path):
        out = _rows(path)
        for split in out.values():
            for r in split:
                meta = json.loads(r["meta"])
                if "reward" in meta:
                    meta["reward"] = round(meta["reward"], 3)
                r["meta"] = meta
        return out

    return rows(a) == rows(b)


def test_build_records_the_same_corpus_on_two_processes_and_in_merged_pieces(tmp_path):
    plan = ["--phone-episodes", "0", "--tasks", "click-button,enter-text", "--miniwob-episodes", "2"]
    plan += ["--miniwob-steps", "2", "--third-party", "", "--no-id-test"]

    def build(out, *more):
        res = CliRunner().invoke(cli, ["corpus", "build", "-o", str(tmp_path / out), *plan, *more])
        assert res.exit_code == 0, res.output
        return res.output

    build("one")
    assert "recorded 7 transitions in 4 episodes" in build("two", "--num-proc", "2")
    assert _same_recording(tmp_path / "one", tmp_path / "two")
    build("p0", "--shard", "0/2")
    build("p1", "--shard", "1/2")
    res = CliRunner().invoke(
        cli, ["corpus", "merge", str(tmp_path / "p1"), str(tmp_path / "p0"), "-o", str(tmp_path / "m")]
    )
    assert res.exit_code == 0, res.output
    assert _same_recording(tmp_path / "one", tmp_path / "m")
    # compaction is a pure function of the rows: the same on 1 and 2 processes
    for n in ("1", "2"):
        res = CliRunner().invoke(
            cli, ["corpus", "compact", str(tmp_path / "one"), "-o", str(tmp_path / f"c{n}"), "--num-proc", n]
        )
        assert res.exit_code == 0, res.output
    assert _rows(tmp_path / "c1") == _rows(tmp_path / "c2")


def test_a_save_onto_a_full_disk_names_the_path_and_keeps_the_old_corpus(tmp_path, capsys):
    """A small tmpfs: the first corpus fits, a larger one does not."""
    import shutil
    import subprocess

    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(disk)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        small = load_corpus()["train"].select(range(2))
        big = load_corpus()["train"].select(range(200))
        from datasets import DatasetDict

        DatasetDict({"train": small}).save_to_disk(str(tmp_path / "s"))
        DatasetDict({"train": big}).save_to_disk(str(tmp_path / "b"))
        out = disk / "corpus"
        res = CliRunner().invoke(cli, ["corpus", "merge", str(tmp_path / "s"), "-o", str(out)])
        assert res.exit_code == 0, res.output
        before, kept = _rows(out), sorted(p.name for p in disk.iterdir())
        capsys.readouterr()
        rc = __import__("wmcli").main(["corpus", "merge", str(tmp_path / "b"), "-o", str(out)])
        text = capsys.readouterr().err
        err = [line for line in text.splitlines() if line.startswith("error:")]
        assert rc == 1 and len(err) == 1 and str(out) in err[0] and "space" in err[0], text
        assert "Traceback" not in text
        assert _rows(out) == before  # the old corpus, whole
        assert sorted(p.name for p in disk.iterdir()) == kept  # nothing of the attempt left
    finally:
        subprocess.run(["umount", str(disk)])
        shutil.rmtree(disk, ignore_errors=True)


def test_blocks_of_units_carry_equal_work_not_equal_counts():
    from corpus.parallel import Shard, contiguous_blocks

    # long episodes first, short ones after: cut by count, the first process gets most screens
    sizes = [9] * 10 + [2] * 30
    units = list(range(len(sizes)))
    blocks = contiguous_blocks(units, 2, sizes)
    assert [u for b in blocks for u in b] == units  # contiguous, in order, nothing lost
    work = [sum(sizes[u] for u in b) for b in blocks]
    assert abs(work[0] - work[1]) <= 9, work
    assert work[0] < sum(sizes[: len(units) // 2])  # the count cut would give 126 of 150
    pieces = [Shard(i, 3).take(units, sizes) for i in range(3)]
    assert [u for p in pieces for u in p] == units
    assert max(sum(sizes[u] for u in p) for p in pieces) <= 150 / 3 + 9
    with pytest.raises(ValueError, match="3 weights for 2 units"):
        contiguous_blocks([1, 2], 2, [1, 1, 1])


def _note_call(units, work, hold):
    """A make_rows that notes the units of each call (and yields no row); with `hold`, the
    process that takes unit 0 holds it until every unit is claimed, as a slow episode would."""
    import time
    from pathlib import Path

    def claimed() -> int:
        return sum(1 for f in Path(work).glob("claims-*/*") if f.name.isdigit())

    took = []
    for u in units:
        took.append(u)
        deadline = time.monotonic() + 60
        while hold and u[1] == 0 and claimed() < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
    with open(Path(work) / "calls.jsonl", "a") as f:
        f.write(json.dumps(took) + "\n")
    yield from ()


@pytest.mark.parametrize("procs", [1, 2])
def test_processes_share_the_units_as_they_go_each_in_one_call(tmp_path, procs):
    """A call starts a browser: one per process, not one per unit (datasets cuts a list argument
    into shards, a call each; one process once started a browser per episode). The processes
    claim units as they go: while one is held on a slow unit, the other takes the rest."""
    from corpus.parallel import stream_rows

    units = [["f", k] for k in range(6)]
    assert stream_rows(_note_call, units, procs, tmp_path, hold=procs > 1) is None
    calls = [json.loads(x) for x in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert sorted(calls) == ([units] if procs == 1 else [units[:1], units[1:]]), calls


def test_rows_go_back_in_unit_order(tmp_path):
    """Two processes' rows, joined job after job, put back in the order of their units."""
    from corpus.parallel import unit_order

    (tmp_path / "order-0.json").write_text(json.dumps([[0, 2], [3, 1]]))  # rows 0-1, 2
    (tmp_path / "order-1.json").write_text(json.dumps([[1, 1], [2, 2], [4, 1]]))  # rows 3, 4-5, 6
    assert unit_order(tmp_path, 2) == [0, 1, 3, 4, 5, 2, 6]


def test_reading_episodes_leaves_torch_unimported(shards):
    """Every import's parent reads the episodes before any worker starts; the tfrecord package
    would import torch with them (2 s, one core idle, and 150 MB in each process)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from corpus.android import android_episode_units\n"
        f"units, sizes = android_episode_units({str(shards)!r})\n"
        "assert sizes == [3, 2, 3, 2, 2], sizes\n"
        "assert 'torch' not in sys.modules\n"
        "import tfrecord.torch  # still importable afterwards\n"
        "assert 'torch' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-800:]
