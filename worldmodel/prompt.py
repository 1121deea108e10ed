"""The prompt, as Code2World builds it: the action drawn on the screenshot, said in words and JSON."""

from __future__ import annotations

from PIL import Image, ImageDraw

from .edit import edit_view
from .focus import focus_header, window
from .types import DIRECTION_VECTORS, Action, Screen

SYSTEM = (
    "You are a GUI world model. Given the current screen and an action, write the screen that "
    "follows as one self-contained HTML document."
)
EDIT_SYSTEM = (
    "You are a GUI world model. Given the current screen and an action, write what changes on the "
    "screen that follows, as an edit of the current screen."
)
CONTRACT = (
    "Output exactly one HTML document and nothing else: inline CSS only, no scripts, no external "
    'resources. The root is <body id="screen" data-wm-size="{w}x{h}"> (the screen is {w}px by '
    '{h}px) or a <div id="screen"> of exactly that size. Draw '
    'images as <div class="img" data-label="what it shows"> placeholders.'
)
EDIT_CONTRACT = (
    "Output only the edit that turns the current screen into the next, one operation per line "
    "(N is an element's n= number above, L a stylesheet line; quoted values are JSON strings): "
    'text N "..." | attr N NAME "..." | unattr N NAME | class N +NAME -NAME | replace N "<html>" | '
    'remove N | before N "<html>" | after N "<html>" | prepend N "<html>" | append N "<html>" | '
    'css-del L COUNT | css-ins L "rule" | screen "<whole html document>". '
    "Output nothing if the screen does not change."
)
APPLIED_NOTE = (
    "The browser has already carried this action out on the screen shown; write only how the app "
    "reacts to it."
)
# What every hint note says after naming where its step was recorded.
_HINT_USE = (
    "changed its screen like this; its edit, re-addressed onto this screen, may or may not fit here "
    "(write the line `follow` to take all of it as it is):"
)
HINT_NOTE = "A recorded step like this one (the nearest screenshot and action, from another app) " + _HINT_USE
# The same note for hints from this app's own recordings (memory, worldmodel/backends/memory.py),
# on a checkpoint whose card says it was trained so (`own_app_note`); cards before it were shown
# HINT_NOTE, "from another app", for memory's hints too.
MEMORY_HINT_NOTE = "A recorded step of this same app like this one (from its other recordings) " + _HINT_USE
HINT_NOTES = {"retrieval": HINT_NOTE, "memory": MEMORY_HINT_NOTE}
NO_HINT = "(nothing of it carries over to this screen)"
# Shown instead of NO_HINT where the hint's source knew nothing of the step (memory with no
# recording like it), on a checkpoint whose card says it was trained so (`unknown_hint`):
# with one string for both, "write the reaction" and "memory says nothing happens" look alike.
UNKNOWN_HINT = "(none: no recorded step of this app is like this one)"
# A line of an edit that stands for the whole hint: choosing the recorded change costs one line,
# not a copy of it (a model has to copy a long hint token by token, and a small one does not).
FOLLOW = "follow"
MODES = ("document", "edit", "auto")
MAX_HTML_CHARS = 6000
# Longest hint a prompt shows; a longer one is cut at a line, so every line shown is whole.
MAX_HINT_CHARS = 1600


def cut_hint(hint: str, limit: int = MAX_HINT_CHARS) -> str:
    """`hint`'s first lines, as many as fit in `limit` characters."""
    if len(hint) <= limit:
        return hint
    out, n = [], 0
    for line in hint.splitlines():
        n += len(line) + 1
        if n > limit:
            break
        out.append(line)
    return "\n".join(out)


def expand_follow(edit: str, hint: str | None) -> str:
    """`edit` with each line that is just FOLLOW replaced by the hint's lines (by nothing when
    there is no hint): the edit that is carried out."""
    if FOLLOW not in edit:
        return edit
    lines = [(hint or "") if line.strip() == FOLLOW else line for line in edit.splitlines()]
    return "\n".join(line for line in lines if line)


