"""Sandboxed HTML rendering and render-fidelity metrics."""

from .renderer import Box, Renderer, RenderError, RenderResult, Viewport, default_renderer, render_html

__all__ = ["Box", "Renderer", "RenderError", "RenderResult", "Viewport", "default_renderer", "render_html"]
