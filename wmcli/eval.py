"""`wm eval`: backends against the copy baseline on a corpus split."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from .predict import MODEL_HELP, parse_model


def eval_command(
    model: list[str] = typer.Option(["copy", "retrieval"], "--model", "-m", help=f"repeatable: {MODEL_HELP}"),
    corpus: Path = typer.Option(None, help="corpus folder (default: the bundled corpus)"),
    split: str = typer.Option("test"),
    limit: int = typer.Option(0, min=0, help="evaluate the first N transitions (0 = all)"),
    out: Path = typer.Option(
        Path("runs/eval"), "-o", "--out", file_okay=False, help="folder for report.html and figures.json"
    ),
    device: str = typer.Option("auto", help="for hf backends: cpu, cuda, cuda:1, auto"),
    max_new_tokens: int = typer.Option(
        None, min=1, help="for hf backends (default: the backend's, as predict_next uses it)"
    ),
    html_chars: int = typer.Option(
        None, min=0, help="for hf backends: the prompt's HTML budget (default: the checkpoint's card)"
    ),
    mode: str = typer.Option(
        None,
        help="document, edit or auto (edit where the current HTML is known); default: each model's own "
        "(a checkpoint's card, else document)",
    ),
    edit_tries: int = typer.Option(
        None,
        min=1,
        help="for hf backends in edit mode: edits to try until one applies in full, else no change",
    ),
) -> None:
    """Render each backend's predictions and score them; writes a side-by-side report."""
    from render import Renderer
    from worldmodel.dataset import CorpusError, iter_transitions, load_corpus
    from worldmodel.evaluate import evaluate
    from worldmodel.prompt import MODES

    if mode is not None and mode not in MODES:
        raise typer.BadParameter(f"{mode!r} is not one of {', '.join(MODES)}", param_hint="--mode")
    specs = [parse_model(m) for m in model]
    try:
        dd = load_corpus(corpus)
    except CorpusError as e:
        raise typer.BadParameter(str(e), param_hint="--corpus") from None
    if split not in dd:
        raise typer.BadParameter(f"split {split!r} not in corpus (has {', '.join(dd)})", param_hint="--split")
    ds = dd[split]
    if limit:
        ds = ds.select(range(min(limit, len(ds))))
    skipped: list[str] = []
    transitions = list(iter_transitions(ds, skipped))
    for s in skipped:
        typer.echo(f"skipped a bad record: {s}", err=True)
    from worldmodel.model import WorldModel

    opts = dict(device=device, max_new_tokens=max_new_tokens, html_chars=html_chars, edit_tries=edit_tries)
    with Renderer() as r:
        backends = {}
        for name, spec in zip(model, specs):
            if corpus:  # a bare `retrieval` looks up this corpus' training split
                spec = spec.with_corpus(str(corpus))
            backends[name] = WorldModel.load(spec, r, only_known_options=True, **opts)
        figures = evaluate(backends, transitions, r, out, modes=mode)
    typer.echo(json.dumps(figures, indent=2))
    typer.echo(f"report: {out / 'report.html'}")
