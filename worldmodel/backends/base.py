"""The one interface every backend implements, and how a model spec names one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..types import Action, Screen


@dataclass
class Query:
    screen: Screen
    action: Action
    goal: str | None = None


@runtime_checkable
class Backend(Protocol):
    name: str

    def complete(self, queries: list[Query]) -> list[str]:
        """One raw completion (ideally an HTML document) per query."""
        ...


def load_backend(spec: str | Backend, **kw) -> Backend:
    """Name a backend: `copy`, `retrieval[:CORPUS]`, `hf:PATH` (or a checkpoint folder), `openai:URL#MODEL`."""
    if not isinstance(spec, str):
        return spec
    kind, _, arg = spec.partition(":")
    if spec.startswith(("http://", "https://")):
        kind, arg = "openai", spec
    if kind == "copy":
        from .copy import CopyBackend

        return CopyBackend()
    if kind == "retrieval":
        from .retrieval import RetrievalBackend

        return RetrievalBackend.from_corpus(arg or None, **kw)
    if kind == "openai":
        from .openai import OpenAIBackend

        url, _, model = arg.partition("#")
        return OpenAIBackend(url, model or "default", **kw)
    if kind == "hf" or Path(spec).is_dir():
        from .hf import TransformersBackend

        return TransformersBackend(arg if kind == "hf" else spec, **kw)
    raise ValueError(
        f"unknown model {spec!r}: use copy, retrieval[:CORPUS], hf:PATH, a checkpoint folder, or openai:URL#MODEL"
    )
