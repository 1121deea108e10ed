"""Corpus rows as trl datasets: prompt (with the action drawn on the image) and target HTML."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from dataclasses import dataclass
from typing import NamedTuple

from datasets import Dataset

from worldmodel.card import AFTER, HINT_SOURCES
from worldmodel.dataset import from_row
from worldmodel.edit import ELEMENT_OPS, apply, diff, try_apply
from worldmodel.focus import action_targets
from worldmodel.prompt import FOLLOW, MAX_HTML_CHARS, build_messages, draw_action
from worldmodel.score import text_score
from worldmodel.transplant import reaction
from worldmodel.types import Completion, Query


def to_examples(
    ds,
    with_html: bool = True,
    html_chars: int = MAX_HTML_CHARS,
    limit: int = 0,
    target: str = "document",
    renderer=None,
    typing_copies: int = 0,
    seed: int = 0,
    shift_copies: int = 0,
    hints: bool = False,
    after: str = "",
    hint_source: str = "retrieval",
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
    seen there before.

    `shift_copies` (edit targets): each example also comes back that many times with 1 to
    MAX_SHIFT hidden elements first in the body of both screens, so every element number in the
    prompt and in the edit moves by as many. A model then learns to read the number of what it
    edits off the screen (the action target line, the n= attributes) instead of remembering the
    numbers a training app happens to use.

    Typing copies (and their shifted copies) are marked `augmented`: their screenshots still show
    the recorded word, so they are for SFT, not for rewards on pixels. A shifted copy of a recorded
    transition draws exactly what was recorded (hidden elements draw nothing), so GRPO samples on
    it too: there a remembered number is a wrong one, and the rewards say so.

    `hints` (edit targets): each prompt also shows the retrieval transplant of the nearest
    transition of *another* app (`app_hints`), as a hinted checkpoint sees at prediction time
    the nearest training transition of an app it has not seen; copies carry it moved and retyped
    as their edit is. Where carrying the hint out comes nearer the real next screen than keeping
    the screen does (`follows`), the target is the one line FOLLOW instead of the edit: the model
    learns when the recorded change fits, and does not have to copy it out.
    `hint_source="memory"`: the hint is instead what same-app memory answers from the app's
    other recorded episodes (`memory_hints`), as `sim+memory+MODEL` hands it memory's answer on
    a new visit to an app it knows: the model learns when memory is right (`follow`), when the
    screen before memory is (no change), and what to write where memory knows nothing. Each
    transition memory answered also comes back without a hint, as on an app memory has no
    recordings of. Where memory knew nothing the prompt says so (UNKNOWN_HINT), apart from an
    answer of no change: the checkpoint's card records it (`unknown_hint`).

    `after="sim"` (edit targets): the current screen of each example is what the browser's own
    physics made of the recorded screen (the `sim` backend: the field typed into, the box
    checked, the page scrolled), its render shown, and the target is the edit from there to the
    real next screen: the app's reaction only, as `sim+MODEL` asks of MODEL. An app the model has
    never seen still gets the browser's part right, and where the model is unsure, writing
    nothing keeps it. Typing copies are left out there (each would need its own sim run).
    """
    opts = ExampleOptions(
        with_html, html_chars, target, typing_copies, seed, shift_copies, hints, after, hint_source
    )
    rows = ds if not limit else ds.select(range(min(limit, len(ds))))
    return examples_of([from_row(row) for row in rows], opts, renderer)


@dataclass(frozen=True)
class ExampleOptions:
    """How transitions become examples: `to_examples`' options, as one value."""

    with_html: bool = True
    html_chars: int = MAX_HTML_CHARS
    target: str = "document"
    typing_copies: int = 0
    seed: int = 0
    shift_copies: int = 0
    hints: bool = False
    after: str = ""
    hint_source: str = "retrieval"

    def __post_init__(self):
        if self.after not in AFTER:
            raise ValueError(f"after {self.after!r} is not one of {', '.join(repr(a) for a in AFTER)}")
        if self.hint_source not in HINT_SOURCES:
            raise ValueError(f"hint_source {self.hint_source!r} is not one of {', '.join(HINT_SOURCES)}")


class _Variant(NamedTuple):
    """One example's own part: the action, the target text, the next HTML, whether it is an
    augmented copy, the hint its prompt shows, and whether the hint's source knew the step."""

    action: object
    text: str
    next_html: str
    augmented: bool
    hint: str | None
    known: bool = True


