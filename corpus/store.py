"""Transitions on disk as HF `datasets`, split by app so that test apps are unseen.

Besides the three app splits, a corpus may hold an `id-test` split: whole episodes of training
apps (recorded with seeds no training episode used) held out, for figures on apps seen in
training but episodes not. A transition goes there when its meta says so (`held_out`).

Saving must never leave the path without a whole corpus, whatever instant a crash or a reader
picks. A new corpus is written to a hidden versioned folder beside the path; the path itself is
a symlink that one `rename` of a new link swaps over (atomic on POSIX). A path that is a real
folder (a corpus checked into git, say) keeps being one: it is swapped with two renames, and
`load_corpus` reads the `.NAME.old-PID` / `.NAME.tmp-PID` pair a crash between them would leave.
Folders that dead processes left behind are cleaned on the next save.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from render.assets import STORE, names_in
from worldmodel.dataset import (  # noqa: F401 - the corpus stage's readers, re-exported
    ASSETS_DIR,
    COMPLETE_MARK,
    DEFAULT_CORPUS,
    ID_TEST,
    SPLIT_KEY,
    SPLITS,
    CorpusError,
    app_splits,
    corpus_transitions,
    features,
    from_row,
    iter_transitions,
    leftovers,
    load_corpus,
    pid_alive,
    to_row,
)
from worldmodel.types import Transition

from .card import dataset_card

_VERSION_PREFIX = ".{name}.v-"


def assign_splits(
    apps: Iterable[str], test_frac: float = 0.2, val_frac: float = 0.1, pinned: dict[str, str] | None = None
) -> dict[str, str]:
    """Whole apps go to one split, chosen by a stable hash, so a test app is never seen in training."""
    pinned = dict(pinned or {})
    for app, split in pinned.items():
        if split not in SPLITS:
            raise ValueError(f"split {split!r} for app {app!r} is not one of {SPLITS}")
    free = sorted(set(apps) - set(pinned), key=lambda a: hashlib.sha1(a.encode()).hexdigest())
    n = len(free) + len(pinned)
    n_test = max(0, math.ceil(test_frac * n) - sum(1 for s in pinned.values() if s == "test"))
    n_val = max(0, math.ceil(val_frac * n) - sum(1 for s in pinned.values() if s == "validation"))
    out = dict(pinned)
    for i, app in enumerate(free):
        out[app] = "test" if i < n_test else "validation" if i < n_test + n_val else "train"
    return out


def held_out(t: Transition) -> bool:
    """Whether `t` belongs to the id-test split (an episode of a training app, held out)."""
    return t.meta.get(SPLIT_KEY) == ID_TEST


def hold_out(transitions: Iterable[Transition]) -> list[Transition]:
    """`transitions`, marked for the id-test split."""
    out = list(transitions)
    for t in out:
        t.meta[SPLIT_KEY] = ID_TEST
    return out


def hold_out_share(transitions: Sequence[Transition], splits: dict[str, str], share: float) -> int:
    """Mark about `share` of each training app's recordings for the id-test split, so that an
    imported corpus (phone traces) can be scored in-app as the bundled one is; returns how many
    transitions were marked (`held_out_rows` says which)."""
    picked = held_out_rows([(t.app, t.episode_id, t.step) for t in transitions], splits, share)
    hold_out(transitions[i] for i in sorted(picked))
    return len(picked)


def held_out_rows(keys: Sequence[tuple[str, str, int]], splits: dict[str, str], share: float) -> set[int]:
    """Which of the rows `keys` ((app, episode, step) each) hold `share` of each training app's
    recordings out for id-test. An app with several episodes gives whole episodes (chosen by a
    stable hash, at least one, and at least one kept for training). An app recorded as one long
    exploration (a DroidBot run) gives the last `share` of its steps: the app's screens seen
    earlier in the run are what a memory of it would hold."""
    if not 0.0 <= share < 1.0:
        raise ValueError(f"id-test share {share} is not in [0, 1)")
    if share == 0.0:
        return set()
    by_app: dict[str, dict[str, list[int]]] = {}
    for i, (app, episode, _step) in enumerate(keys):
        if splits.get(app) == "train":
            by_app.setdefault(app, {}).setdefault(episode, []).append(i)
    picked: set[int] = set()
    for app, episodes in by_app.items():
        if len(episodes) > 1:
            order = sorted(episodes, key=lambda e: hashlib.sha1(f"{app}/{e}".encode()).hexdigest())
            n = min(len(order) - 1, max(1, round(share * len(order))))
            picked.update(i for e in order[:n] for i in episodes[e])
        else:
            rows = sorted(next(iter(episodes.values())), key=lambda i: keys[i][2])
            n = min(len(rows) - 1, max(1, round(share * len(rows)))) if len(rows) > 1 else 0
            picked.update(rows[len(rows) - n :] if n else [])
    return picked


def split_of(t: Transition, splits: dict[str, str]) -> str:
    return ID_TEST if held_out(t) else splits[t.app]


def build_dataset(transitions: Sequence[Transition], splits: dict[str, str]):
    """A DatasetDict with one split per name that has rows (datasets cannot read back an empty one)."""
    from datasets import Dataset, DatasetDict

    rows: dict[str, list[dict]] = {s: [] for s in (*SPLITS, ID_TEST)}
    for t in transitions:
        rows[split_of(t, splits)].append(to_row(t))
    feats = features()
    return DatasetDict({s: Dataset.from_list(r, features=feats) for s, r in rows.items() if r})


def save_corpus(
    transitions: Sequence[Transition],
    out_dir: str | os.PathLike,
    splits: dict[str, str] | None = None,
    on_step: Callable[[str], None] | None = None,
    id_test_share: float = 0.0,
    **split_kw,
):
    """Write a DatasetDict so that `out_dir` always holds a whole corpus: the old one or the new one.

    `id_test_share`: hold out that share of each training app's recordings as id-test
    (`hold_out_share`); a corpus of one app then trains on it rather than testing it whole.

    `on_step(name)` is called after each step ("written", "old_moved", "swapped"); tests use it to
    crash a save at each point.
    """
    if not transitions:
        raise ValueError("no transitions to save")
    splits = _splits_for({t.app for t in transitions}, splits, id_test_share, split_kw)
    hold_out_share(transitions, splits, id_test_share)
    missing = {t.app for t in transitions} - set(splits)
    if missing:
        raise ValueError(f"no split given for app(s): {', '.join(sorted(missing))}")
    unseen = sorted({t.app for t in transitions if held_out(t) and splits[t.app] != "train"})
    if unseen:
        raise ValueError(
            f"id-test holds episodes of training apps, but {', '.join(unseen)} "
            f"{'is' if len(unseen) == 1 else 'are'} in {splits[unseen[0]]}"
        )
    dd = build_dataset(transitions, splits)
    # the pixels the screens name (`asset:<hash>`) travel with the corpus, written before the swap
    assets = set().union(*(names_in(s.html) for t in transitions for s in (t.screen, t.next_screen)))
    save_dataset_folder(dd, dataset_card(dd, splits), out_dir, assets, on_step)
    return dd


def _splits_for(
    apps: set[str], splits: dict[str, str] | None, id_test_share: float, split_kw
) -> dict[str, str]:
    """The splits a save uses: the ones given, else whole apps by hash; a corpus of one app held
    out in part trains on it rather than testing it whole."""
    if not splits and id_test_share and len(apps) == 1:
        return {next(iter(apps)): "train"}
    return splits or assign_splits(apps, **split_kw)


def save_rows(
    ds,
    out_dir: str | os.PathLike,
    splits: dict[str, str] | None = None,
    id_test_share: float = 0.0,
    on_step: Callable[[str], None] | None = None,
    held: set[int] | frozenset[int] = frozenset(),
    **split_kw,
):
    """`save_corpus` for rows already on disk (a `datasets.Dataset` a pipeline streamed there,
    corpus/parallel.py): split by app (and `id_test_share`) as `save_corpus` splits
    transitions, written with its card and assets and swapped in atomically, without ever
    holding the screenshots in memory. The rows' assets must be in the asset store (or a folder
    registered with it). Rows in `held`, and rows whose meta marks them held out, go to id-test.
    Returns the saved DatasetDict."""
    from datasets import DatasetDict

    if len(ds) == 0:
        raise ValueError("no transitions to save")
    cols = ds.select_columns(["app", "episode_id", "step", "meta"])[:]
    splits = _splits_for(set(cols["app"]), splits, id_test_share, split_kw)
    keys = list(zip(cols["app"], cols["episode_id"], cols["step"]))
    held = held_out_rows(keys, splits, id_test_share) | set(held)
    held |= {
        i
        for i, m in enumerate(cols["meta"])
        if SPLIT_KEY in (m or "") and json.loads(m).get(SPLIT_KEY) == ID_TEST
    }
    names = [ID_TEST if i in held else splits[app] for i, (app, _, _) in enumerate(keys)]
    dd = DatasetDict(
        {s: ds.select([i for i, n in enumerate(names) if n == s]) for s in (*SPLITS, ID_TEST) if s in names}
    )
    save_dataset_folder(dd, dataset_card(dd, splits), out_dir, rows_assets(ds), on_step)
    return dd


def rows_assets(ds) -> set[str]:
    """The asset names the HTML of rows on disk refers to, read in batches."""
    names: set[str] = set()
    for table in fresh_chunks(ds.select_columns(["screen_html", "next_html"])):
        for col in table.columns:
            for html in col.to_pylist():
                names |= names_in(html)
    return names


def save_dataset_folder(dd, card: str, out_dir, assets=(), on_step=None, files=None) -> None:
    """Write `dd`, its card, its assets and `files` (name -> text, small files that belong to the
    corpus) at `out_dir`, swapped in atomically (the old corpus stays whole until the one rename,
    and the new one is never there without its files)."""
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists() and not out.is_dir():
        raise CorpusError(f"{out} is a file; give a folder path for the corpus")
    step = on_step or (lambda _name: None)
    texts = {"README.md": card, **(files or {})}
    clean_leftovers(out)
    if out.is_dir() and not out.is_symlink():
        _swap_real_folder(dd, texts, out, step, assets)
    else:
        _swap_link(dd, texts, out, step, assets)


# Bytes a corpus is read and written in at a time. Two things grew a save's peak memory with the
# corpus. datasets sizes a record batch up to its row group size (100 MB) and holds it in memory
# while it is written. And it reads the rows back through one memory map of the whole corpus,
# whose pages count as the process's until the map closes, at the end of the save: 152 MB of a
# 560 MB peak importing 4x the phone dev set. So a corpus goes a chunk at a time, each chunk read
# on a map of its own that closes once the chunk is written.
CHUNK_BYTES = 16 * 2**20
DATA_FILE = "data-00000-of-00001.arrow"


def fresh_chunks(ds, chunk_bytes: int = CHUNK_BYTES):
    """`ds` as consecutive pyarrow tables of about `chunk_bytes` each, every one read on a memory
    map of its own (a pickled on-disk Dataset keeps only its files' paths and re-opens them), so
    the pages a chunk touched leave the process with the chunk. An in-memory `ds` is sliced."""
    import pickle

    n = len(ds)
    per_row = max(1, ds.data.nbytes // max(1, ds.data.num_rows))
    rows = max(1, chunk_bytes // per_row)
    on_disk = bool(ds.cache_files)  # an in-memory table pickles whole, slice or not: just slice it
    for a in range(0, n, rows):
        part = ds.select(range(a, min(n, a + rows)))
        if on_disk:
            part = pickle.loads(pickle.dumps(part))
        table = part.with_format("arrow")[:]
        del part
        yield table


def _save_splits(dd, folder: Path) -> None:
    """`dd.save_to_disk(folder)`, in the layout `load_from_disk` reads (a folder a split with its
    Arrow file, state.json and dataset_info.json; dataset_dict.json last, which marks the corpus
    whole), written a chunk at a time (`fresh_chunks`)."""
    from datasets.arrow_writer import ArrowWriter
    from datasets.fingerprint import generate_random_fingerprint

    for name, ds in dd.items():
        sub = folder / name
        sub.mkdir(parents=True)
        with ArrowWriter(features=ds.features, path=str(sub / DATA_FILE), embed_local_files=True) as w:
            for table in fresh_chunks(ds):
                w.write_table(table, writer_batch_size=len(table))
            w.finalize()
        ds.info.write_to_directory(str(sub))
        state = {
            "_data_files": [{"filename": DATA_FILE}],
            "_fingerprint": generate_random_fingerprint(),
            "_format_columns": None,
            "_format_kwargs": {},
            "_format_type": None,
            "_output_all_columns": False,
            "_split": None if ds.split is None else str(ds.split),
        }
        (sub / "state.json").write_text(json.dumps(state, indent=2, sort_keys=True), encoding="utf-8")
    (folder / COMPLETE_MARK).write_text(json.dumps({"splits": list(dd)}), encoding="utf-8")


def _write(dd, texts: dict[str, str], folder: Path, assets=()) -> None:
    if assets:  # before the dataset, whose last file marks the folder complete
        STORE.write(assets, folder / ASSETS_DIR)
    _save_splits(dd, folder)
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")


def _write_or_clean(dd, texts: dict[str, str], folder: Path, assets, target: Path) -> None:
    """`_write`, or, when it fails (a full disk, say), nothing left of the attempt and one error
    naming where the corpus was going; the corpus already there is untouched."""
    try:
        _write(dd, texts, folder, assets)
    except OSError as e:
        shutil.rmtree(folder, ignore_errors=True)
        why = e.strerror or str(e).splitlines()[0]
        raise OSError(
            e.errno, f"could not save the corpus at {target}: {why}; the corpus there is unchanged"
        ) from None
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _swap_real_folder(dd, texts: dict[str, str], out: Path, step, assets=()) -> None:
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    old = out.with_name(f".{out.name}.old-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    _write_or_clean(dd, texts, tmp, assets, out)
    step("written")
    out.rename(old)
    step("old_moved")
    tmp.rename(out)
    step("swapped")
    shutil.rmtree(old, ignore_errors=True)


def _swap_link(dd, texts: dict[str, str], out: Path, step, assets=()) -> None:
    prefix = _VERSION_PREFIX.format(name=out.name)
    version = out.with_name(f"{prefix}{time.time_ns()}-{os.getpid()}")
    _write_or_clean(dd, texts, version, assets, out)
    step("written")
    link = out.with_name(f".{out.name}.link-{os.getpid()}")
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(version.name)
    previous = out.resolve() if out.is_symlink() else None
    os.replace(link, out)  # the one atomic step: readers see the old target or the new one
    step("swapped")
    if previous is not None and previous != version and previous.name.startswith(prefix):
        shutil.rmtree(previous, ignore_errors=True)


def _stamp(name: str) -> int | None:
    """The creation time (ns) in a version folder's name `.NAME.v-<ns>-<pid>`."""
    parts = name.rsplit("-", 2)
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


def clean_leftovers(out: Path) -> list[Path]:
    """Remove what interrupted saves of `out` left behind; returns what was removed.

    A leftover of a live process is another save in progress and is kept. A crashed real-folder
    swap (path missing, `.old`/`.tmp` present) is first finished, so the path holds a corpus again.
    """
    removed = []
    if not out.exists() and not out.is_symlink():
        for q, kind, pid in leftovers(out):
            if kind == "tmp" and not pid_alive(pid) and (q / COMPLETE_MARK).is_file():
                q.rename(out)  # the new corpus was complete: finish the swap
                break
        else:
            for q, kind, pid in leftovers(out):
                if kind == "old" and not pid_alive(pid) and (q / COMPLETE_MARK).is_file():
                    q.rename(out)
                    break
    current = out.resolve() if out.is_symlink() else None
    for q, _kind, pid in leftovers(out):
        if not pid_alive(pid):
            shutil.rmtree(q, ignore_errors=True)
            removed.append(q)
    prefix = _VERSION_PREFIX.format(name=out.name)
    cur_stamp = _stamp(current.name) if current is not None and current.name.startswith(prefix) else None
    if out.parent.is_dir():
        for q in out.parent.iterdir():
            if q.name.startswith(f".{out.name}.link-") and q.is_symlink():
                pid = q.name.rsplit("-", 1)[-1]
                if pid.isdigit() and not pid_alive(int(pid)):
                    q.unlink()
            if not q.name.startswith(prefix) or q == current:
                continue
            pid = q.name.rsplit("-", 1)[-1]
            dead = pid.isdigit() and not pid_alive(int(pid))
            # a version older than the one in use was superseded (its saver died before removing it)
            superseded = cur_stamp is not None and (_stamp(q.name) or 0) < cur_stamp
            if dead or superseded:
                shutil.rmtree(q, ignore_errors=True)
                removed.append(q)
    return removed
