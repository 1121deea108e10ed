"""The model-spec grammar, parsed once into a typed spec: how every CLI flag and call names a world model.

    copy                      nothing changes (the baseline to beat)
    sim                       the browser's own physics on the current HTML (no scripts, no app)
    retrieval[:CORPUS]        next screen of the nearest recorded (screen, action)
    memory[:CORPUS]           the same app's recorded reaction to this screen and action, or none
    hf:PATH | PATH            a local transformers VLM checkpoint folder (with its revisit head, if it has one)
    revisit:PATH              a learned revisit head: the episode's earlier screen that is the next one, or none
    openai:URL#MODEL | URL#MODEL   an OpenAI-compatible chat endpoint
    A+B                       composition: B receives A's prediction as the screen to edit

Parsing checks the grammar only; whether a path holds a checkpoint is checked when it loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .backends.registry import BACKENDS
from .types import BackendSpec

# the backend kinds a spec can name: the backend registry's (worldmodel/backends/registry.py)
KINDS = tuple(BACKENDS)
# What runs when a caller names no model (predict_next, predict_many, WorldModel.load(), wm predict):
# the browser's own physics, then the same app's recorded reaction where one is known. It is never
# below the sim alone on apps it never saw (memory then keeps the sim's screen, or gives another
# app's recording of a screen as alike as the same program) and well above it on apps it has
# recordings of; `retrieval`, the default before, hands an unseen app another app's
# screen (benchmarks/RESULTS.md, "The default model").
DEFAULT_MODEL = "sim+memory"
GRAMMAR = "copy, sim, retrieval[:CORPUS], memory[:CORPUS], hf:PATH, a checkpoint folder, revisit:PATH, or openai:URL#MODEL (A+B composes, e.g. sim+retrieval)"


class SpecError(ValueError):
    """A model spec that does not parse; the message quotes it and shows the grammar."""


@dataclass(frozen=True)
class ModelSpec:
    """One or more backends; each after the first edits what the one before predicted."""

    stages: tuple[BackendSpec, ...]

    @property
    def first(self) -> BackendSpec:
        return self.stages[0]

    def __str__(self) -> str:
        return "+".join(str(s) for s in self.stages)

    def with_corpus(self, corpus: str) -> ModelSpec:
        """This spec with every bare `retrieval` or `memory` stage looking up `corpus`."""
        return ModelSpec(
            tuple(
                BackendSpec(s.kind, corpus) if s.kind in ("retrieval", "memory") and not s.arg else s
                for s in self.stages
            )
        )


def _one(text: str, whole: str) -> BackendSpec:
    t = text.strip()
    if not t:
        raise SpecError(f"model {whole!r}: empty part; use {GRAMMAR}")
    if t.startswith(("http://", "https://")):
        t = "openai:" + t
    kind, sep, arg = t.partition(":")
    if kind in ("copy", "sim") and not sep:
        return BackendSpec(kind)
    if kind in ("retrieval", "memory"):
        return BackendSpec(kind, arg)
    if kind == "openai":
        url, _, model = arg.partition("#")
        if not url.startswith(("http://", "https://")):
            raise SpecError(f"model {whole!r}: openai needs an http(s):// base URL, got {url!r}")
        return BackendSpec("openai", url, model or "default")
    if kind == "revisit":
        if not arg:
            raise SpecError(f"model {whole!r}: revisit needs a path, e.g. revisit:runs/small/final")
        return BackendSpec("revisit", arg)
    if kind == "hf":
        if not arg:
            raise SpecError(f"model {whole!r}: hf needs a path, e.g. hf:runs/tiny/final")
        return BackendSpec("hf", arg)
    if Path(t).is_dir():
        return BackendSpec("hf", t)
    raise SpecError(f"unknown model {whole!r}: use {GRAMMAR}")


def parse_spec(spec: str | ModelSpec) -> ModelSpec:
    """`spec` as a ModelSpec; raises SpecError naming what is wrong."""
    if isinstance(spec, ModelSpec):
        return spec
    if not isinstance(spec, str):
        raise SpecError(f"a model spec is a string, got {type(spec).__name__}")
    # '+' separates stages, except inside a URL's query or a path that really has one
    parts = [spec] if Path(spec).is_dir() else spec.split("+")
    return ModelSpec(tuple(_one(p, spec) for p in parts))
