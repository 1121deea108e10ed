"""A renderable-code GUI world model: predict the next screen as HTML, then render it.

Everything a user needs is importable from here: the typed records, the WorldModel object,
the one-line `predict_next`, the corpus loader and the renderer types. The planning layer
(Lookahead, ImaginedEnv, scorers), which sits above this one, is re-exported lazily: its names
resolve on first use, so importing `worldmodel` never imports `planning`, and no module of this
package depends on it.
"""

import importlib

from render import Renderer, RenderError, Viewport

from .backends.base import Backend, BackendContractError, check_backend
from .card import CardError, CheckpointCard
from .dataset import CorpusError, iter_transitions, load_corpus
from .model import WorldModel
from .predict import clear_cache, predict_many, predict_next
from .spec import ModelSpec, SpecError, parse_spec
from .types import ACTION_TYPES, Action, Completion, Prediction, Query, Screen, Transition

_PLANNING = (
    "Candidate",
    "GoalTextScorer",
    "ImaginedEnv",
    "LearnedReward",
    "Lookahead",
    "MiniWoBAgent",
    "ProgressScorer",
    "Ranked",
    "ValueScorer",
    "VLMJudgeScorer",
    "WeightedScorer",
    "as_agent",
    "recorder_policy",
)


def __getattr__(name: str):
    if name in _PLANNING:
        return getattr(importlib.import_module("planning"), name)
    raise AttributeError(f"module 'worldmodel' has no attribute {name!r}")


__all__ = [
    "ACTION_TYPES",
    "Action",
    "Backend",
    "BackendContractError",
    "CardError",
    "CheckpointCard",
    "Completion",
    "CorpusError",
    "ModelSpec",
    "Prediction",
    "Query",
    "RenderError",
    "Renderer",
    "Screen",
    "SpecError",
    "Transition",
    "Viewport",
    "WorldModel",
    "check_backend",
    "clear_cache",
    "iter_transitions",
    "load_corpus",
    "parse_spec",
    "predict_many",
    "predict_next",
    *_PLANNING,
]
