"""Corpus rows as trl datasets: prompt (with the action drawn on the image) and target HTML."""

from __future__ import annotations

from datasets import Dataset

from worldmodel.dataset import from_row
from worldmodel.edit import diff
from worldmodel.focus import action_targets
from worldmodel.prompt import MAX_HTML_CHARS, build_messages
from worldmodel.types import Query


def to_examples(
    ds,
    with_html: bool = True,
    html_chars: int = MAX_HTML_CHARS,
    limit: int = 0,
    target: str = "document",
    renderer=None,
) -> list[dict]:
    """One example per transition, in trl's conversational prompt-completion layout.

    The extra columns (next screen, current screen, action, size, and for edit targets the
    current HTML the edit applies to) are what the GRPO reward functions read; SFT ignores them.
    With `target="edit"` the completion is the edit (worldmodel/edit.py) of the current screen;
    a transition without current HTML keeps its document target. Edit prompts name the element
    the action acts on (worldmodel/focus.py), found with `renderer` as the hf backend finds it.
    """
    rows = ds if not limit else ds.select(range(min(limit, len(ds))))
    ts = [from_row(row) for row in rows]
    focus = target == "edit"
    if focus:
        targets = action_targets(renderer, [Query(t.screen, t.action, t.goal) for t in ts])
    else:
        targets = [None] * len(ts)
    out = []
    for t, n in zip(ts, targets):
        edit = target == "edit" and bool(t.screen.html)
        mode = "edit" if edit else "document"
        messages, image = build_messages(
            t.screen, t.action, t.goal, with_html, html_chars, mode=mode, focus=focus, target=n
        )
        vp = t.screen.viewport()
        text = diff(t.screen.html, t.next_screen.html or "") if edit else (t.next_screen.html or "")
        out.append(
            {
                "prompt": messages,
                "completion": [{"role": "assistant", "content": [{"type": "text", "text": text}]}],
                "edits_html": t.screen.html if edit else "",
                "images": [image],
                "next_screen": t.next_screen.png(),
                "screen": t.screen.png(),
                "action": t.action.to_json(),
                "width": vp.width,
                "height": vp.height,
                "scale": vp.device_scale_factor,
            }
        )
    return out


def sft_dataset(examples: list[dict]) -> Dataset:
    return Dataset.from_list([{k: e[k] for k in ("prompt", "completion", "images")} for e in examples])


def grpo_dataset(examples: list[dict]) -> Dataset:
    # GRPO samples completions itself; the target stays only for reference.
    return Dataset.from_list([{k: v for k, v in e.items() if k != "completion"} for e in examples])
