"""Corpus pipelines on every core and across machines, with rows streamed to disk as they are made.

A pipeline's work is a list of independent *units* (an AndroidControl episode, a stretch of a
DroidBot run), turned into corpus rows by a generator that starts its own Chromium and takes the
units one at a time. The datasets library runs it (`Dataset.from_generator`), once in each of
`num_proc` processes. The processes share the units as they go: each walks the list in order and
takes the units no process has claimed yet (an exclusive file a unit), so one that meets slow
units takes fewer, and all end together; a fixed share each, cut by screens, left one process
4-8 s behind the other on the shared phone dev set. Each process notes which units its rows came
from, and the rows are put back in unit order, so the corpus is the same, row for row, for any
number of processes. Rows go to disk in small batches, so the screenshots are never all in
memory. What a unit reports (kept, dropped and why, screens, time) and the assets its rows name
are written to a work folder beside the rows, for the parent to sum and carry into the corpus.

Across machines, `--shard I/N` runs the I-th of N contiguous blocks of the same unit list and
saves a *piece* (its rows and a `piece.json` saying which one); `wm corpus merge` joins all N
pieces in order and splits the whole as one run would have, so the merged corpus equals the
unsharded one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

PIECE_FILE = "piece.json"
PIECE_SPLIT = "piece"  # a piece holds its rows unsplit: splits are decided when the pieces merge


@dataclass(frozen=True)
class Shard:
    """The I-th (0-based) of N machines' share of a pipeline's work."""

    index: int
    of: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
        if not m or not 0 <= int(m.group(1)) < int(m.group(2)):
            raise ValueError(f"shard {text!r} is not I/N with 0 <= I < N (e.g. 0/4)")
        return cls(int(m.group(1)), int(m.group(2)))

    def take(self, units: list, weights: list[float] | None = None) -> list:
        """This shard's contiguous block of `units`: of near-equal total weight (a unit's screens,
        say) when `weights` are given, else blocks that differ in size by at most one."""
        if weights is not None:
            return contiguous_blocks(units, self.of, weights)[self.index]
        n = len(units)
        return units[self.index * n // self.of : (self.index + 1) * n // self.of]

    def __str__(self) -> str:
        return f"{self.index}/{self.of}"


def contiguous_blocks(units: list, n: int, weights: list[float]) -> list[list]:
    """`units` cut into `n` contiguous blocks whose total weights are as near equal as the cuts
    allow (each cut where the running total is nearest its share). Episodes differ in length:
    cut by count, the first half of the shared dev set holds 191 of its 264 screens."""
    if len(weights) != len(units):
        raise ValueError(f"{len(weights)} weights for {len(units)} units")
    run = [0.0]
    for w in weights:
        run.append(run[-1] + w)
    cuts = [0]
    for i in range(1, n):
        share = run[-1] * i / n
        j = min(range(cuts[-1], len(units) + 1), key=lambda k: abs(run[k] - share))
        cuts.append(j)
    cuts.append(len(units))
    return [units[a:b] for a, b in zip(cuts, cuts[1:])]


class Claims:
    """`units` in order, less those another process claimed first (one exclusive file a unit in
    `folder`); `current` is the index of the unit last handed out."""

    def __init__(self, units, folder: Path):
        self.units, self.folder, self.current = units, Path(folder), -1

    def __iter__(self) -> Iterator:
        for i, unit in enumerate(self.units):
            try:
                os.close(os.open(self.folder / str(i), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                continue
            self.current = i
            yield unit


def _claimed_rows(jobs: list[int], units: tuple, make_rows, work: str, claims: str, **kw):
    """One process's rows: `make_rows` over the units it claims (in folder `claims`). It must
    yield a unit's rows before it takes the next, so each row is counted to its unit; the counts
    go to `order-JOB.json` there."""
    for job in jobs:
        mine, counts = Claims(units, Path(claims)), []
        for row in make_rows(units=mine, work=work, **kw):
            if not counts or counts[-1][0] != mine.current:
                counts.append([mine.current, 0])
            counts[-1][1] += 1
            yield row
        (Path(claims) / f"order-{job}.json").write_text(json.dumps(counts))


def unit_order(claims: Path, jobs: int) -> list[int]:
    """The rows' positions in unit order: datasets joins the processes' rows job after job, and
    each job's rows come unit after unit (its `order-JOB.json` in the folder `claims`)."""
    spans, start = [], 0
    for job in range(jobs):
        for unit, n in json.loads((claims / f"order-{job}.json").read_text()):
            spans.append((unit, start, n))
            start += n
    return [i for _, a, n in sorted(spans) for i in range(a, a + n)]


