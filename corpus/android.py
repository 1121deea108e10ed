"""Import AndroidControl-format episodes (TFRecord) as transitions with HTML screens.

Each record is one episode: `goal`, PNG `screenshots`, serialized `accessibility_trees`
(android_env's AndroidAccessibilityForest proto), `screenshot_widths`/`heights`, JSON `actions`
and `step_instructions` (GZIP TFRecord). The tfrecord package reads them without TensorFlow.
The schema is android_env's own `.proto` files (corpus/proto, Apache-2.0), compiled with
grpcio-tools into a descriptor set when first needed, so field numbers are never written here.
"""

from __future__ import annotations

import html as htmllib
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from worldmodel.types import Action, Screen, Transition

PROTO_DIR = Path(__file__).parent / "proto"
A11Y_PROTOS = "android_env/proto/a11y"
# android_env's WindowType values
TYPE_APPLICATION, TYPE_INPUT_METHOD = 1, 2
ROOT_ID = 0  # "the root node is the node whose ID is 0"


def compile_descriptor_set(proto_dir: Path = PROTO_DIR) -> bytes:
    """The a11y .proto files compiled (with imports) into a serialized FileDescriptorSet."""
    files = sorted(str(p.relative_to(proto_dir)) for p in (proto_dir / A11Y_PROTOS).glob("*.proto"))
    if not files:
        raise FileNotFoundError(f"no .proto files in {proto_dir / A11Y_PROTOS}")
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "a11y.desc"
        cmd = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{proto_dir}",
            "--include_imports",
            f"--descriptor_set_out={out}",
            *files,
        ]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"protoc failed on {proto_dir}: {r.stderr.strip()[:300]}")
        return out.read_bytes()


@lru_cache(maxsize=1)
def a11y_messages() -> dict[str, type]:
    """Message classes by name (AndroidAccessibilityForest, ...NodeInfo, ...) from the real schema."""
    fds = descriptor_pb2.FileDescriptorSet.FromString(compile_descriptor_set())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    out = {}
    for f in fds.file:
        for m in f.message_type:
            out[m.name] = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{f.package}.{m.name}"))
    return out


def forest_class():
    """The AndroidAccessibilityForest message class."""
    return a11y_messages()["AndroidAccessibilityForest"]


def _node_html(n, scale: float) -> str:
    b = n.bounds_in_screen
    x, y = b.left / scale, b.top / scale
    w, h = max(0, b.right - b.left) / scale, max(0, b.bottom - b.top) / scale
    cls = n.class_name.rsplit(".", 1)[-1]
    label = n.text or n.content_description or n.hint_text
    style = f"position:absolute;left:{x:.0f}px;top:{y:.0f}px;width:{w:.0f}px;height:{h:.0f}px;"
    attrs = f' data-class="{htmllib.escape(cls)}"'
    if n.view_id_resource_name:
        attrs += f' data-id="{htmllib.escape(n.view_id_resource_name)}"'
    text = htmllib.escape(label)
    if n.is_editable:
        ph = htmllib.escape(n.hint_text)
        return (
            f'<input{attrs} value="{htmllib.escape(n.text)}" placeholder="{ph}" '
            f'style="{style}font-size:{max(10, h * 0.4):.0f}px;border:0;border-bottom:1px solid #888;background:transparent">'
        )
    if n.is_checkable:
        checked = " checked" if n.is_checked else ""
        return (
            f'<label{attrs} style="{style}display:flex;align-items:center;font-size:14px">'
            f'<input type="checkbox"{checked}>{text}</label>'
        )
    if "Image" in cls and not n.text:
        return (
            f'<div{attrs} role="img" aria-label="{text}" style="{style}background:#ccc;display:flex;'
            f'align-items:center;justify-content:center;font-size:10px;color:#555">{text}</div>'
        )
    tag = "button" if n.is_clickable and ("Button" in cls or label) else "div"
    font = max(10.0, min(h * 0.45, 22.0))
    extra = "border:0;background:transparent;padding:0;text-align:left;" if tag == "button" else ""
    inner = (
        f'<span style="font-size:{font:.0f}px;line-height:{h:.0f}px;padding:0 4px;white-space:nowrap;overflow:hidden">{text}</span>'
        if text
        else ""
    )
    return f'<{tag}{attrs} style="{style}{extra}overflow:hidden">{inner}</{tag}>'


def _tree_order(nodes) -> list:
    """Nodes in drawing order: depth-first from the root (id 0) along child_ids; nodes the walk
    cannot reach (a tree without a root) follow in depth order."""
    by_id = {n.unique_id: n for n in nodes}
    seen, order = set(), []
    stack = [ROOT_ID] if ROOT_ID in by_id else []
    while stack:
        i = stack.pop()
        if i in seen or i not in by_id:
            continue
        seen.add(i)
        order.append(by_id[i])
        stack.extend(reversed(list(by_id[i].child_ids)))
    order += sorted((n for n in nodes if n.unique_id not in seen), key=lambda n: n.depth)
    return order


