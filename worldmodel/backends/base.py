"""The one interface every backend implements, and how a parsed model spec becomes one."""

from __future__ import annotations

import inspect
from typing import Protocol, runtime_checkable

from ..spec import BackendSpec, SpecError, parse_spec
from ..types import Query

__all__ = ["Backend", "Query", "load_backend", "load_stage"]


@runtime_checkable
class Backend(Protocol):
    name: str

    def complete(self, queries: list[Query]) -> list[str]:
        """One raw completion (ideally an HTML document) per query, generated as one batch."""
        ...


def _backend_class(kind: str):
    if kind == "copy":
        from .copy import CopyBackend

        return CopyBackend
    if kind == "retrieval":
        from .retrieval import RetrievalBackend

        return RetrievalBackend
    if kind == "memory":
        from .memory import MemoryBackend

        return MemoryBackend
    if kind == "sim":
        from .sim import SimBackend

        return SimBackend
    if kind == "openai":
        from .openai import OpenAIBackend

        return OpenAIBackend
    from .hf import TransformersBackend

    return TransformersBackend


def option_names(kind: str) -> set[str]:
    """Keyword options a backend kind accepts (device, dtype, max_new_tokens, api_key, ...)."""
    cls = _backend_class(kind)
    if hasattr(cls, "OPTIONS"):
        return set(cls.OPTIONS)
    init = cls.from_spec
    return {
        n
        for n, p in inspect.signature(init).parameters.items()
        if p.kind == p.KEYWORD_ONLY
        or (p.kind == p.POSITIONAL_OR_KEYWORD and n not in ("self", "cls", "spec"))
    }


def load_stage(stage: BackendSpec, **options) -> Backend:
    """Build one backend; options it does not take are ignored (the caller checks for unused ones)."""
    cls = _backend_class(stage.kind)
    kw = {k: v for k, v in options.items() if k in option_names(stage.kind)}
    return cls.from_spec(stage, **kw)


def load_backend(spec, **options) -> Backend:
    """A single-stage spec (or a Backend, returned as is) as a Backend."""
    if not isinstance(spec, str) and not hasattr(spec, "stages"):
        return spec
    ms = parse_spec(spec)
    if len(ms.stages) != 1:
        raise SpecError(f"model {spec!r} has {len(ms.stages)} stages; load it with WorldModel.load")
    return load_stage(ms.first, **options)