def stream_rows(make_rows: Callable[..., Iterator[dict]], units: list, num_proc: int, work: Path, **kw):
    """A Dataset of every row `make_rows(units=UNITS, work=WORK, **kw)` yields over `units`, run
    by `num_proc` processes that share the units as they go (`Claims`), in unit order whatever
    `num_proc`; None when no unit yielded a row. `make_rows` takes a unit, yields its rows, then
    takes the next. `kw` values must not be lists (datasets would split them across processes)."""
    from datasets import Dataset
    from datasets.utils.logging import disable_progress_bar

    from worldmodel.dataset import features

    if num_proc < 1:
        raise ValueError(f"num_proc {num_proc} is not >= 1")
    if not units:
        return None
    disable_progress_bar()
    procs = min(num_proc, len(units))
    work.mkdir(parents=True, exist_ok=True)
    claims = Path(tempfile.mkdtemp(prefix="claims-", dir=work))  # this call's own
    # datasets hands each process its share of a list-valued kwarg, one generator call each: the
    # job numbers, so each process makes its rows in one call (one browser). Handed the units, one
    # process called make_rows once per unit and started a browser per episode (2.7x slower).
    gen_kwargs = {
        "jobs": list(range(procs)),
        "units": tuple(units),
        "work": str(work),
        "claims": str(claims),
        "make_rows": make_rows,
        **kw,
    }
    try:
        ds = Dataset.from_generator(
            _claimed_rows,
            features=features(),
            gen_kwargs=gen_kwargs,
            num_proc=procs if procs > 1 else None,
            cache_dir=str(work / "cache"),
            writer_batch_size=8,
        )
    except ValueError as e:
        if "corresponds to no data" in str(e):  # datasets' word for a generator that yielded nothing
            return None
        raise
    order = unit_order(claims, procs)
    if len(order) != len(ds):
        raise RuntimeError(f"{len(ds)} rows streamed but {len(order)} counted to their units")
    return ds if order == list(range(len(ds))) else ds.select(order)


def work_folder(out: Path) -> Path:
    """A fresh folder beside `out` for a run's Arrow cache, reports and assets (removed after)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.work-", dir=out.parent))


def report_unit(work: Path, unit_key: str, report: dict) -> None:
    """What one unit kept, dropped and skipped, for the parent to sum (one file per unit)."""
    d = work / "reports"
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', unit_key)}.json").write_text(json.dumps(report))


def read_reports(work: Path) -> dict:
    """Every unit's report summed: kept, dropped (by reason), skipped, screens, rows."""
    total = {"kept": 0, "dropped": Counter(), "skipped": [], "screens": 0, "rows": []}
    for f in sorted((work / "reports").glob("*.json")):
        r = json.loads(f.read_text())
        total["kept"] += r["kept"]
        total["dropped"].update(r["dropped"])
        total["skipped"] += r["skipped"]
        total["screens"] += r["screens"]
        total["rows"] += r.get("rows", [])
    return total


def save_piece(ds, out: Path, shard: Shard, options: dict) -> None:
    """One machine's rows, unsplit, with what the merge needs to split the whole as one run."""
    from datasets import DatasetDict

    from .store import rows_assets, save_dataset_folder

    card = f"# Corpus piece {shard} (join all pieces with `wm corpus merge`)\n\n{len(ds)} rows.\n"
    piece = json.dumps({"index": shard.index, "of": shard.of, **options})
    save_dataset_folder(DatasetDict({PIECE_SPLIT: ds}), card, out, rows_assets(ds), files={PIECE_FILE: piece})


def read_piece(folder: Path) -> dict | None:
    """A piece's `piece.json`, or None for an ordinary corpus."""
    f = Path(folder) / PIECE_FILE
    return json.loads(f.read_text()) if f.is_file() else None


def merge_pieces(folders: list[Path], out: Path) -> tuple[object, dict]:
    """All N pieces of one sharded run joined in shard order and saved as the corpus one run
    would have made. Returns (the saved DatasetDict, the pieces' shared options)."""
    from datasets import concatenate_datasets, load_from_disk

    from render.assets import STORE

    from .store import save_rows

    info = [(read_piece(f), f) for f in folders]
    ofs = {i["of"] for i, _ in info}
    got = sorted(i["index"] for i, _ in info)
    if len(ofs) != 1 or got != list(range(next(iter(ofs)))):
        names = ", ".join(f"{i['index']}/{i['of']}" for i, _ in info)
        raise ValueError(f"pieces {names} are not all N pieces of one run")
    info.sort(key=lambda x: x[0]["index"])
    options = {k: v for k, v in info[0][0].items() if k not in ("index", "of")}
    parts = []
    for _, f in info:
        STORE.add_folder(Path(f) / "assets")
        parts.append(load_from_disk(str(f))[PIECE_SPLIT])
    ds = concatenate_datasets(parts)
    pinned = {a: s for a, s in (options.get("pinned") or {}).items() if a in set(ds.unique("app"))}
    dd = save_rows(ds, out, id_test_share=float(options.get("id_test_share", 0.0)), pinned=pinned)
    return dd, options


def remove_work(work: Path) -> None:
    shutil.rmtree(work, ignore_errors=True)
