"""Transitions on disk as HF `datasets`, split by app so that test apps are unseen."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

from datasets import Dataset, DatasetDict, Features, Image, Value, load_from_disk

from worldmodel.types import Action, Screen, Transition

FEATURES = Features(
    {
        "screen": Image(),
        "next_screen": Image(),
        "screen_html": Value("string"),
        "next_html": Value("string"),
        "action": Value("string"),
        "action_type": Value("string"),
        "goal": Value("string"),
        "app": Value("string"),
        "source": Value("string"),
        "episode_id": Value("string"),
        "step": Value("int32"),
        "width": Value("int32"),
        "height": Value("int32"),
        "device_scale_factor": Value("float32"),
        "html_ssim": Value("float32"),
        "meta": Value("string"),
    }
)
SPLITS = ("train", "validation", "test")
DEFAULT_CORPUS = Path(__file__).parent / "data" / "default"


def to_row(t: Transition, source: str = "web") -> dict:
    """Images go in as PNG bytes: a path would be stored as a path, and lost with the file."""
    return {
        "screen": {"bytes": t.screen.png(), "path": None},
        "next_screen": {"bytes": t.next_screen.png(), "path": None},
        "screen_html": t.screen.html or "",
        "next_html": t.next_screen.html or "",
        "action": t.action.to_json(),
        "action_type": t.action.type,
        "goal": t.goal,
        "app": t.app,
        "source": t.meta.get("source", source),
        "episode_id": t.episode_id,
        "step": t.step,
        "width": t.screen.size[0],
        "height": t.screen.size[1],
        "device_scale_factor": t.screen.device_scale_factor,
        "html_ssim": float(t.meta.get("html_ssim", float("nan"))),
        "meta": json.dumps({k: v for k, v in t.meta.items() if k not in ("source", "html_ssim")}),
    }


def from_row(row: dict) -> Transition:
    s = row["device_scale_factor"]
    meta = json.loads(row.get("meta") or "{}")
    meta["html_ssim"] = row.get("html_ssim")
    meta["source"] = row.get("source")
    return Transition(
        screen=Screen(row["screen"], html=row["screen_html"] or None, device_scale_factor=s, app=row["app"]),
        action=Action.from_json(row["action"]),
        next_screen=Screen(
            row["next_screen"], html=row["next_html"] or None, device_scale_factor=s, app=row["app"]
        ),
        goal=row["goal"],
        app=row["app"],
        episode_id=row["episode_id"],
        step=row["step"],
        meta=meta,
    )


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


def save_corpus(
    transitions: Sequence[Transition],
    out_dir: str | os.PathLike,
    splits: dict[str, str] | None = None,
    **split_kw,
) -> DatasetDict:
    """Write a DatasetDict atomically: a crash leaves the old corpus or the new one, never half of one."""
    if not transitions:
        raise ValueError("no transitions to save")
    splits = splits or assign_splits({t.app for t in transitions}, **split_kw)
    missing = {t.app for t in transitions} - set(splits)
    if missing:
        raise ValueError(f"no split given for app(s): {', '.join(sorted(missing))}")
    rows: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for t in transitions:
        rows[splits[t.app]].append(to_row(t))
    # an empty split cannot be read back by datasets, so only splits with rows are written
    dd = DatasetDict({s: Dataset.from_list(r, features=FEATURES) for s, r in rows.items() if r})
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    old = out.with_name(f".{out.name}.old-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    dd.save_to_disk(str(tmp))
    if out.exists():
        out.rename(old)
    tmp.rename(out)
    shutil.rmtree(old, ignore_errors=True)
    return dd


def load_corpus(path: str | os.PathLike | None = None) -> DatasetDict:
    """Load a saved corpus; the bundled default when `path` is None."""
    p = Path(path) if path else DEFAULT_CORPUS
    if not (p / "dataset_dict.json").is_file():
        raise FileNotFoundError(f"{p} is not a corpus saved by `wm corpus build` (no dataset_dict.json)")
    return load_from_disk(str(p))


def iter_transitions(ds: Dataset) -> Iterable[Transition]:
    for row in ds:
        yield from_row(row)
