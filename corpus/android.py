"""Import AndroidControl-format episodes (TFRecord) as transitions with HTML screens.

Each record is one episode: `goal`, PNG `screenshots`, serialized
`accessibility_trees` (android_env's AndroidAccessibilityForest proto),
`screenshot_widths`/`heights`, JSON `actions` and `step_instructions`. The
tfrecord package reads them without TensorFlow; the proto schema is declared
here so no generated code or protoc is needed.
"""

from __future__ import annotations

import html as htmllib
import json
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from worldmodel.types import Action, Screen, Transition

_T = descriptor_pb2.FieldDescriptorProto
_PKG = "android_env.proto.a11y"


def _msg(name: str, fields: list[tuple[str, int, int, str | None, bool]]) -> descriptor_pb2.DescriptorProto:
    m = descriptor_pb2.DescriptorProto(name=name)
    for fname, number, ftype, type_name, repeated in fields:
        f = m.field.add(name=fname, number=number, type=ftype)
        f.label = _T.LABEL_REPEATED if repeated else _T.LABEL_OPTIONAL
        if type_name:
            f.type_name = f".{_PKG}.{type_name}"
    return m


@lru_cache(maxsize=1)
def forest_class():
    """The AndroidAccessibilityForest message class (field numbers as in android_env's protos)."""
    S, I32, I64, B, M = _T.TYPE_STRING, _T.TYPE_INT32, _T.TYPE_INT64, _T.TYPE_BOOL, _T.TYPE_MESSAGE
    fdp = descriptor_pb2.FileDescriptorProto(name="wm_android_a11y.proto", package=_PKG, syntax="proto3")
    fdp.message_type.extend(
        [
            _msg(
                "ProtoRect",
                [
                    ("left", 1, I32, None, False),
                    ("top", 2, I32, None, False),
                    ("right", 3, I32, None, False),
                    ("bottom", 4, I32, None, False),
                ],
            ),
            _msg(
                "AndroidAccessibilityNodeInfo",
                [
                    ("unique_id", 1, I32, None, False),
                    ("bounds_in_screen", 2, M, "ProtoRect", False),
                    ("class_name", 3, S, None, False),
                    ("content_description", 4, S, None, False),
                    ("hint_text", 5, S, None, False),
                    ("package_name", 6, S, None, False),
                    ("text", 7, S, None, False),
                    ("text_selection_start", 8, I64, None, False),
                    ("text_selection_end", 9, I64, None, False),
                    ("view_id_resource_name", 10, S, None, False),
                    ("window_id", 11, I32, None, False),
                    ("is_checkable", 12, B, None, False),
                    ("is_checked", 13, B, None, False),
                    ("is_clickable", 14, B, None, False),
                    ("is_editable", 15, B, None, False),
                    ("is_enabled", 16, B, None, False),
                    ("is_focusable", 17, B, None, False),
                    ("is_focused", 18, B, None, False),
                    ("is_long_clickable", 19, B, None, False),
                    ("is_password", 20, B, None, False),
                    ("is_scrollable", 21, B, None, False),
                    ("is_selected", 22, B, None, False),
                    ("is_visible_to_user", 23, B, None, False),
                    ("child_ids", 26, I32, None, True),
                    ("depth", 27, I32, None, False),
                ],
            ),
            _msg("AndroidAccessibilityTree", [("nodes", 1, M, "AndroidAccessibilityNodeInfo", True)]),
            _msg(
                "AndroidAccessibilityWindowInfo",
                [
                    ("bounds_in_screen", 1, M, "ProtoRect", False),
                    ("display_id", 2, I32, None, False),
                    ("id", 3, I32, None, False),
                    ("layer", 4, I32, None, False),
                    ("title", 5, S, None, False),
                    ("window_type", 6, I32, None, False),
                    ("is_accessibility_focused", 7, B, None, False),
                    ("is_active", 8, B, None, False),
                    ("is_focused", 9, B, None, False),
                    ("is_in_picture_in_picture_mode", 10, B, None, False),
                    ("tree", 11, M, "AndroidAccessibilityTree", False),
                ],
            ),
            _msg("AndroidAccessibilityForest", [("windows", 1, M, "AndroidAccessibilityWindowInfo", True)]),
        ]
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PKG}.AndroidAccessibilityForest"))


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


def tree_to_html(forest_bytes: bytes, width: int, height: int, scale: float = 1.0) -> str:
    """Absolutely positioned HTML for every visible node: structure and text, no colours yet."""
    forest = forest_class().FromString(forest_bytes)
    parts = []
    windows = sorted(forest.windows, key=lambda w: w.layer)
    for win in windows:
        nodes = sorted(win.tree.nodes, key=lambda n: n.depth)
        for n in nodes:
            if not n.is_visible_to_user:
                continue
            b = n.bounds_in_screen
            if b.right - b.left < 2 or b.bottom - b.top < 2:
                continue
            # containers with no own content only add boxes; keep leaves and labelled/interactive nodes
            if n.child_ids and not (n.text or n.content_description or n.is_clickable or n.is_editable):
                continue
            parts.append(_node_html(n, scale))
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
