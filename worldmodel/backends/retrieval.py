"""Retrieval baseline: the next screen of the most similar recorded (screen, action).

It is the CPU default because it needs no weights, and a useful bar: a world
model that cannot beat nearest-neighbour lookup has not learned dynamics.
"""

from __future__ import annotations

import numpy as np

from ..types import ACTION_TYPES, DIRECTIONS, Action, Screen
from .base import Query

_THUMB = (24, 32)


def features(screen: Screen, action: Action, action_weight: float = 2.0) -> np.ndarray:
    g = np.asarray(screen.image.convert("L").resize(_THUMB), dtype=np.float32).ravel() / 255.0
    g = (g - g.mean()) / (g.std() + 1e-6) / np.sqrt(g.size)
    w, h = screen.size
    a = np.zeros(len(ACTION_TYPES) + len(DIRECTIONS) + 2, np.float32)
    a[ACTION_TYPES.index(action.type)] = 1
    if action.direction:
        a[len(ACTION_TYPES) + DIRECTIONS.index(action.direction)] = 1
    if action.x is not None:
        a[-2:] = (action.x / w, action.y / h)
    return np.concatenate([g, action_weight * a, [w / 1000, h / 1000]]).astype(np.float32)


class RetrievalBackend:
    name = "retrieval"

    def __init__(self, keys: np.ndarray, next_html: list[str]):
        if len(keys) == 0:
            raise ValueError("retrieval index is empty: the corpus split has no transitions")
        self.keys, self.next_html = keys, next_html

    @classmethod
    def from_corpus(cls, path=None, split: str = "train") -> RetrievalBackend:
        from corpus.store import from_row, load_corpus

        ds = load_corpus(path)[split]
        keys, htmls = [], []
        for row in ds:
            t = from_row(row)
            keys.append(features(t.screen, t.action))
            htmls.append(t.next_screen.html or "")
        return cls(np.stack(keys) if keys else np.zeros((0, 1)), htmls)

    def complete(self, queries: list[Query]) -> list[str]:
        out = []
        for q in queries:
            f = features(q.screen, q.action)
            d = ((self.keys - f) ** 2).sum(1)
            out.append(self.next_html[int(np.argmin(d))])
        return out
