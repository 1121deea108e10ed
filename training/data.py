"""Corpus rows as trl datasets: prompt (with the action drawn on the image) and target HTML."""

from __future__ import annotations

import dataclasses
import json
import random
import re

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
    typing_copies: int = 0,
    seed: int = 0,
) -> list[dict]:
    """One example per transition, in trl's conversational prompt-completion layout.

    The extra columns (next screen, current screen, action, size, and for edit targets the
    current HTML the edit applies to) are what the GRPO reward functions read; SFT ignores them.
    With `target="edit"` the completion is the edit (worldmodel/edit.py) of the current screen;
    a transition without current HTML keeps its document target. Edit prompts name the element
    the action acts on (worldmodel/focus.py), found with `renderer` as the hf backend finds it.

    `typing_copies` (edit targets): each typing transition also comes back that many times with
    other words typed (words of the corpus' own screens), in the action and in the edit alike,
    so a model learns that what lands in the field is what the action types, not a word it has
    seen there before. Such copies are marked `augmented`: their screenshots still show the
    recorded word, so they are for SFT, not for rewards on pixels.
    """
    rows = ds if not limit else ds.select(range(min(limit, len(ds))))
    ts = [from_row(row) for row in rows]
    focus = target == "edit"
    if focus:
        targets = action_targets(renderer, [Query(t.screen, t.action, t.goal) for t in ts])
    else:
        targets = [None] * len(ts)
    words = _words(ts) if typing_copies else []
    rng = random.Random(seed)
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
                "augmented": False,
            }
        )
        typed = t.action.text if t.action.type == "type" else None
        if edit and typed and words:
            for word in rng.sample(words, min(typing_copies, len(words))):
                swapped = _retyped(text, typed, word)
                if swapped is None or word == typed:
                    continue
                action = dataclasses.replace(t.action, text=word)
                messages, image = build_messages(
                    t.screen, action, t.goal, with_html, html_chars, mode=mode, focus=focus, target=n
                )
                out.append(
                    {
                        **out[-1],
                        "prompt": messages,
                        "completion": [{"role": "assistant", "content": [{"type": "text", "text": swapped}]}],
                        "images": [image],
                        "action": action.to_json(),
                        "augmented": True,
                    }
                )
    return out


_WORD = re.compile(r"^[A-Za-z][a-z]{2,9}$")


def _words(ts) -> list[str]:
    """Plain words shown on the corpus' screens, sorted (a stable pool to draw typed words from)."""
    from bs4 import BeautifulSoup

    seen: set[str] = set()
    for t in ts:
        if t.screen.html:
            body = BeautifulSoup(t.screen.html, "html.parser").body
            seen.update(w for w in (body.get_text(" ") if body else "").split() if _WORD.match(w))
    return sorted(seen)


def _retyped(edit: str, typed: str, word: str) -> str | None:
    """`edit` with `word` typed instead of `typed` at the end of the field values it sets; None
    when no field value ends with the typed text."""
    out, hit = [], False
    quoted = json.dumps(typed, ensure_ascii=False)[1:-1]
    for line in edit.splitlines():
        op = line.split(" ", 2)
        if op[0] == "attr" and len(op) > 2 and op[2].startswith("value ") and line.endswith(quoted + '"'):
            line = line[: -len(quoted) - 1] + json.dumps(word, ensure_ascii=False)[1:-1] + '"'
            hit = True
        out.append(line)
    return "\n".join(out) if hit else None


def sft_dataset(examples: list[dict]) -> Dataset:
    return Dataset.from_list([{k: e[k] for k in ("prompt", "completion", "images")} for e in examples])


def grpo_dataset(examples: list[dict]) -> Dataset:
    # GRPO samples completions itself; the target stays only for reference.
    return Dataset.from_list([{k: v for k, v in e.items() if k != "completion"} for e in examples])
