"""`wm predict`: one imagined next screen, written as HTML and PNG."""

from __future__ import annotations

from pathlib import Path

import typer


def predict_command(
    screen: Path = typer.Option(..., exists=True, dir_okay=False, help="current screenshot (PNG/JPEG)"),
    action: str = typer.Option(..., help='action JSON, e.g. \'{"type": "tap", "x": 120, "y": 300}\''),
    out: Path = typer.Option(..., "-o", "--out", help="next-screen HTML to write; the PNG goes beside it"),
    html: Path = typer.Option(None, exists=True, dir_okay=False, help="current screen's HTML, if known"),
    goal: str = typer.Option(None),
    model: str = typer.Option(
        "retrieval", help="copy, retrieval[:CORPUS], hf:PATH, a checkpoint folder, openai:URL#MODEL"
    ),
    scale: float = typer.Option(1.0, help="device scale factor of the screenshot"),
) -> None:
    """Predict the screen after ACTION on SCREEN."""
    from render import Renderer

    from .predict import predict_next
    from .types import Action, Screen

    try:
        act = Action.from_json(action)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--action") from e
    s = Screen.from_path(screen, html, device_scale_factor=scale)
    with Renderer(pool_size=1) as r:
        p = predict_next(s, act, goal, model=model, renderer=r)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(p.html, encoding="utf-8")
    if not p.ok:
        typer.echo(f"wrote {out}; render failed: {p.render_error}", err=True)
        raise typer.Exit(1)
    png = out.with_suffix(".png")
    p.image.save(png)
    typer.echo(
        f"wrote {out} and {png} ({p.timings['generate_s']:.2f}s generate, {p.timings['render_s']:.2f}s render)"
    )
