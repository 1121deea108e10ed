"""Import AndroidControl-format episodes (TFRecord) as transitions with HTML screens.

Each record is one episode: `goal`, PNG `screenshots`, serialized `accessibility_trees`
(android_env's AndroidAccessibilityForest proto), `screenshot_widths`/`heights`, JSON `actions`
and `step_instructions` (GZIP TFRecord). The tfrecord package reads them without TensorFlow.
The trees are read with android_env's own schema (corpus/a11y.py), so field numbers are never
written here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from worldmodel.types import Action, Screen, Transition

from .a11y import forest_class
from .translate import ROOT_ID, TYPE_APPLICATION, TYPE_INPUT_METHOD, translate  # noqa: F401


def tree_to_html(
    forest_bytes: bytes,
    width: int,
    height: int,
    scale: float = 1.0,
    screenshot=None,
) -> str:
    """HTML for a screen: every window of the forest in z-order, coloured, sized and carried as
    pixels from `screenshot` when given (corpus/translate/), else drawn on white."""
    if screenshot is None:
        return translate(forest_bytes, None, scale, (width, height)).html()
    return translate(forest_bytes, screenshot, scale, (width, height)).html()


def convert_action(d: dict, width: int, height: int) -> Action:
    """AndroidControl's action JSON in our schema."""
    t = d.get("action_type")
    if t == "scroll":
        # AndroidControl scrolls have a direction but no point: scroll from the screen centre.
        return Action("scroll", x=width / 2, y=height / 2, direction=d["direction"])
    if t == "input_text":
        return Action("type", text=d.get("text", ""), x=d.get("x"), y=d.get("y"))
    if t == "open_app":
        return Action("open_app", app=d.get("app_name") or d.get("app"))
    if t in ("click", "long_press"):
        return Action(t, x=d["x"], y=d["y"])  # Action refuses bools, NaN and strings
    return Action.from_dict({k: v for k, v in d.items() if k != "action_type"} | {"type": t})


DESCRIPTION = {
    "episode_id": "int",
    "goal": "byte",
    "screenshots": "byte",
    "accessibility_trees": "byte",
    "screenshot_widths": "int",
    "screenshot_heights": "int",
    "actions": "byte",
    "step_instructions": "byte",
}


def _tfrecord_loader():
    """tfrecord's record loader, without its torch dataset. The package's __init__ imports that
    too (and with it torch: 2 of the 2.7 s a 2-process import of the dev set spent before any
    worker started, one core idle) unless the import fails, which it allows for. Blocked only
    while the package loads, so `import tfrecord.torch` still works afterwards."""
    import sys

    if "tfrecord" not in sys.modules and "tfrecord.torch" not in sys.modules:
        sys.modules["tfrecord.torch"] = None  # type: ignore[assignment]
        try:
            import tfrecord  # noqa: F401
        finally:
            del sys.modules["tfrecord.torch"]
    from tfrecord.reader import tfrecord_loader

    return tfrecord_loader


def read_episodes(path: str | Path, compression: str | None = "auto") -> Iterator[dict]:
    """Raw episodes from a TFRecord file (GZIP, as AndroidControl ships, or plain)."""
    tfrecord_loader = _tfrecord_loader()
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"AndroidControl file not found: {path}")
    if compression == "auto":
        with open(path, "rb") as f:
            compression = "gzip" if f.read(2) == b"\x1f\x8b" else None
    yield from tfrecord_loader(str(path), None, DESCRIPTION, compression_type=compression)


def tfrecord_files(path: str | Path) -> list[Path]:
    """The TFRecord files `path` names: a file, a folder of shards (AndroidControl's release
    layout: every `*.tfrecord*` file in it), or a glob pattern; sorted, so the order is stable."""
    p = Path(path)
    if p.is_file():
        return [p]
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and ".tfrecord" in f.name)
    else:
        import glob

        files = sorted(Path(f) for f in glob.glob(str(path)) if Path(f).is_file())
    if not files:
        raise FileNotFoundError(
            f"AndroidControl file not found: {path} (a file, a folder of *.tfrecord* shards, or a glob)"
        )
    return files


def android_episode_units(path: str | Path) -> tuple[list[tuple[str, int]], list[int]]:
    """Every episode `path` holds (file, shards or glob) as (file, position in it): the units an
    import is split into across processes and machines; and each one's screens, to cut the
    units into blocks of equal work (episodes run from 2 to 9 screens and more)."""
    units, sizes = [], []
    for f in tfrecord_files(path):
        for k, episode in enumerate(read_episodes(f)):
            units.append((str(f), k))
            shots = episode.get("screenshots")
            sizes.append(max(1, len(shots) if shots is not None else 0))
    return units, sizes


def _as_list(v) -> list:
    if isinstance(v, (bytes, bytearray)):
        return [bytes(v)]
    if hasattr(v, "tolist"):
        v = v.tolist()
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _texts(v) -> list[str]:
    return [x.decode("utf-8") if isinstance(x, (bytes, bytearray)) else str(x) for x in _as_list(v)]


def _json_or_empty(a: str) -> dict:
    try:
        d = json.loads(a)
    except ValueError:
        return {}
    return d if isinstance(d, dict) else {}


