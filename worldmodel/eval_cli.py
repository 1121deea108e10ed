"""`wm eval`: backends against the copy baseline on a corpus split."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def eval_command(
    model: list[str] = typer.Option(
        ["copy", "retrieval"],
        "--model",
        "-m",
        help="backend spec, repeatable: copy, retrieval, hf:PATH, a checkpoint folder, openai:URL#MODEL",
    ),
    corpus: Path = typer.Option(None, help="corpus folder (default: the bundled corpus)"),
    split: str = typer.Option("test"),
    limit: int = typer.Option(0, help="evaluate the first N transitions (0 = all)"),
    out: Path = typer.Option(
        Path("runs/eval"), "-o", "--out", help="folder for report.html and figures.json"
    ),
    device: str = typer.Option("auto", help="for hf backends: cpu, cuda, cuda:1, auto"),
    max_new_tokens: int = typer.Option(1024, help="for hf backends"),
) -> None:
    """Render each backend's predictions and score them; writes a side-by-side report."""
    from corpus.store import iter_transitions, load_corpus
    from render import Renderer

    from .backends import load_backend
    from .evaluate import evaluate

    dd = load_corpus(corpus)
    if split not in dd:
        raise typer.BadParameter(f"split {split!r} not in corpus (has {', '.join(dd)})")
    ds = dd[split]
    if limit:
        ds = ds.select(range(min(limit, len(ds))))
    transitions = list(iter_transitions(ds))
    backends = {}
    for spec in model:
        hf = spec.startswith("hf:") or Path(spec).is_dir()
        kw = {"device": device, "max_new_tokens": max_new_tokens} if hf else {}
        # retrieval looks up the same corpus' training split unless told otherwise
        backends[spec] = load_backend(f"retrieval:{corpus}" if spec == "retrieval" and corpus else spec, **kw)
    with Renderer() as r:
        figures = evaluate(backends, transitions, r, out)
    typer.echo(json.dumps(figures, indent=2))
    typer.echo(f"report: {out / 'report.html'}")