def draw_action(image: Image.Image, action: Action) -> Image.Image:
    """Mark the action on a copy of the screenshot: a red circle for taps, an arrow for swipes.

    The arrow starts where the finger lands and points the way it moves, so a
    scroll *down* (content comes up from below) is an arrow pointing *up*.
    """
    img = image.convert("RGBA")
    layer = Image.new("RGBA", img.size, (0, 0, 0, 0))
    d = ImageDraw.Draw(layer)
    w, h = img.size
    r = max(6, round(min(w, h) * 0.04))
    red = (255, 0, 0, 140)
    if action.type in ("tap", "long_press", "type") and action.x is not None:
        x, y = action.x, action.y
        d.ellipse([x - r, y - r, x + r, y + r], fill=red)
        if action.type == "long_press":
            d.ellipse(
                [x - 2 * r, y - 2 * r, x + 2 * r, y + 2 * r], outline=(255, 0, 0, 200), width=max(2, r // 3)
            )
    elif action.type in ("swipe", "scroll"):
        x0 = action.x if action.x is not None else w / 2
        y0 = action.y if action.y is not None else h / 2
        dx, dy = DIRECTION_VECTORS[action.finger_direction]
        length = 0.25 * (h if dy else w)
        x1, y1 = x0 + dx * length, y0 + dy * length
        d.line([x0, y0, x1, y1], fill=(255, 0, 0, 200), width=max(3, r // 2))
        hx, hy = -dy, dx  # perpendicular, for the arrow head
        head = [(x1 + dx * r, y1 + dy * r), (x1 + hx * r, y1 + hy * r), (x1 - hx * r, y1 - hy * r)]
        d.polygon(head, fill=(255, 0, 0, 220))
        d.ellipse([x0 - r / 2, y0 - r / 2, x0 + r / 2, y0 + r / 2], fill=red)
    return Image.alpha_composite(img, layer).convert("RGB")


def prompt_text(
    screen: Screen,
    action: Action,
    goal: str | None = None,
    with_html: bool = True,
    html_chars: int = MAX_HTML_CHARS,
    mode: str = "document",
    applied: bool = False,
    focus: bool = False,
    target: int | None = None,
    hint: str | None = None,
    hint_known: bool = True,
    hint_source: str = "retrieval",
) -> str:
    """The user turn's text. In "edit" mode the current HTML (numbered, always included) is what
    the model edits and the contract asks for an edit instead of a document. With `focus` (edit
    mode), a line names the element the action acts on (`target`, worldmodel/focus.py) and the
    numbered HTML shown is the part that starts just before it. With `hint` (edit mode; "" when
    nothing carried over), the prompt also shows a recorded transition's edit re-addressed onto
    this screen (worldmodel/transplant.py): the model learns when to follow it; `hint_known`
    False says the hint's source knew nothing of this step (UNKNOWN_HINT); `hint_source` picks
    the note that says where the hint comes from (HINT_NOTES)."""
    w, h = screen.viewport().width, screen.viewport().height
    lines = [
        f"Screen size: {w}x{h} CSS px.",
        f"Action: {action.describe()}",
        f"Action JSON: {action.to_json()}",
        f"Goal: {goal or 'none given'}",
    ]
    edit = mode == "edit" and bool(screen.html)
    if edit and focus:
        lines.append(focus_header(screen.html, target))
    if (with_html or edit) and screen.html:
        html = edit_view(screen.html) if edit else screen.html
        if edit and focus:
            html = window(html, target, html_chars)
        else:
            html = html if len(html) <= html_chars else html[:html_chars] + "<!-- truncated -->"
        lines.append(
            (
                "Current screen (body elements numbered n=, then stylesheet lines):\n"
                if edit
                else "Current screen HTML:\n"
            )
            + html
        )
    if edit and hint is not None:
        lines.append(
            HINT_NOTES[hint_source] + "\n" + (cut_hint(hint) or (NO_HINT if hint_known else UNKNOWN_HINT))
        )
    if applied:
        lines.append(APPLIED_NOTE)
    lines.append(EDIT_CONTRACT if edit else CONTRACT.format(w=w, h=h))
    return "\n".join(lines)


def build_messages(
    screen: Screen,
    action: Action,
    goal: str | None = None,
    with_html: bool = True,
    html_chars: int = MAX_HTML_CHARS,
    mode: str = "document",
    applied: bool = False,
    focus: bool = False,
    target: int | None = None,
    hint: str | None = None,
    hint_known: bool = True,
    hint_source: str = "retrieval",
    drawn: Image.Image | None = None,
):
    """Chat messages (with one image slot) and the image that fills it: `drawn` where the caller
    has already drawn this action's mark on this screen (`draw_action`), else drawn here."""
    image = draw_action(screen.image, action) if drawn is None else drawn
    edit = mode == "edit" and bool(screen.html)
    messages = [
        {"role": "system", "content": [{"type": "text", "text": EDIT_SYSTEM if edit else SYSTEM}]},
        {
            "role": "user",
            "content": [
                {"type": "image"},
                {
                    "type": "text",
                    "text": prompt_text(
                        screen,
                        action,
                        goal,
                        with_html,
                        html_chars,
                        mode,
                        applied,
                        focus,
                        target,
                        hint,
                        hint_known,
                        hint_source,
                    ),
                },
            ],
        },
    ]
    return messages, image
