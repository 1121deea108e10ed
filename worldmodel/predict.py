"""predict_next: the one-line convenience over WorldModel, with a small cache you can clear.

Loading a model can take minutes, so the convenience call keeps the last few WorldModels it
loaded (at most MAX_CACHED, least recently used dropped and closed). Hold a WorldModel yourself
when you want to control its lifetime.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from render import Renderer

from .model import WorldModel, as_world_model
from .spec import ModelSpec, parse_spec
from .types import Action, Prediction, Query, Screen

MAX_CACHED = 2
_cache: OrderedDict[tuple[str, int], WorldModel] = OrderedDict()
_cache_lock = threading.Lock()


def clear_cache() -> None:
    """Close and forget every WorldModel that predict_next loaded."""
    with _cache_lock:
        while _cache:
            _cache.popitem(last=False)[1].close()


def _model(model: str | ModelSpec | WorldModel, renderer: Renderer | None) -> WorldModel:
    if isinstance(model, WorldModel):
        return model
    if not isinstance(model, (str, ModelSpec)):
        return as_world_model(model, renderer)  # a bare backend object: cheap to wrap, not cached
    key = (str(parse_spec(model)), id(renderer) if renderer is not None else 0)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
        wm = WorldModel.load(model, renderer)
        _cache[key] = wm
        while len(_cache) > MAX_CACHED:
            _cache.popitem(last=False)[1].close()
        return wm


def predict_next(
    screen: Screen,
    action: Action,
    goal: str | None = None,
    model: str | ModelSpec | WorldModel = "retrieval",
    renderer: Renderer | None = None,
    mode: str = "document",
) -> Prediction:
    """The world model's next screen after `action` on `screen`, as HTML and as rendered pixels.

    `mode`: "document" (the model writes the whole next screen), "edit" (it writes an edit of
    the current screen's HTML, kept in Prediction.edit) or "auto" (edit when the HTML is known)."""
    return _model(model, renderer).predict(screen, action, goal, mode)


def predict_many(
    queries: list[Query],
    model: str | ModelSpec | WorldModel = "retrieval",
    renderer: Renderer | None = None,
    mode: str = "document",
) -> list[Prediction]:
    """Batch version: one generation call and one concurrent render batch."""
    return _model(model, renderer).predict_many(queries, mode)