def examples_of(ts: list, opts: ExampleOptions, renderer=None) -> list[dict]:
    """The examples of transitions `ts` (see `to_examples`): what every transition's examples
    need found first (the sim's screens, the action targets, the word pool, the hints), then
    each transition's examples in turn."""
    focus = opts.target == "edit"
    applied = [False] * len(ts)
    recorded = ts
    if focus and opts.after == "sim":
        ts, applied = simulated(ts, renderer)
        opts = dataclasses.replace(opts, typing_copies=0)
    queries = [Query(t.screen, t.action, t.goal, applied=a) for t, a in zip(ts, applied)]
    targets = action_targets(renderer, queries) if focus else [None] * len(ts)
    words = _words(ts) if opts.typing_copies else []
    hinted, known = [None] * len(ts), [True] * len(ts)
    if opts.hints and focus and opts.hint_source == "memory":
        got = memory_hints(recorded, ts, renderer, applied)
        hinted, known = [c.text for c in got], [c.known for c in got]
    elif opts.hints and focus:
        hinted = app_hints(ts, renderer, applied)
    rng = random.Random(opts.seed)
    out: list[dict] = []
    for t, n, hint, k, done in zip(ts, targets, hinted, known, applied):
        # one image for all of a transition's examples: the mark is drawn from the action's type,
        # place and direction, which its copies share (a typing copy changes only the words).
        # Drawn once per example, the bundled corpus' images took 974 MB against 213 MB shared,
        # and building its examples peaked at 2.98 GB against 1.96 (benchmarks/example_memory.py).
        drawn = draw_action(t.screen.image, t.action)
        out += _transition_examples(t, n, hint, done, opts, words, rng, k, drawn)
        if opts.hint_source == "memory" and hint:
            # and as where memory knows nothing (an app never recorded, a state never visited):
            # without these the model learns to follow, and no longer writes the reactions itself
            out += _transition_examples(t, n, "", done, opts, words, rng, False, drawn)
    return out


def _transition_examples(
    t, n, hint, done: bool, opts: ExampleOptions, words, rng, known: bool, drawn
) -> list[dict]:
    """One transition's examples: the recorded one, its typing copies, and each one's shifted
    copies (`rng` drawn in that order); `known` False where the hint's source knew nothing;
    `drawn` the action's mark on its screen, shared by them all."""
    cur, nxt = t.screen.html or "", t.next_screen.html or ""
    edit = opts.target == "edit" and bool(cur)
    recorded = diff(cur, nxt) if edit else nxt  # a document target where there is no HTML to edit
    if edit and done:  # after the sim: the app's reaction, not the two runs' hover and focus
        recorded = reaction(recorded, cur)
    variants = [_Variant(t.action, recorded, nxt, False, hint, known)]
    if edit:
        variants += [
            v._replace(known=known)
            for v in _typing_copies(t, cur, recorded, hint, words, opts.typing_copies, rng)
        ]
    pngs = (t.screen.png(), t.next_screen.png())  # every copy shows the recorded screenshots
    out = []
    for v in variants:
        if edit and v.hint and follows(cur, v.hint, v.text, v.next_html):
            v = v._replace(text=FOLLOW)
        out.append(_example(t, pngs, cur, n, v, done, opts, drawn))
        if not edit:
            continue
        for _ in range(opts.shift_copies):
            k = rng.randint(1, MAX_SHIFT)
            moved = _Variant(
                v.action,
                _shift_edit(v.text, k),
                _hidden_first(v.next_html, k),
                v.augmented,
                v.hint and _shift_edit(v.hint, k),
                v.known,
            )
            m = n + k if n else n  # the body (0) keeps its number
            out.append(_example(t, pngs, _hidden_first(cur, k), m, moved, done, opts, drawn))
    return out


def _typing_copies(t, cur: str, recorded: str, hint, words, copies: int, rng) -> list[_Variant]:
    """A typing transition's copies with other words typed, in the action, the edit and the hint."""
    typed = t.action.text if t.action.type == "type" else None
    if not (typed and words):
        return []
    out = []
    for word in rng.sample(words, min(copies, len(words))):
        swapped = _retyped(recorded, typed, word)
        if word != typed and swapped is not None:
            action = dataclasses.replace(t.action, text=word)
            retyped_hint = hint and (_retyped(hint, typed, word) or hint)
            out.append(_Variant(action, swapped, apply(cur, swapped), True, retyped_hint))
    return out


def _example(t, pngs, cur: str, n, v: _Variant, done: bool, opts: ExampleOptions, drawn) -> dict:
    """One example in trl's conversational layout, with the columns the GRPO rewards read."""
    edit = opts.target == "edit" and bool(cur)
    screen = dataclasses.replace(t.screen, html=cur) if cur != t.screen.html else t.screen
    messages, image = build_messages(
        screen,
        v.action,
        t.goal,
        opts.with_html,
        opts.html_chars,
        "edit" if edit else "document",
        applied=done,
        focus=opts.target == "edit",
        target=n,
        hint=v.hint if edit else None,
        hint_known=v.known,
        hint_source=opts.hint_source,
        drawn=drawn,
    )
    vp = t.screen.viewport()
    return {
        "prompt": messages,
        "completion": [{"role": "assistant", "content": [{"type": "text", "text": v.text}]}],
        "edits_html": cur if edit else "",
        "images": [image],
        "next_screen": pngs[1],
        "next_html": v.next_html,
        "screen_html": cur,  # what keeping the screen says (R_text's baseline)
        "screen": pngs[0],
        "action": v.action.to_json(),
        "width": vp.width,
        "height": vp.height,
        "scale": vp.device_scale_factor,
        "augmented": v.augmented,
        "hint": (v.hint or "") if edit else "",  # what a FOLLOW line stands for, in the rewards
    }