def _keyboard_html(win, scale: float) -> str:
    """The on-screen keyboard (IME window) as a key panel over the app it covers."""
    b = win.bounds_in_screen
    x, y, w, h = b.left / scale, b.top / scale, (b.right - b.left) / scale, (b.bottom - b.top) / scale
    keys = []
    for n in win.tree.nodes:
        label = n.text or n.content_description
        kb = n.bounds_in_screen
        if not label or kb.right - kb.left < 2:
            continue
        keys.append(
            f'<div style="position:absolute;left:{(kb.left - b.left) / scale:.0f}px;top:{(kb.top - b.top) / scale:.0f}px;'
            f"width:{(kb.right - kb.left) / scale - 4:.0f}px;height:{(kb.bottom - kb.top) / scale - 6:.0f}px;"
            f'background:#fff;border-radius:5px;font-size:16px;display:flex;align-items:center;justify-content:center">'
            f"{htmllib.escape(label)}</div>"
        )
    return (
        f'<div data-class="InputMethod" role="group" aria-label="keyboard" style="position:absolute;left:{x:.0f}px;'
        f'top:{y:.0f}px;width:{w:.0f}px;height:{h:.0f}px;background:#d1d5db">' + "".join(keys) + "</div>"
    )


def tree_to_html(forest_bytes: bytes, width: int, height: int, scale: float = 1.0) -> str:
    """Absolutely positioned HTML for what the app shows: its application windows' visible nodes
    (structure and text, no colours yet), and the keyboard when an IME window covers the app."""
    forest = forest_class().FromString(forest_bytes)
    parts = []
    apps = [w for w in forest.windows if w.window_type == TYPE_APPLICATION]
    ime = [w for w in forest.windows if w.window_type == TYPE_INPUT_METHOD]
    for win in sorted(apps, key=lambda w: w.layer):
        for n in _tree_order(win.tree.nodes):
            if not n.is_visible_to_user:
                continue
            b = n.bounds_in_screen
            if b.right - b.left < 2 or b.bottom - b.top < 2:
                continue
            # containers with no own content only add boxes; keep leaves and labelled/interactive nodes
            if n.child_ids and not (n.text or n.content_description or n.is_clickable or n.is_editable):
                continue
            parts.append(_node_html(n, scale))
    top = max((w.layer for w in apps), default=0)
    for win in ime:
        if win.layer >= top:  # only a keyboard above the app covers it
            parts.append(_keyboard_html(win, scale))
    w, h = width / scale, height / scale
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head>'
        f'<body style="margin:0"><div data-root style="position:relative;width:{w:.0f}px;height:{h:.0f}px;'
        f'overflow:hidden;font-family:sans-serif;background:#fff">' + "".join(parts) + "</div></body></html>"
    )


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


def read_episodes(path: str | Path, compression: str | None = "auto") -> Iterator[dict]:
    """Raw episodes from a TFRecord file (GZIP, as AndroidControl ships, or plain)."""
    from tfrecord.reader import tfrecord_loader

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"AndroidControl file not found: {path}")
    if compression == "auto":
        with open(path, "rb") as f:
            compression = "gzip" if f.read(2) == b"\x1f\x8b" else None
    yield from tfrecord_loader(str(path), None, DESCRIPTION, compression_type=compression)


def _as_list(v) -> list:
    if isinstance(v, (bytes, bytearray)):
        return [bytes(v)]
    if hasattr(v, "tolist"):
        v = v.tolist()
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _texts(v) -> list[str]:
    return [x.decode("utf-8") if isinstance(x, (bytes, bytearray)) else str(x) for x in _as_list(v)]


def import_android(
    path: str | Path, scale: float = 1.0, skipped: list[str] | None = None
) -> Iterator[Transition]:
    """Transitions from AndroidControl episodes, screens translated from their accessibility trees.

    With `skipped`, a bad record (an action that does not parse or lies off its screen, an episode
    whose lists do not line up) is reported there, naming its episode and step, and left out;
    without it, the first one raises ValueError."""

    def bad(msg: str) -> None:
        if skipped is None:
            raise ValueError(msg)
        skipped.append(msg)

    for ep in read_episodes(path):
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
            continue
        screens = [
            Screen(
                shots[i],
                html=tree_to_html(trees[i], int(widths[i]), int(heights[i]), scale),
                device_scale_factor=scale,
                app="android",
            )
            for i in range(len(shots))
        ]
        for i, a in enumerate(actions):
            try:
                d = json.loads(a)
                if not isinstance(d, dict):
                    raise ValueError(f"action is not a JSON object: {a[:80]!r}")
                action = convert_action(d, int(widths[i]), int(heights[i]))
                action.check_within(screens[i].size)
            except (ValueError, KeyError, TypeError) as e:
                bad(f"episode {eid} step {i}: {type(e).__name__ if isinstance(e, KeyError) else ''}{e}")
                continue
            app = d.get("app_name") or "android"
            meta = {"source": "android", "step_instruction": steps[i] if i < len(steps) else ""}
            yield Transition(
                screens[i],
                action,
                screens[i + 1],
                goal,
                app if d.get("action_type") == "open_app" else "android",
                eid,
                i,
                meta,
            )


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
