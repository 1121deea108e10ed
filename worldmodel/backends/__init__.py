"""World-model backends: anything that turns (screen, action, goal) into next-screen HTML."""

from ..types import Completion, Query
from .base import Backend, BackendContractError, backend_class, check_backend

__all__ = ["Backend", "BackendContractError", "Completion", "Query", "backend_class", "check_backend"]
