"""Saving and loading corpora (corpus/store.py): split by whole app, images embedded, a failed save
keeps the old corpus."""

import pytest

from corpus.apps import miniwob_app, phone_app
from corpus.explorer import explore, solver_policy
from corpus.recorder import Recorder
from corpus.store import assign_splits, load_corpus, save_corpus


@pytest.fixture(scope="module")
def recorder():
    with Recorder() as r:
        yield r


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


def test_a_corpus_is_written_in_small_record_batches(tmp_path):
    """A record batch is held in memory while it is written: datasets sizes batches up to 100 MB,
    so peak memory grew with the corpus. Here 40 rows of 1 MB screenshots must not go as one."""
    import os

    import pyarrow as pa
    from datasets import Dataset, DatasetDict

    from corpus.store import CHUNK_BYTES, save_dataset_folder

    ds = Dataset.from_dict({"screen": [os.urandom(1_000_000) for _ in range(40)]})
    save_dataset_folder(DatasetDict({"train": ds}), "# card\n", tmp_path / "c")
    (arrow,) = (tmp_path / "c" / "train").glob("*.arrow")
    with pa.memory_map(str(arrow)) as f:
        sizes = [b.nbytes for b in pa.ipc.open_stream(f)]
    limit = CHUNK_BYTES
    assert sum(sizes) > 39_000_000 and len(sizes) >= 3, sizes
    assert max(sizes) <= limit + 1_000_100, sizes


@pytest.mark.parametrize("existing", [False, True])
def test_a_corpus_files_arrive_with_it_in_the_one_swap(tmp_path, existing):
    """A sharded run's piece.json is what makes its folder a piece: written after the swap, a crash
    between the two left a folder that `wm corpus merge` refused as no piece."""
    import json

    from datasets import Dataset, DatasetDict

    from corpus.parallel import PIECE_FILE, read_piece
    from corpus.store import save_dataset_folder

    out = tmp_path / "c"
    if existing:
        out.mkdir()
    seen = {}

    def step(name):
        seen[name] = (out / PIECE_FILE).is_file()

    dd = DatasetDict({"piece": Dataset.from_dict({"x": [1, 2]})})
    save_dataset_folder(
        dd, "# card\n", out, on_step=step, files={PIECE_FILE: json.dumps({"index": 0, "of": 2})}
    )
    assert seen["swapped"] and read_piece(out) == {"index": 0, "of": 2}
    assert (out / "README.md").read_text() == "# card\n"