def follows(cur: str, hint: str, edit: str, nxt: str) -> bool:
    """Whether carrying `hint` out on `cur` does what `edit` (the true edit, to `nxt`) does, or
    at least says more of what `nxt` says (text F1, as `wm eval` scores it) than `cur` does;
    where `nxt` was not recorded, only doing what `edit` does counts."""
    got, err = try_apply(cur, hint)
    if err is not None:
        return False
    return got == try_apply(cur, edit)[0] or (text_score(got, nxt) or 0.0) > (text_score(cur, nxt) or 0.0)


def simulated(ts, renderer) -> tuple[list, list[bool]]:
    """Each transition with its current screen replaced by what the `sim` backend (the browser's
    own physics, worldmodel/backends/sim.py) made of it, as `sim+MODEL` hands MODEL its screen;
    and per transition whether that worked (where the sim's screen does not render, the recorded
    screen stays and the example is an ordinary one)."""
    from worldmodel.model import WorldModel

    preds = WorldModel.load("sim", renderer=renderer).predict_many(
        [Query(t.screen, t.action, t.goal) for t in ts], "document"
    )
    out, done = [], []
    for t, p in zip(ts, preds):
        ok = p.ok and bool(t.screen.html)
        out.append(dataclasses.replace(t, screen=p.as_screen(t.screen)) if ok else t)
        done.append(ok)
    return out, done


def app_hints(ts, renderer, applied: list[bool] | None = None) -> list[str]:
    """Per transition, the edit of the nearest transition of another app, transplanted onto its
    screen ("" when nothing carries over). Other apps only: a hinted model predicts on apps it has
    not seen, whose nearest recorded transitions are all another app's, and it must learn from
    hints that are as often wrong as there (leave-one-app-out)."""
    from worldmodel.backends.retrieval import RetrievalBackend

    out = [""] * len(ts)
    done = applied or [False] * len(ts)
    for app in sorted({t.app for t in ts}):
        others = [t for t in ts if t.app != app]
        if not others:
            continue
        index = RetrievalBackend.from_transitions(others)
        index.use_renderer(renderer)
        mine = [i for i, t in enumerate(ts) if t.app == app]
        got = index.complete_edits(
            [Query(ts[i].screen, ts[i].action, ts[i].goal, applied=done[i]) for i in mine]
        )
        for i, hint in zip(mine, got):
            out[i] = hint.text
    return out


def memory_hints(recorded, ts, renderer, applied: list[bool] | None = None) -> list[Completion]:
    """Per transition, what same-app memory (worldmodel/backends/memory.py) answers for it from
    the app's *other* recorded episodes (leave-one-episode-out), as an edit of its current screen
    in `ts` (after the sim: the sim's screen, memory looking up the `recorded` one); an empty
    one, not `known`, where memory knows nothing. So a model learns from memory's answers as
    right and as wrong as they are on a new visit to an app it has recordings of."""
    from worldmodel.backends.memory import MemoryBackend

    out = [Completion("", known=False)] * len(ts)
    done = applied or [False] * len(ts)
    usable = [t for t in recorded if t.screen.html and t.next_screen.html]
    if not usable:
        return out
    index = MemoryBackend(usable)
    index.use_renderer(renderer)
    for mine in index.each_episode_left_out(recorded):
        got = index.complete_edits(
            [
                Query(
                    ts[i].screen,
                    ts[i].action,
                    ts[i].goal,
                    applied=done[i],
                    origin=recorded[i].screen if done[i] else None,
                )
                for i in mine
            ]
        )
        for i, hint in zip(mine, got):
            out[i] = hint
    return out


# Most hidden elements a shifted copy puts first in the body.
MAX_SHIFT = 8
_BODY = re.compile(r"<body\b[^>]*>", re.I)


def _hidden_first(html: str, k: int) -> str:
    """`html` with k hidden, empty elements first in its body: nothing drawn changes, every body
    element's number grows by k. Unchanged when there is no body tag. (A capture's body holds its
    children directly, so a rule that counts them from the start, `body > :first-child` or an
    `:nth-child`, counts these too: rare, and only these augmented copies are affected.)"""
    m = _BODY.search(html)
    return html if m is None else html[: m.end()] + "<span hidden></span>" * k + html[m.end() :]


_ELEMENT_OP = re.compile(rf"^({'|'.join(ELEMENT_OPS)}) (\d+)", re.M)


def _shift_edit(edit: str, k: int) -> str:
    """`edit` addressed to the same screen with k elements first in its body: every element
    number but the body's (0) grows by k; stylesheet lines and whole screens stay."""
    return _ELEMENT_OP.sub(lambda m: f"{m[1]} {int(m[2]) + k if int(m[2]) else 0}", edit)


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
