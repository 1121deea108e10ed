"""`wm train`: with no arguments, the embedded default (bundled corpus, tiny model, CPU).

Its flags are TrainConfig's fields (wmcli/options.py), each defaulting to the preset's value;
`accelerate launch -m wmcli train ...` runs the same command on every process (on a machine
without GPUs: `accelerate launch --multi_gpu --num_processes N`, since `--cpu` starts one).
"""

from __future__ import annotations

import os

import typer

from training.config import TrainConfig

from .options import with_config


@with_config(TrainConfig, unset=True, keep_default=("preset",))
def train_command(
    config: dict,
    resume: bool = typer.Option(False, help="continue each stage from its last saved checkpoint"),
) -> None:
    """SFT cold start, then render-aware GRPO; saves a checkpoint predict_next and wm eval load."""
    from training.config import config_from
    from training.train import train

    try:
        cfg = config_from(config)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from e
    try:
        final = train(cfg, resume=resume, echo=typer.echo)
    except (FileNotFoundError, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from e
    if os.environ.get("RANK", "0") == "0":  # the main process of several says it once
        typer.echo(f"done: wm eval -m {final}  |  wm predict --model {final} ...")


def train_revisit_command(
    checkpoint: str = typer.Argument(..., help="the checkpoint folder the head is written into"),
    corpus: str = typer.Option(
        None, help="corpus whose train split it learns from (default: the bundled one)"
    ),
) -> None:
    """Fit a checkpoint's revisit head: which earlier screen of the episode is the next one."""
    from training.revisit import train_revisit

    try:
        path = train_revisit(checkpoint, corpus, echo=typer.echo)
    except (FileNotFoundError, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from e
    typer.echo(f"done: wm eval -m sim+memory+{checkpoint}  (the head runs after the checkpoint: {path.name})")
