"""The corpus format on disk, and reading it back: one place every layer can load transitions from.

Saving (recording, splitting, swapping a new corpus in) belongs to the `corpus` stage; reading
lives here, below it, so that the world model (retrieval), planning and training can load a
corpus without importing the stage that records one.

A saved corpus path is either a real folder or a symlink to a versioned folder beside it (how
`corpus.store.save_corpus` swaps corpora atomically). A crash between the two renames of a
real-folder swap leaves `.NAME.old-PID` / `.NAME.tmp-PID` beside a missing path; `load_corpus`
recovers from those, and says so.
"""

from __future__ import annotations

import json
import os
import re
import time
import warnings
from collections.abc import Iterable
from pathlib import Path

from .types import Action, Screen, Transition

# Where the bundled corpus lives (data shipped with the `corpus` package; reading it imports nothing).
DEFAULT_CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "data" / "default"
COMPLETE_MARK = "dataset_dict.json"  # written last by datasets' save_to_disk
ASSETS_DIR = "assets"  # the PNGs a corpus' screens name as `asset:<hash>` (render/assets.py)
SPLITS = ("train", "validation", "test")  # each app wholly in one of these
# The in-app test split (Code2World's in-distribution setting): whole episodes of training apps,
# recorded with seeds no training episode used, so their apps are seen and their episodes not.
# A transition is in it when its meta says so (`meta[SPLIT_KEY] == ID_TEST`), which travels with
# it through every re-save (merge, compact, --append).
ID_TEST = "id-test"
SPLIT_KEY = "split"
_LEFTOVER = re.compile(r"^\.(?P<name>.+)\.(?P<kind>old|tmp)-(?P<pid>\d+)$")


class CorpusError(ValueError):
    """A corpus that is missing or damaged; the message names the path and what to do."""


