"""Compact recorded transitions: every screen's HTML made shorter where its render stays identical.

Training targets pay for every character, and edit targets for every line that churns without
showing anything (render/compact.py says what goes). Recording applies this before it saves, and
`wm corpus compact` applies it to a corpus recorded before; each distinct screen is compacted
once, in batches on one renderer.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from render import Renderer
from worldmodel.types import Transition

BATCH = 32


def compact_transitions(
    ts: Sequence[Transition],
    progress: Callable[[int, int], None] | None = None,
    renderer: Renderer | None = None,
) -> list[Transition]:
    """`ts` with each screen's HTML compacted (pixel-identical renders, so html_ssim holds), on
    `renderer` (one without a render cache) or a fresh one."""
    screens: dict = {}
    for t in ts:
        for s in (t.screen, t.next_screen):
            if s.html:
                screens.setdefault((s.html, s.viewport()), None)
    keys = list(screens)
    with contextlib.nullcontext(renderer) if renderer else Renderer(cache_size=0) as r:
        for i in range(0, len(keys), BATCH):
            chunk = keys[i : i + BATCH]
            for k, html in zip(chunk, r.compact_many(chunk)):
                screens[k] = html
            if progress:
                progress(min(i + BATCH, len(keys)), len(keys))

    def small(s):
        return dataclasses.replace(s, html=screens[(s.html, s.viewport())]) if s.html else s

    return [dataclasses.replace(t, screen=small(t.screen), next_screen=small(t.next_screen)) for t in ts]


def compact_rows(units, work, path) -> Iterator[dict]:
    """Corpus rows of the corpus at `path`, compacted, for `units` ((split, first row, end)
    each); rows that cannot be read are named in `work`'s reports and left out."""
    from worldmodel.dataset import ID_TEST, SPLIT_KEY, iter_transitions, load_corpus, to_row

    from .parallel import report_unit

    dd = load_corpus(path)
    with Renderer(cache_size=0) as r:
        for split, a, b in units:
            skipped: list[str] = []
            ts = list(iter_transitions(dd[split].select(range(a, b)), skipped))
            for t in ts:
                if split == ID_TEST:
                    t.meta[SPLIT_KEY] = ID_TEST
            report = {"kept": len(ts), "dropped": {}, "skipped": skipped, "screens": 0}
            report_unit(Path(work), f"{split}-{a:08d}", report)
            yield from (to_row(t) for t in compact_transitions(ts, renderer=r))
