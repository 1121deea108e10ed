"""`wm corpus build | record | merge | stats | compact | import-android | import-droidbot | add-id-test`: arguments only.

Each command parses its arguments and calls its pipeline in corpus/pipelines.py, turning an
`ArgumentError` into a usage error that names the flag.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from corpus.build import BuildConfig
from corpus.configs import AndroidImportConfig, DroidBotImportConfig, RecordConfig
from corpus.heldout import HeldOutConfig

from .options import flag_names, with_config

app = typer.Typer(no_args_is_help=True, help="Record, import and inspect transition corpora.")


def _err(msg: str) -> None:
    typer.echo(msg, err=True)


def _call(fn, hints: dict[str, str], *args, **kwargs):
    """Run a pipeline; a wrong argument becomes a usage error naming its flag (`hints`)."""
    from corpus.pipelines import ArgumentError

    try:
        return fn(*args, **kwargs)
    except ArgumentError as e:
        raise typer.BadParameter(str(e), param_hint=hints.get(e.argument)) from None


# How a pipeline spreads its work: processes here, and machines (pieces joined by `wm corpus merge`).
_NUM_PROC = typer.Option(
    1, min=1, help="processes, each with its own Chromium (the same corpus for any number)"
)
_SHARD = typer.Option(
    None, help="I/N: this machine's block of the work, saved as a piece; join all N with `wm corpus merge`"
)
_COMMON = {"shard": "--shard", "num_proc": "--num-proc"}  # the flags of the parameters above


@app.command("build")
@with_config(BuildConfig)
def build(
    config: dict,
    out: Path = typer.Option(
        ..., "-o", "--out", file_okay=False, help="corpus folder to write (replaced atomically)"
    ),
    compact: bool = typer.Option(
        True, "--compact/--no-compact", help="shorten each screen's HTML where its render stays identical"
    ),
    id_test: bool = typer.Option(
        True,
        "--id-test/--no-id-test",
        help="also hold out new episodes of the in-app apps this build trains on, as the id-test split",
    ),
    num_proc: int = _NUM_PROC,
    shard: str = typer.Option(
        None,
        help="I/N: record this machine's block of the episodes as a piece; join all N with `wm corpus merge`",
    ),
) -> None:
    """Record real web apps in Chromium and save a train/validation/test corpus split by app
    (and an id-test split: new episodes of training apps)."""
    from corpus.pipelines import build_corpus

    _call(
        build_corpus,
        {"third_party": "--third-party", "shard": "--shard", "num_proc": "--num-proc"},
        out,
        BuildConfig(**config),
        compact,
        id_test=id_test,
        log=typer.echo,
        num_proc=num_proc,
        shard=shard,
    )


@app.command("record")
@with_config(RecordConfig)
def record(
    config: dict,
    target: str = typer.Argument(
        ..., help="a local folder holding the app, or an http(s) URL on the loopback interface"
    ),
    out: Path = typer.Option(
        ..., "-o", "--out", file_okay=False, help="corpus folder to write (replaced atomically)"
    ),
    num_proc: int = _NUM_PROC,
    shard: str = _SHARD,
) -> None:
    """Record any web app in Chromium: a local folder (served under a fake origin) or a dev server on loopback."""
    from corpus.pipelines import record_app

    hints = flag_names(RecordConfig) | _COMMON | {"target": "TARGET", "out": "--out"}
    _call(
        record_app,
        hints,
        target,
        out,
        RecordConfig(**config),
        log=typer.echo,
        warn=_err,
        num_proc=num_proc,
        shard=shard,
    )


@app.command("import-android")
@with_config(AndroidImportConfig)
def import_android_cmd(
    config: dict,
    path: Path = typer.Argument(..., help="AndroidControl TFRecord file, a folder of shards, or a glob"),
    out: Path = typer.Option(..., "-o", "--out", file_okay=False),
    num_proc: int = _NUM_PROC,
    shard: str = _SHARD,
) -> None:
    """Translate AndroidControl episodes to HTML, revise with visual feedback, save the survivors."""
    from corpus.pipelines import import_android_corpus

    _call(
        import_android_corpus,
        flag_names(AndroidImportConfig) | _COMMON | {"path": "PATH"},
        path,
        out,
        AndroidImportConfig(**config),
        log=typer.echo,
        warn=_err,
        num_proc=num_proc,
        shard=shard,
    )


@app.command("import-droidbot")
@with_config(DroidBotImportConfig)
def import_droidbot_cmd(
    config: dict,
    folder: Path = typer.Argument(..., help="DroidBot output folder (events/, states/, utg.js)"),
    out: Path = typer.Option(..., "-o", "--out", file_okay=False),
    num_proc: int = _NUM_PROC,
    shard: str = _SHARD,
) -> None:
    """Import a DroidBot exploration: events joined to their screens, translated, revised, saved."""
    from corpus.pipelines import import_droidbot_corpus

    _call(
        import_droidbot_corpus,
        flag_names(DroidBotImportConfig) | _COMMON | {"folder": "FOLDER"},
        folder,
        out,
        DroidBotImportConfig(**config),
        log=typer.echo,
        warn=_err,
        num_proc=num_proc,
        shard=shard,
    )


@app.command("stats")
def stats(
    path: Path = typer.Argument(None, help="corpus folder (default: the bundled corpus)"),
    fidelity: bool = typer.Option(
        True, help="render every screen's captured HTML and score it against its screenshot"
    ),
    worst: int = typer.Option(5, min=0, help="write this many worst-captured screens as side-by-side PNGs"),
    out: Path = typer.Option(
        Path("runs/stats"), "-o", "--out", file_okay=False, help="where the worst screens go"
    ),
) -> None:
    """Counts per split, app and action type, and how faithfully each app's captured HTML renders."""
    from corpus.pipelines import corpus_stats

    report = _call(corpus_stats, {"path": "PATH"}, path, fidelity, worst, out, log=typer.echo)
    typer.echo(json.dumps(report))


