"""World-model backends: anything that turns (screen, action, goal) into next-screen HTML."""

from .base import Backend, Query, load_backend

__all__ = ["Backend", "Query", "load_backend"]
