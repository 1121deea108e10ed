"""World-model backends: anything that turns (screen, action, goal) into next-screen HTML."""

from ..types import Query
from .base import Backend, load_backend, load_stage

__all__ = ["Backend", "Query", "load_backend", "load_stage"]
