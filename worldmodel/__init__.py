"""A renderable-code GUI world model: predict the next screen as HTML, then render it."""

from .types import ACTION_TYPES, Action, Prediction, Screen, Transition


def predict_next(*args, **kwargs):
    """See worldmodel.predict.predict_next (imported lazily: it starts the renderer)."""
    from .predict import predict_next as _p

    return _p(*args, **kwargs)


__all__ = ["ACTION_TYPES", "Action", "Prediction", "Screen", "Transition", "predict_next"]
