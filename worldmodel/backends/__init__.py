"""World-model backends: anything that turns (screen, action, goal) into next-screen HTML."""

from ..types import Completion, Query
from .base import Backend, BackendContractError, check_backend
from .registry import BACKENDS, backend_class

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendContractError",
    "Completion",
    "Query",
    "backend_class",
    "check_backend",
]
