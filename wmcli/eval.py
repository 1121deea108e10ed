"""`wm eval`: backends against the copy baseline on a corpus split."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from worldmodel.files import write_whole
from worldmodel.spec import DEFAULT_MODEL

from .predict import MODEL_HELP, parse_model


def eval_command(
    model: list[str] = typer.Option(
        ["copy", DEFAULT_MODEL], "--model", "-m", help=f"repeatable: {MODEL_HELP}"
    ),
    corpus: Path = typer.Option(None, help="corpus folder (default: the bundled corpus)"),
    split: str = typer.Option(
        "auto",
        help="a split, comma-separated splits, or auto: in-app (id-test) and unseen apps (test) side by side "
        "where the corpus has an id-test split, else test",
    ),
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
    siglip: Path = typer.Option(
        None, exists=True, file_okay=False, help="a local SigLIP checkpoint: Code2World's SigLIP similarity"
    ),
    dino: Path = typer.Option(
        None, exists=True, file_okay=False, help="a local DINOv2 checkpoint: Code2World's DINO similarity"
    ),
    judge: str = typer.Option(
        None, help="URL#MODEL of an OpenAI-compatible VLM: Code2World's judge scores S_ad, S_id, S_ele, S_lay"
    ),
    judge_cache: Path = typer.Option(
        Path("runs/judge-cache.jsonl"),
        dir_okay=False,
        help="the judge's answers, kept per (render, transition)",
    ),
) -> None:
    """Render each backend's predictions and score them; writes a side-by-side report."""
    from render import Renderer
    from worldmodel.dataset import CorpusError, load_corpus
    from worldmodel.evaluate import evaluate
    from worldmodel.prompt import MODES

    if mode is not None and mode not in MODES:
        raise typer.BadParameter(f"{mode!r} is not one of {', '.join(MODES)}", param_hint="--mode")
    specs = [parse_model(m) for m in model]
    try:
        dd = load_corpus(corpus)
    except CorpusError as e:
        raise typer.BadParameter(str(e), param_hint="--corpus") from None
    names = _split_names(dd, split)
    opts = dict(device=device, max_new_tokens=max_new_tokens, html_chars=html_chars, edit_tries=edit_tries)
    scorers = _code2world_scorers(siglip, dino, judge, judge_cache, device)
    by_split = {}
    with Renderer() as r:
        backends = _load_models(model, specs, corpus, r, opts)
        for s in names:
            where = out if len(names) == 1 else out / s
            by_split[s] = evaluate(backends, _transitions(dd[s], limit), r, where, modes=mode, **scorers)
    if scorers.get("judge") is not None:
        scorers["judge"].close()
    _report(by_split, names, out)


def _split_names(dd, split: str) -> list[str]:
    """The splits `--split` names (auto: id-test and test, those the corpus has)."""
    from worldmodel.dataset import ID_TEST

    names = (
        [s for s in (ID_TEST, "test") if s in dd] if split == "auto" else [s for s in split.split(",") if s]
    )
    for s in names:
        if s not in dd:
            raise typer.BadParameter(f"split {s!r} not in corpus (has {', '.join(dd)})", param_hint="--split")
    if not names:
        raise typer.BadParameter(f"no split to evaluate (corpus has {', '.join(dd)})", param_hint="--split")
    return names


def _load_models(model: list[str], specs, corpus, r, opts: dict) -> dict:
    """Each --model loaded with the options that fit it, by the name the user gave."""
    from worldmodel.model import WorldModel

    backends = {}
    for name, spec in zip(model, specs):
        if corpus:  # a bare `retrieval` or `memory` looks up this corpus' own recordings
            spec = spec.with_corpus(str(corpus))
        backends[name] = WorldModel.load(spec, r, only_known_options=True, **opts)
    return backends


def _transitions(ds, limit: int) -> list:
    """A split's transitions (its first `limit`, 0 = all); bad records named on stderr."""
    from worldmodel.dataset import iter_transitions

    if limit:
        ds = ds.select(range(min(limit, len(ds))))
    skipped: list[str] = []
    transitions = list(iter_transitions(ds, skipped))
    for msg in skipped:
        typer.echo(f"skipped a bad record: {msg}", err=True)
    return transitions


def _report(by_split: dict, names: list[str], out: Path) -> None:
    """One split's figures as JSON, or several side by side (figures.json, table.md)."""
    from worldmodel.evaluate import side_by_side

    if len(names) == 1:
        typer.echo(json.dumps(by_split[names[0]], indent=2))
        typer.echo(f"report: {out / 'report.html'}")
        return
    table = side_by_side(by_split)
    out.mkdir(parents=True, exist_ok=True)
    write_whole(out / "figures.json", json.dumps(by_split, indent=2))
    write_whole(out / "table.md", table + "\n")
    typer.echo(table)
    typer.echo("reports: " + ", ".join(str(out / s / "report.html") for s in names))


def _code2world_scorers(siglip, dino, judge, cache, device) -> dict:
    """evaluate()'s embedders and judge from the flags (one usage error naming a bad one)."""
    from worldmodel.embed import EmbeddingError, ImageEmbedder

    embedders = {}
    for key, path in (("siglip", siglip), ("dino", dino)):
        if path is not None:
            try:
                embedders[key] = ImageEmbedder(path, device)
            except EmbeddingError as e:
                raise typer.BadParameter(str(e), param_hint=f"--{key}") from None
    out: dict = {"embedders": embedders or None}
    if judge:
        from worldmodel.judge import Judge

        try:
            out["judge"] = Judge(judge, cache)
        except ValueError as e:
            raise typer.BadParameter(str(e), param_hint="--judge") from None
    return out
