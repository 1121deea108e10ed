"""Sandboxed HTML rendering and render-fidelity metrics."""

from .interact import Interaction
from .renderer import (
    PHONE_HEIGHT,
    PHONE_WIDTH,
    Box,
    Renderer,
    RenderError,
    RenderResult,
    Viewport,
    default_renderer,
    render_html,
)

__all__ = [
    "PHONE_HEIGHT",
    "PHONE_WIDTH",
    "Box",
    "Interaction",
    "Renderer",
    "RenderError",
    "RenderResult",
    "Viewport",
    "default_renderer",
    "render_html",
]