def features():
    """The column schema every corpus is saved with (a datasets.Features)."""
    from datasets import Features, Image, Value

    action = {
        "type": Value("string"),
        "x": Value("float64"),
        "y": Value("float64"),
        "direction": Value("string"),
        "text": Value("string"),
        "key": Value("string"),
        "app": Value("string"),
    }
    return Features(
        {
            "screen": Image(),
            "next_screen": Image(),
            "screen_html": Value("string"),
            "next_html": Value("string"),
            "action": action,
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


def to_row(t: Transition, source: str = "web") -> dict:
    """Images go in as PNG bytes: a path would be stored as a path, and lost with the file."""
    act = {k: None for k in ("type", "x", "y", "direction", "text", "key", "app")}
    act.update(t.action.to_dict())
    for k in ("x", "y"):
        if act[k] is not None:
            act[k] = float(act[k])
    return {
        "screen": {"bytes": t.screen.png(), "path": None},
        "next_screen": {"bytes": t.next_screen.png(), "path": None},
        "screen_html": t.screen.html or "",
        "next_html": t.next_screen.html or "",
        "action": act,
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


def row_action(row: dict) -> Action:
    """The action of a row: a struct in current corpora, a JSON string in older ones."""
    return as_action(row["action"])


def as_action(a) -> Action:
    """An action column's value as an Action: a struct's dict (unset fields None), JSON text, or
    an Action already; ValueError when it is none of these."""
    if isinstance(a, Action):
        return a
    if isinstance(a, str):
        return Action.from_json(a)
    return Action.from_dict({k: v for k, v in a.items() if v is not None} if isinstance(a, dict) else a)


def from_row(row: dict) -> Transition:
    """A stored row back as a Transition; a bad action raises ValueError naming episode and step."""
    s = row["device_scale_factor"]
    meta = json.loads(row.get("meta") or "{}")
    meta["html_ssim"] = row.get("html_ssim")
    meta["source"] = row.get("source")
    screen = Screen(row["screen"], html=row["screen_html"] or None, device_scale_factor=s, app=row["app"])
    try:
        action = row_action(row)
        action.check_within(screen.size)
    except ValueError as e:
        raise ValueError(f"episode {row.get('episode_id')!r} step {row.get('step')}: {e}") from None
    return Transition(
        screen=screen,
        action=action,
        next_screen=Screen(
            row["next_screen"], html=row["next_html"] or None, device_scale_factor=s, app=row["app"]
        ),
        goal=row["goal"],
        app=row["app"],
        episode_id=row["episode_id"],
        step=row["step"],
        meta=meta,
    )


def iter_transitions(ds, skipped: list[str] | None = None) -> Iterable[Transition]:
    """Transitions of a datasets split; with `skipped`, bad rows are reported there and left out."""
    for row in ds:
        try:
            yield from_row(row)
        except ValueError as e:
            if skipped is None:
                raise
            skipped.append(str(e))


def corpus_transitions(dd, skipped: list[str] | None = None) -> list[Transition]:
    """Every transition of a loaded corpus, those of its id-test split marked as held out (so
    saving them again keeps them there)."""
    out = []
    for split, ds in dd.items():
        for t in iter_transitions(ds, skipped):
            if split == ID_TEST:
                t.meta[SPLIT_KEY] = ID_TEST
            out.append(t)
    return out


def episode_histories(transitions: list[Transition]) -> list[tuple[Screen, ...]]:
    """Per transition, the screens its episode showed before it, oldest first (`Query.history`):
    the current screens of the same app's same episode at earlier steps. A transition with no
    episode id has none."""
    seen: dict[tuple[str, str], list[tuple[int, Screen]]] = {}
    for t in transitions:
        if t.episode_id:
            seen.setdefault((t.app, t.episode_id), []).append((t.step, t.screen))
    out = []
    for t in transitions:
        mine = sorted(seen.get((t.app, t.episode_id), []), key=lambda x: x[0]) if t.episode_id else []
        out.append(tuple(s for step, s in mine if step < t.step))
    return out


def app_splits(dd) -> dict[str, str]:
    """Each app's own split (train, validation or test) in a loaded corpus; its held-out
    id-test episodes do not move it."""
    out: dict[str, str] = {}
    for split, ds in dd.items():
        if split != ID_TEST:
            out.update(dict.fromkeys(set(ds["app"]), split))
    if ID_TEST in dd:
        for app in set(dd[ID_TEST]["app"]):
            out.setdefault(app, "train")
    return out


def pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def leftovers(path: Path) -> list[tuple[Path, str, int]]:
    """(folder, 'old'|'tmp', pid) for every swap leftover of `path` in its parent folder."""
    out = []
    if not path.parent.is_dir():
        return out
    for p in path.parent.iterdir():
        m = _LEFTOVER.match(p.name)
        if m and m["name"] == path.name:
            out.append((p, m["kind"], int(m["pid"])))
    return out


def _recover(p: Path) -> Path | None:
    """A complete corpus left by an interrupted swap: the newly written one first, else the old one."""
    found = [(kind, q) for q, kind, _pid in leftovers(p) if (q / COMPLETE_MARK).is_file()]
    for want in ("tmp", "old"):
        for kind, q in found:
            if kind == want:
                return q
    return None


def resolve_corpus(path: str | os.PathLike | None = None) -> Path:
    """The folder to read for `path` (the bundled corpus when None), recovering from a crashed swap."""
    p = Path(path) if path else DEFAULT_CORPUS
    for attempt in range(3):
        if (p / COMPLETE_MARK).is_file():
            return p
        if p.exists() and not p.is_symlink() and not p.is_dir():
            raise CorpusError(f"corpus {p} is a file, not a corpus folder")
        rec = _recover(p)
        if rec is not None:
            warnings.warn(
                f"corpus {p} was left mid-swap by a crashed save; reading {rec.name} (the next save repairs it)",
                stacklevel=3,
            )
            return rec
        if attempt < 2:
            time.sleep(0.05)  # a save may be between its renames right now
    if p.is_dir():
        raise CorpusError(
            f"{p} is not a corpus (no {COMPLETE_MARK}); record one with `wm corpus build -o {p}`"
        )
    raise CorpusError(f"corpus {p} does not exist; record one with `wm corpus build -o {p}`")


def load_corpus(path: str | os.PathLike | None = None):
    """Load a saved corpus (a datasets.DatasetDict); the bundled default when `path` is None."""
    from datasets import load_from_disk

    folder = resolve_corpus(path)
    try:
        dd = load_from_disk(str(folder))
        for split in dd.values():
            _ = split.num_rows, split.data.table.num_rows  # touches every arrow file's footer
    except Exception as e:  # noqa: BLE001 - datasets/pyarrow raise many kinds; all mean "damaged"
        bad = _damaged_file(folder) or folder
        raise CorpusError(
            f"corpus {path or folder} is damaged: {bad}: {type(e).__name__}: {str(e).splitlines()[0][:200]}; "
            "restore it from a copy or record it again with `wm corpus build`"
        ) from None
    from render.assets import STORE

    STORE.add_folder(folder / ASSETS_DIR)  # so the renderer resolves the screens' asset names
    return dd


def _damaged_file(folder: Path) -> Path | None:
    """The first arrow file of a corpus that pyarrow cannot read to the end."""
    import pyarrow as pa

    for f in sorted(folder.rglob("*.arrow")):
        try:
            with pa.memory_map(str(f)) as src:
                pa.ipc.open_stream(src).read_all()
        except Exception:  # noqa: BLE001
            return f
    for f in sorted(folder.rglob("*.json")):
        try:
            json.loads(f.read_text())
        except Exception:  # noqa: BLE001
            return f
    return None
