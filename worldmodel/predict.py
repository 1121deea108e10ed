"""predict_next: the one-line convenience over WorldModel, with a small cache you can clear.

Loading a model can take minutes, so the convenience call keeps the last few WorldModels it
loaded (at most MAX_CACHED, least recently used dropped and closed). Hold a WorldModel yourself
when you want to control its lifetime.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from render import Renderer

from .backends.base import Backend
from .model import WorldModel
from .spec import DEFAULT_MODEL, ModelSpec, parse_spec
from .types import Action, Prediction, Query, Screen

MAX_CACHED = 2
_cache: OrderedDict[tuple[str, int], WorldModel] = OrderedDict()
_cache_lock = threading.Lock()


def clear_cache() -> None:
    """Close and forget every WorldModel that predict_next loaded."""
    with _cache_lock:
        while _cache:
            _cache.popitem(last=False)[1].close()


def _model(model: str | ModelSpec | Backend | WorldModel, renderer: Renderer | None) -> WorldModel:
    if not isinstance(model, (str, ModelSpec)):
        return WorldModel.load(model, renderer)  # a WorldModel as it is, a Backend wrapped: not cached
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
    model: str | ModelSpec | Backend | WorldModel = DEFAULT_MODEL,
    renderer: Renderer | None = None,
    mode: str | None = None,
    history: Sequence[Screen] = (),
) -> Prediction:
    """The world model's next screen after `action` on `screen`, as HTML and as rendered pixels.

    `history`: the screens the episode showed before `screen`, oldest first (a model with a
    revisit head may answer with one of them; the others ignore it).

    `mode`: "document" (the model writes the whole next screen), "edit" (it writes an edit of
    the current screen's HTML, kept in Prediction.edit), "auto" (edit when the HTML is known) or
    None: what the model was trained to write (a checkpoint's card; otherwise "document").

    `model` defaults to `worldmodel.spec.DEFAULT_MODEL` (`sim+memory` over the bundled corpus):
    the browser's physics on the screen's HTML, then the same app's recorded reaction where one
    is known; a screen without HTML comes back as it is."""
    return _model(model, renderer).predict(screen, action, goal, mode, history)


def predict_many(
    queries: list[Query],
    model: str | ModelSpec | Backend | WorldModel = DEFAULT_MODEL,
    renderer: Renderer | None = None,
    mode: str | None = None,
) -> list[Prediction]:
    """Batch version: one generation call and one concurrent render batch."""
    return _model(model, renderer).predict_many(queries, mode)
