"""The `wm` command: render, corpus, predict, eval, train."""

from __future__ import annotations

import typer

from render.cli import render_command

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
app.command("render")(render_command)


@app.callback()
def main() -> None:
    """Renderable-code GUI world model."""


def _register() -> None:
    # Each stage keeps its own CLI module; importing them here keeps `wm --help` complete.
    import importlib

    for mod, attr, name in [
        ("corpus.cli", "app", "corpus"),
        ("worldmodel.predict_cli", "predict_command", "predict"),
        ("worldmodel.eval_cli", "eval_command", "eval"),
        ("training.cli", "train_command", "train"),
    ]:
        try:
            obj = getattr(importlib.import_module(mod), attr)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise
            continue
        if isinstance(obj, typer.Typer):
            app.add_typer(obj, name=name)
        else:
            app.command(name)(obj)


_register()

if __name__ == "__main__":
    app()
