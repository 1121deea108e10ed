"""Every backend kind a model spec can name, as "module:Class", imported on first use.

The spec grammar's KINDS (worldmodel/spec.py) are this table's names, so a kind added here is a
kind the grammar knows. Nothing here imports a backend until `backend_class` asks for it: a
backend module may import anything below it without importing this table or the others.
"""

from __future__ import annotations

import importlib

from .base import Backend

BACKENDS = {
    "copy": "worldmodel.backends.copy:CopyBackend",
    "sim": "worldmodel.backends.sim:SimBackend",
    "retrieval": "worldmodel.backends.retrieval:RetrievalBackend",
    "memory": "worldmodel.backends.memory:MemoryBackend",
    "hf": "worldmodel.backends.hf:TransformersBackend",
    "revisit": "worldmodel.backends.revisit:RevisitBackend",
    "openai": "worldmodel.backends.openai:OpenAIBackend",
}


def backend_class(kind: str) -> type[Backend]:
    """The Backend class of a spec kind; imports its module on first use."""
    if kind not in BACKENDS:
        raise ValueError(f"no backend kind {kind!r}")
    module, _, name = BACKENDS[kind].partition(":")
    return getattr(importlib.import_module(module), name)
