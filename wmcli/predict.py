"""`wm predict`: one imagined next screen, written as HTML and PNG."""

from __future__ import annotations

from pathlib import Path

import typer

from worldmodel.files import write_whole
from worldmodel.spec import DEFAULT_MODEL

MODEL_HELP = "copy, sim, retrieval[:CORPUS], memory[:CORPUS], hf:PATH, a checkpoint folder, openai:URL#MODEL (A+B composes)"


def parse_model(spec: str, param_hint: str = "--model"):
    """A model spec, or a usage error naming the flag."""
    from worldmodel.spec import SpecError, parse_spec

    try:
        return parse_spec(spec)
    except SpecError as e:
        raise typer.BadParameter(str(e), param_hint=param_hint) from None


def predict_command(
    screen: Path = typer.Option(..., exists=True, dir_okay=False, help="current screenshot (PNG/JPEG)"),
    action: str = typer.Option(..., help='action JSON, e.g. \'{"type": "tap", "x": 120, "y": 300}\''),
    out: Path = typer.Option(
        ..., "-o", "--out", dir_okay=False, help="next-screen HTML to write; the PNG goes beside it"
    ),
    html: Path = typer.Option(None, exists=True, dir_okay=False, help="current screen's HTML, if known"),
    goal: str = typer.Option(None),
    model: str = typer.Option(DEFAULT_MODEL, help=MODEL_HELP),
    scale: float = typer.Option(1.0, min=0.25, max=8.0, help="device scale factor of the screenshot"),
    mode: str = typer.Option(
        None,
        help="document, edit (the model edits --html; the edit goes beside --out) or auto; "
        "default: the model's own (a checkpoint's card, else document)",
    ),
) -> None:
    """Predict the screen after ACTION on SCREEN."""
    from worldmodel.model import WorldModel
    from worldmodel.prompt import MODES
    from worldmodel.types import Action, Screen, read_html

    if mode is not None and mode not in MODES:
        raise typer.BadParameter(f"{mode!r} is not one of {', '.join(MODES)}", param_hint="--mode")

    spec = parse_model(model)
    try:
        s = Screen(screen, device_scale_factor=scale)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--screen") from None
    if html is not None:
        try:
            s.html = read_html(html)
        except ValueError as e:
            raise typer.BadParameter(str(e), param_hint="--html") from None
    try:
        act = Action.from_json(action).check_within(s.size)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--action") from None
    with WorldModel.load(spec) as wm:
        p = wm.predict(s, act, goal, mode)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_whole(out, p.html)
    if p.edit is not None:
        write_whole(out.with_suffix(".edit"), p.edit)
    if p.note:
        typer.echo(f"note: {p.note}", err=True)
    if not p.ok:
        raise RuntimeError(f"wrote {out}, but it did not render: {p.render_error}")
    png = out.with_suffix(".png")
    from worldmodel.types import png_bytes

    write_whole(png, png_bytes(p.image))
    typer.echo(
        f"wrote {out} and {png} ({p.timings['generate_s']:.2f}s generate, {p.timings['render_s']:.2f}s render)"
    )
