"""A renderable-code GUI world model: predict the next screen as HTML, then render it.

Everything a user needs is importable from here: the typed records, the WorldModel object,
the one-line `predict_next`, the corpus loader and the renderer types. The planning layer
(Lookahead, ImaginedEnv, scorers) and the corpus stage's pipelines (build, record, import,
stats, merge, compact: what `wm corpus` runs), which sit above this one, are re-exported lazily:
their names resolve on first use, so importing `worldmodel` never imports `planning` or
`corpus`, and no module of this package depends on them.
"""

import importlib

from render import Renderer, RenderError, Viewport

from . import offline  # noqa: F401 - imported first: hub kernels off, hub offline, before transformers loads
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

_CORPUS = (
    "build_corpus",
    "compact_corpus",
    "corpus_stats",
    "import_android_corpus",
    "merge_corpora",
    "record_app",
)


def __getattr__(name: str):
    if name in _PLANNING:
        return getattr(importlib.import_module("planning"), name)
    if name in _CORPUS:
        return getattr(importlib.import_module("corpus.pipelines"), name)
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
    *_CORPUS,
]