def forest_package(forest_bytes: bytes) -> str:
    """The package of the app a forest shows: its top application window's commonest package."""
    from collections import Counter

    forest = forest_class().FromString(forest_bytes)
    apps = sorted((w for w in forest.windows if w.window_type == TYPE_APPLICATION), key=lambda w: -w.layer)
    for w in apps:
        c = Counter(n.package_name for n in w.tree.nodes if n.package_name)
        if c:
            return c.most_common(1)[0][0]
    return ""


def import_android(
    path: str | Path,
    scale: float = 1.0,
    skipped: list[str] | None = None,
    drafts: dict | None = None,
) -> Iterator[Transition]:
    """Transitions from AndroidControl episodes, screens translated from their accessibility trees
    and screenshots (corpus/translate/). Each transition's app is its episode's package.

    With `skipped`, a bad record (an action that does not parse or lies off its screen, an episode
    whose lists do not line up, a screen that cannot be translated) is reported there, naming its
    episode and step, and left out; without it, the first one raises ValueError. With `drafts`,
    each screen's Draft is kept there under id(screen), for the revision."""
    for ep in read_episodes(path):
        yield from episode_transitions(ep, scale, skipped, drafts)


def episode_transitions(
    ep: dict, scale: float = 1.0, skipped: list[str] | None = None, drafts: dict | None = None
) -> Iterator[Transition]:
    """The transitions of one raw AndroidControl episode (a record `read_episodes` gives), as
    `import_android` makes them."""

    def bad(msg: str) -> None:
        if skipped is None:
            raise ValueError(msg)
        skipped.append(msg)

    shots = _as_list(ep["screenshots"])
    trees = _as_list(ep["accessibility_trees"])
    widths, heights = _as_list(ep["screenshot_widths"]), _as_list(ep["screenshot_heights"])
    actions = _texts(ep["actions"])
    goal = _texts(ep["goal"])[0]
    steps = _texts(ep.get("step_instructions", []))
    eid = str(_as_list(ep["episode_id"])[0])
    if not (len(shots) == len(trees) == len(widths) == len(heights) == len(actions) + 1):
        bad(
            f"episode {eid}: {len(shots)} screenshots, {len(trees)} trees and {len(actions)} actions "
            "do not line up (expected one more screen than actions)"
        )
        return
    packages = [forest_package(t) for t in trees]
    opened = [d.get("app_name") for d in map(_json_or_empty, actions) if d.get("action_type") == "open_app"]
    app = next((p for p in packages if p), "") or next((a for a in opened if a), "") or "android"
    screens: list[Screen | None] = []
    notes: list[list[str]] = []  # what the translation had to assume (e.g. rescaled bounds)
    for i in range(len(shots)):
        try:
            d = translate(trees[i], shots[i], scale, (int(widths[i]), int(heights[i])))
            s = Screen(shots[i], html=d.html(), device_scale_factor=scale, app=app)
            notes.append(d.notes)
        except Exception as e:  # noqa: BLE001 - a screen that cannot be read is reported, the rest kept
            bad(f"episode {eid} screen {i}: could not translate: {type(e).__name__}: {str(e)[:200]}")
            screens.append(None)
            notes.append([])
            continue
        if drafts is not None:
            drafts[id(s)] = d
        screens.append(s)
    for i, a in enumerate(actions):
        if screens[i] is None or screens[i + 1] is None:
            continue
        try:
            d = json.loads(a)
            if not isinstance(d, dict):
                raise ValueError(f"action is not a JSON object: {a[:80]!r}")
            # action points are in the recorded screen's pixels, like the tree's bounds
            sx = screens[i].size[0] / max(1, int(widths[i]))
            sy = screens[i].size[1] / max(1, int(heights[i]))
            action = convert_action(d, int(widths[i]), int(heights[i]))
            if action.x is not None and (abs(sx - 1) > 0.01 or abs(sy - 1) > 0.01):
                action = Action.from_dict(action.to_dict() | {"x": action.x * sx, "y": action.y * sy})
            action.check_within(screens[i].size)
        except (ValueError, KeyError, TypeError) as e:
            bad(f"episode {eid} step {i}: {type(e).__name__ if isinstance(e, KeyError) else ''}{e}")
            continue
        meta = {"source": "android", "step_instruction": steps[i] if i < len(steps) else ""}
        if notes[i] or notes[i + 1]:
            meta["translation_notes"] = sorted(set(notes[i] + notes[i + 1]))
        yield Transition(screens[i], action, screens[i + 1], goal, app, eid, i, meta)


def write_episode(
    writer,
    episode_id: int,
    goal: str,
    screenshots: list[bytes],
    trees: list[bytes],
    sizes: list[tuple[int, int]],
    actions: list[dict],
    step_instructions: list[str],
) -> None:
    """Write one episode in AndroidControl's layout (for fixtures and exports)."""
    writer.write(
        {
            "episode_id": (episode_id, "int"),
            "goal": (goal.encode(), "byte"),
            "screenshots": (screenshots, "byte"),
            "accessibility_trees": (trees, "byte"),
            "screenshot_widths": ([w for w, _ in sizes], "int"),
            "screenshot_heights": ([h for _, h in sizes], "int"),
            "actions": ([json.dumps(a).encode() for a in actions], "byte"),
            "step_instructions": ([s.encode() for s in step_instructions], "byte"),
        }
    )
