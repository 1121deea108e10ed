"""How alike two (screen, action) pairs are: the key retrieval and memory look up recordings by.

A key is the screen's small grey thumbnail (normalised, so brightness and contrast do not count),
the action's type, direction and point (as a share of the screen), and the screen's size; the
nearest recording is the one whose key is closest in squared distance.
"""

from __future__ import annotations

import numpy as np

from ..types import ACTION_TYPES, DIRECTIONS, Action, Screen

THUMB = (24, 32)


def features(screen: Screen, action: Action, action_weight: float = 2.0) -> np.ndarray:
    """The (screen, action) key: comparable by squared distance across screens of any size."""
    g = np.asarray(screen.image.convert("L").resize(THUMB), dtype=np.float32).ravel() / 255.0
    g = (g - g.mean()) / (g.std() + 1e-6) / np.sqrt(g.size)
    w, h = screen.size
    a = np.zeros(len(ACTION_TYPES) + len(DIRECTIONS) + 2, np.float32)
    a[ACTION_TYPES.index(action.type)] = 1
    if action.direction:
        a[len(ACTION_TYPES) + DIRECTIONS.index(action.direction)] = 1
    if action.x is not None:
        a[-2:] = (action.x / w, action.y / h)
    return np.concatenate([g, action_weight * a, [w / 1000, h / 1000]]).astype(np.float32)