@app.command("merge")
def merge_cmd(
    sources: list[Path] = typer.Argument(..., help="corpus folders to join, in order"),
    out: Path = typer.Option(
        ..., "-o", "--out", file_okay=False, help="where the joined corpus goes (replaced atomically)"
    ),
    split: list[str] = typer.Option(
        [], "--split", help="APP=SPLIT: put an app in this split instead of the one its corpus gave it"
    ),
) -> None:
    """Join corpora recorded in pieces into one, each app keeping its split (or the one --split gives)."""
    from corpus.pipelines import merge_corpora
    from corpus.store import SPLITS

    pinned: dict[str, str] = {}
    for item in split:
        name, sep, where = item.partition("=")
        if not sep or not name or where not in SPLITS:
            raise typer.BadParameter(
                f"{item!r} is not APP=SPLIT with SPLIT one of {', '.join(SPLITS)}", param_hint="--split"
            )
        pinned[name] = where
    _call(merge_corpora, {"sources": "SOURCES", "pinned": "--split"}, sources, out, pinned, typer.echo, _err)


@app.command("compact")
def compact_cmd(
    path: Path = typer.Argument(None, help="corpus folder (default: the bundled corpus)"),
    out: Path = typer.Option(..., "-o", "--out", file_okay=False, help="where the compacted corpus goes"),
    num_proc: int = _NUM_PROC,
    shard: str = _SHARD,
) -> None:
    """Shorten every screen's HTML where its render stays pixel-identical (render/compact.py)."""
    from corpus.pipelines import compact_corpus

    hints = {"path": "PATH", "shard": "--shard", "num_proc": "--num-proc"}
    _call(compact_corpus, hints, path, out, log=typer.echo, warn=_err, num_proc=num_proc, shard=shard)


@app.command("add-id-test")
@with_config(HeldOutConfig)
def add_id_test_cmd(
    config: dict,
    path: Path = typer.Argument(None, help="corpus folder (default: the bundled corpus)"),
    out: Path = typer.Option(
        ..., "-o", "--out", file_okay=False, help="where the corpus with its id-test split goes (may be PATH)"
    ),
    num_proc: int = _NUM_PROC,
    shard: str = typer.Option(
        None,
        help="I/N: record this machine's block as a piece (merge the pieces, then merge with the corpus)",
    ),
) -> None:
    """Record new episodes (other seeds) of a corpus' training apps as its id-test split."""
    from corpus.pipelines import add_id_test

    hints = {"path": "PATH", "shard": "--shard", "num_proc": "--num-proc"}
    cfg = HeldOutConfig(**config)
    dd = _call(add_id_test, hints, path, out, cfg, log=typer.echo, num_proc=num_proc, shard=shard)
    if dd is not None:
        typer.echo(f"wrote {out}: " + ", ".join(f"{k}={len(v)}" for k, v in dd.items()))
