"""Retrieval baseline: the next screen of the most similar recorded (screen, action).

It is the CPU default because it needs no weights, and a useful bar: a world
model that cannot beat nearest-neighbour lookup has not learned dynamics.
"""

from __future__ import annotations

import numpy as np

from ..types import ACTION_TYPES, DIRECTIONS, Action, Query, Screen, Transition

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
    def from_transitions(cls, transitions) -> RetrievalBackend:
        """Index recorded transitions: Transition objects, or a datasets split of corpus rows."""
        from ..dataset import iter_transitions

        if hasattr(transitions, "column_names"):  # a datasets.Dataset
            transitions = iter_transitions(transitions, skipped=[])
        keys, htmls = [], []
        for t in transitions:
            if not isinstance(t, Transition):
                raise TypeError(f"retrieval indexes Transitions, got {type(t).__name__}")
            keys.append(features(t.screen, t.action))
            htmls.append(t.next_screen.html or "")
        return cls(np.stack(keys) if keys else np.zeros((0, 1)), htmls)

    @classmethod
    def from_corpus(cls, path=None, split: str = "train") -> RetrievalBackend:
        from ..dataset import CorpusError, load_corpus

        dd = load_corpus(path)
        if split not in dd:
            raise CorpusError(f"corpus {path or 'bundled'} has no {split!r} split (has {', '.join(dd)})")
        return cls.from_transitions(dd[split])

    @classmethod
    def from_spec(cls, spec, split: str = "train", transitions=None) -> RetrievalBackend:
        if transitions is not None:
            return cls.from_transitions(transitions)
        return cls.from_corpus(spec.arg or None, split)

    def complete(self, queries: list[Query]) -> list[str]:
        if not queries:
            return []
        f = np.stack([features(q.screen, q.action) for q in queries])
        # squared distances of every query to every key, as one matrix product
        d = (f**2).sum(1)[:, None] - 2 * f @ self.keys.T + (self.keys**2).sum(1)[None, :]
        return [self.next_html[int(i)] for i in np.argmin(d, axis=1)]
