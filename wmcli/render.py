"""`wm render page.html -o out.png`."""

from __future__ import annotations

from pathlib import Path

import typer

from render.renderer import PHONE_HEIGHT, PHONE_WIDTH, Renderer, Viewport, read_html
from worldmodel.files import write_whole


def _read_page(page: Path) -> str:
    try:
        return read_html(page)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="PAGE") from None


def render_command(
    page: Path = typer.Argument(..., exists=True, dir_okay=False, readable=True, help="HTML file to render"),
    out: Path = typer.Option(..., "-o", "--out", dir_okay=False, help="PNG to write (folders are made)"),
    width: int = typer.Option(PHONE_WIDTH, min=16, max=8192, help="CSS viewport width"),
    height: int = typer.Option(PHONE_HEIGHT, min=16, max=8192, help="CSS viewport height"),
    scale: float = typer.Option(1.0, min=0.25, max=8.0, help="device scale factor"),
    timeout: float = typer.Option(10.0, min=0.1, max=600.0, help="seconds before the page is abandoned"),
    scripts: bool = typer.Option(False, help="let page scripts run (time-limited; off for model output)"),
) -> None:
    """Render an HTML file in the sandboxed Chromium and write a PNG."""
    html = _read_page(page)
    with Renderer(pool_size=1, timeout_s=timeout, allow_scripts=scripts) as r:
        res = r.render(html, Viewport(width, height, scale))  # RenderError: one line, exit 1
    out.parent.mkdir(parents=True, exist_ok=True)
    write_whole(out, res.png)
    typer.echo(f"{out}: {res.image.shape[1]}x{res.image.shape[0]} in {res.elapsed_s:.2f}s")
