"""Compact recorded transitions: every screen's HTML made shorter where its render stays identical.

Training targets pay for every character, and edit targets for every line that churns without
showing anything (render/compact.py says what goes). Recording applies this before it saves, and
`wm corpus compact` applies it to a corpus recorded before; each distinct screen is compacted
once, in batches on one renderer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from render import Renderer
from worldmodel.types import Transition

BATCH = 32


def compact_transitions(
    ts: Sequence[Transition], progress: Callable[[int, int], None] | None = None
) -> list[Transition]:
    """`ts` with each screen's HTML compacted (pixel-identical renders, so html_ssim holds)."""
    screens: dict = {}
    for t in ts:
        for s in (t.screen, t.next_screen):
            if s.html:
                screens.setdefault((s.html, s.viewport()), None)
    keys = list(screens)
    with Renderer(cache_size=0) as r:
        for i in range(0, len(keys), BATCH):
            chunk = keys[i : i + BATCH]
            for k, html in zip(chunk, r.compact_many(chunk)):
                screens[k] = html
            if progress:
                progress(min(i + BATCH, len(keys)), len(keys))

    def small(s):
        return dataclasses.replace(s, html=screens[(s.html, s.viewport())]) if s.html else s

    return [dataclasses.replace(t, screen=small(t.screen), next_screen=small(t.next_screen)) for t in ts]
