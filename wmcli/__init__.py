"""The `wm` command, the top layer: it assembles each stage's subcommands and owns the error path.

All argument parsing lives in this package, one module per command (render.py, corpus.py,
predict.py, eval.py, train.py); the library packages below hold no CLI code, only the pipelines
the commands call. This module wires the commands together, explicitly, so importing a stage
never registers anything. `main()` turns expected failures into one `error: ...` line on stderr:
exit 2 for a bad argument, 1 for a failure while running; a traceback only with `--debug`
(or WM_DEBUG=1).
"""

from __future__ import annotations

import os
import sys
import traceback

import typer

try:  # typer >= 0.20 vendors click; its exceptions are not click's
    from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
except ImportError:  # pragma: no cover - older typer on real click
    from click.exceptions import ClickException, UsageError

    NoArgsIsHelpError = ()

from .corpus import app as corpus_app
from .eval import eval_command
from .predict import predict_command
from .render import render_command
from .train import train_command, train_revisit_command

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False)
app.command("render")(render_command)
app.command("predict")(predict_command)
app.command("eval")(eval_command)
app.command("train")(train_command)
app.command("train-revisit")(train_revisit_command)
app.add_typer(corpus_app, name="corpus")

EXIT_RUNTIME = 1
EXIT_USAGE = 2

# Which install extra (pyproject.toml) brings each package the layers above render/ import lazily;
# where several do, the command's own extra is named when it is one of them, else the first.
EXTRA_OF_MODULE = {
    "torch": ("hf", "train"),
    "transformers": ("hf", "train"),
    "accelerate": ("hf", "train"),
    "trl": ("train",),
    "tokenizers": ("train",),
    "datasets": ("corpus", "train"),
    "tfrecord": ("corpus",),
    "google": ("corpus",),  # protobuf
    "grpc_tools": ("corpus",),
    "gymnasium": ("planning",),
    "httpx": ("openai",),
    "lpips": ("lpips",),
    "torchvision": ("lpips",),
}
EXTRA_OF_COMMAND = {"train": "train", "train-revisit": "train", "corpus": "corpus"}


def missing_extra(e: ModuleNotFoundError, argv: list[str]) -> str | None:
    """The one line naming the extra to install when `e` is a package an extra brings, else None."""
    root = (e.name or "").split(".")[0]
    extras = EXTRA_OF_MODULE.get(root)
    if not extras:
        return None
    words = [a for a in argv if not a.startswith("-")]
    command = " ".join(words[:2] if words[:1] == ["corpus"] else words[:1]) or "this command"
    want = EXTRA_OF_COMMAND.get(words[0] if words else "")
    extra = want if want in extras else extras[0]
    return (
        f"`wm {command}` needs the {extra!r} extra (no module {root!r}): "
        f"pip install 'worldmodel[{extra}]' (or -e '.[{extra}]' in a checkout)"
    )


@app.callback()
def root(
    debug: bool = typer.Option(False, "--debug", help="print the full traceback of any error"),
) -> None:
    """Renderable-code GUI world model: render, record corpora, predict, evaluate, train."""


def _one_line(text: str) -> str:
    return " ".join(str(text).split()) or "(no message)"


def main(argv: list[str] | None = None) -> int:
    """Run `wm` with `argv` (sys.argv[1:] by default); returns the exit code instead of raising."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or os.environ.get("WM_DEBUG") == "1"
    try:
        rc = app(args=argv, prog_name="wm", standalone_mode=False)
        return rc if isinstance(rc, int) else 0
    except typer.Exit as e:
        return e.exit_code
    except NoArgsIsHelpError as e:  # `wm corpus` alone: the help, as usage
        print(e.format_message() if hasattr(e, "format_message") else "", file=sys.stderr)
        return EXIT_USAGE
    except UsageError as e:
        hint = (
            f" (see `wm {e.ctx.command_path.partition(' ')[2]} --help`)".replace("  ", " ") if e.ctx else ""
        )
        print(f"error: {_one_line(e.format_message())}{hint}", file=sys.stderr)
        return EXIT_USAGE
    except ClickException as e:
        print(f"error: {_one_line(e.format_message())}", file=sys.stderr)
        return e.exit_code
    except (typer.Abort, KeyboardInterrupt):
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - the one place that turns any failure into one line
        if debug:
            traceback.print_exc()
        if isinstance(e, ModuleNotFoundError) and missing_extra(e, argv):
            print(f"error: {missing_extra(e, argv)}", file=sys.stderr)
            return EXIT_RUNTIME
        kind = "" if isinstance(e, (ValueError, OSError, RuntimeError)) else f"{type(e).__name__}: "
        msg = _one_line(e)
        if isinstance(e, OSError) and e.filename and str(e.filename) not in msg:
            msg = f"{e.filename}: {msg}"
        tip = "" if debug else " (run with --debug for the traceback)"
        print(f"error: {kind}{msg}{tip if kind else ''}", file=sys.stderr)
        return EXIT_RUNTIME


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()
