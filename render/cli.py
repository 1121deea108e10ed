"""`wm render page.html -o out.png`."""

from __future__ import annotations

from pathlib import Path

import typer

from .renderer import Renderer, RenderError, Viewport


def render_command(
    page: Path = typer.Argument(..., exists=True, dir_okay=False, help="HTML file to render"),
    out: Path = typer.Option(..., "-o", "--out", help="PNG to write"),
    width: int = typer.Option(360, help="CSS viewport width"),
    height: int = typer.Option(640, help="CSS viewport height"),
    scale: float = typer.Option(1.0, help="device scale factor"),
    timeout: float = typer.Option(10.0, help="seconds before the page is abandoned"),
    scripts: bool = typer.Option(True, help="let page scripts run (time-limited)"),
) -> None:
    """Render an HTML file in the sandboxed Chromium and write a PNG."""
    html = page.read_text(encoding="utf-8", errors="replace")
    with Renderer(pool_size=1, timeout_s=timeout, allow_scripts=scripts) as r:
        try:
            res = r.render(html, Viewport(width, height, scale))
        except RenderError as e:
            typer.echo(f"error: {page}: {e}", err=True)
            raise typer.Exit(2) from e
    tmp = out.with_name(out.name + ".tmp")
    res.save(tmp)
    tmp.replace(out)
    typer.echo(f"{out}: {res.image.shape[1]}x{res.image.shape[0]} in {res.elapsed_s:.2f}s")
