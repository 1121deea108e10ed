"""predict_next: imagine the next screen as HTML, and render it."""

from __future__ import annotations

import time

from render import Renderer, RenderError, default_renderer

from .backends import Backend, Query, load_backend
from .extract import extract_html
from .types import Action, Prediction, Screen

_loaded: dict[str, Backend] = {}


def _backend(model: str | Backend) -> Backend:
    if not isinstance(model, str):
        return model
    if model not in _loaded:
        _loaded[model] = load_backend(model)
    return _loaded[model]


def predict_next(
    screen: Screen,
    action: Action,
    goal: str | None = None,
    model: str | Backend = "retrieval",
    renderer: Renderer | None = None,
) -> Prediction:
    """The world model's next screen after `action` on `screen`, as HTML and as rendered pixels."""
    return predict_many([Query(screen, action, goal)], model, renderer)[0]


def predict_many(
    queries: list[Query], model: str | Backend = "retrieval", renderer: Renderer | None = None
) -> list[Prediction]:
    """Batch version: one generation call and one concurrent render batch."""
    for q in queries:
        if not isinstance(q.screen, Screen):
            raise TypeError(f"screen must be a worldmodel Screen, got {type(q.screen).__name__}")
        if not isinstance(q.action, Action):
            raise TypeError(f"action must be a worldmodel Action, got {type(q.action).__name__}")
    backend = _backend(model)
    renderer = renderer or default_renderer()
    t0 = time.perf_counter()
    completions = backend.complete(queries)
    gen_s = (time.perf_counter() - t0) / max(1, len(queries))
    docs = [extract_html(c) for c in completions]
    t1 = time.perf_counter()
    results = renderer.render_many([(h, q.screen.viewport()) for (h, _), q in zip(docs, queries)])
    render_s = (time.perf_counter() - t1) / max(1, len(queries))
    out = []
    for (html, repaired), c, res in zip(docs, completions, results):
        failed = isinstance(res, RenderError)
        out.append(
            Prediction(
                html=html,
                image=None if failed else _pil(res),
                completion=c,
                render_error=str(res) if failed else None,
                timings={"generate_s": gen_s, "render_s": render_s},
                repaired=repaired,
                boxes=[] if failed else res.boxes,
            )
        )
    return out


def _pil(res):
    from PIL import Image

    return Image.fromarray(res.image)
