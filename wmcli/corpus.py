"""`wm corpus build | record | merge | stats | compact | import-android | import-droidbot | add-id-test`: arguments only.

Each command parses its arguments and calls its pipeline in corpus/pipelines.py, turning an
`ArgumentError` into a usage error that names the flag.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from corpus.build import BuildConfig
from corpus.phone import FLOOR, MAX_OFF

from .options import with_config

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
def record(
    target: str = typer.Argument(
        ..., help="a local folder holding the app, or an http(s) URL on the loopback interface"
    ),
    out: Path = typer.Option(
        ..., "-o", "--out", file_okay=False, help="corpus folder to write (replaced atomically)"
    ),
    episodes: int = typer.Option(3, min=1, help="episodes to record"),
    steps: int = typer.Option(8, min=1, help="actions per episode at most"),
    seed: int = typer.Option(0),
    viewport: str = typer.Option("phone", help="phone, phone-hd, tablet, desktop, or WIDTHxHEIGHT (CSS px)"),
    scale: float = typer.Option(1.0, min=0.25, max=8.0, help="device scale factor"),
    policy: str = typer.Option("explore", help="'explore' or module:function taking a StepContext"),
    goal: str = typer.Option("", help="the goal text recorded with every step"),
    name: str = typer.Option(None, help="app name (default: from the folder or URL)"),
    entry: str = typer.Option("index.html", help="for a folder: the page to start on"),
    capture: str = typer.Option(
        "stylesheets", help="stylesheets (the page's own CSS) or computed (per-element styles)"
    ),
    licence: str = typer.Option("", help="the app's licence, written into the dataset card"),
    split: str = typer.Option(
        "auto",
        help="split for this app: train, validation, test, or auto (by a stable hash; a lone app trains)",
    ),
    append: bool = typer.Option(False, help="add to the corpus at --out instead of replacing it"),
    compact: bool = typer.Option(
        True, "--compact/--no-compact", help="shorten each screen's HTML where its render stays identical"
    ),
    held_out: int = typer.Option(
        0,
        "--hold-out",
        min=0,
        help="the last N episodes go to the id-test split (the app trains; its held-out episodes are unseen)",
    ),
    num_proc: int = _NUM_PROC,
    shard: str = _SHARD,
) -> None:
    """Record any web app in Chromium: a local folder (served under a fake origin) or a dev server on loopback."""
    from corpus.pipelines import record_app

    hints = {a: f"--{a}" for a in ("capture", "split", "viewport", "policy", "out", "shard")} | {
        "held_out": "--hold-out",
        "num_proc": "--num-proc",
    }
    _call(
        record_app,
        {**hints, "target": "TARGET"},
        target,
        out,
        episodes=episodes,
        steps=steps,
        seed=seed,
        viewport=viewport,
        scale=scale,
        policy=policy,
        goal=goal,
        name=name,
        entry=entry,
        capture=capture,
        licence=licence,
        split=split,
        append=append,
        compact=compact,
        held_out=held_out,
        log=typer.echo,
        warn=_err,
        num_proc=num_proc,
        shard=shard,
    )


# The options both phone imports take: when a translated screen is good enough, and the licence.
_FLOOR = typer.Option(
    FLOOR, "--floor", "--threshold", min=0.0, max=1.0, help="blurred SSIM a translated screen must reach"
)
_MAX_OFF = typer.Option(MAX_OFF, min=0.0, max=1.0, help="share of pixels a screen may have off")
_ROUNDS = typer.Option(2, min=0, help="revision rounds before a screen is dropped")
_LICENCE = typer.Option(
    None, help="the data's licence for the dataset card (default: what the source states)"
)
_ID_TEST_SHARE = typer.Option(
    0.0,
    min=0.0,
    max=0.9,
    help="hold out this share of each training app's episodes (of a lone DroidBot run: its last steps) "
    "as id-test, for in-app figures beside unseen apps",
)


@app.command("import-android")
def import_android_cmd(
    path: Path = typer.Argument(..., help="AndroidControl TFRecord file, a folder of shards, or a glob"),
    out: Path = typer.Option(..., "-o", "--out", file_okay=False),
    floor: float = _FLOOR,
    max_off: float = _MAX_OFF,
    rounds: int = _ROUNDS,
    scale: float = typer.Option(1.0, min=0.25, max=8.0, help="device scale factor of the screenshots"),
    licence: str = _LICENCE,
    coder: str = typer.Option(
        "rules", help="reviser: 'rules' (per-region fixes from the screenshot) or a model spec"
    ),
    id_test_share: float = _ID_TEST_SHARE,
    num_proc: int = _NUM_PROC,
    shard: str = _SHARD,
) -> None:
    """Translate AndroidControl episodes to HTML, revise with visual feedback, save the survivors."""
    from corpus.pipelines import import_android_corpus

    _call(
        import_android_corpus,
        {"path": "PATH", "coder": "--coder", "shard": "--shard", "num_proc": "--num-proc"},
        path,
        out,
        floor=floor,
        rounds=rounds,
        scale=scale,
        coder=coder,
        max_off=max_off,
        licence=licence,
        id_test_share=id_test_share,
        num_proc=num_proc,
        shard=shard,
        log=typer.echo,
        warn=_err,
    )


@app.command("import-droidbot")
def import_droidbot_cmd(
    folder: Path = typer.Argument(..., help="DroidBot output folder (events/, states/, utg.js)"),
    out: Path = typer.Option(..., "-o", "--out", file_okay=False),
    floor: float = _FLOOR,
    max_off: float = _MAX_OFF,
    rounds: int = _ROUNDS,
    licence: str = _LICENCE,
    app_name: str = typer.Option(None, "--app", help="app name (default: the states' commonest package)"),
    id_test_share: float = _ID_TEST_SHARE,
    num_proc: int = _NUM_PROC,
    shard: str = _SHARD,
) -> None:
    """Import a DroidBot exploration: events joined to their screens, translated, revised, saved."""
    from corpus.pipelines import import_droidbot_corpus

    _call(
        import_droidbot_corpus,
        {"folder": "FOLDER", "shard": "--shard", "num_proc": "--num-proc"},
        folder,
        out,
        floor=floor,
        max_off=max_off,
        rounds=rounds,
        licence=licence,
        app=app_name,
        id_test_share=id_test_share,
        num_proc=num_proc,
        shard=shard,
        log=typer.echo,
        warn=_err,
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
def add_id_test_cmd(
    path: Path = typer.Argument(None, help="corpus folder (default: the bundled corpus)"),
    out: Path = typer.Option(
        ..., "-o", "--out", file_okay=False, help="where the corpus with its id-test split goes (may be PATH)"
    ),
    phone_apps: str = typer.Option(None, help="comma-separated phone apps (default: the training ones)"),
    phone_episodes: int = typer.Option(3, min=0, help="held-out episodes per phone app"),
    phone_steps: int = typer.Option(10, min=1),
    tasks: str = typer.Option(
        None, help="comma-separated bundled MiniWoB++ tasks (default: 15 training ones)"
    ),
    miniwob_episodes: int = typer.Option(2, min=0),
    miniwob_steps: int = typer.Option(5, min=1),
    third_party: str = typer.Option(
        None, help="comma-separated bundled third-party apps (default: the three that train)"
    ),
    third_party_episodes: int = typer.Option(3, min=0),
    third_party_steps: int = typer.Option(5, min=1),
    seed: int = typer.Option(0, help="held-out seeds are SEED*1000+500+e, never a build's own"),
    num_proc: int = _NUM_PROC,
    shard: str = typer.Option(
        None,
        help="I/N: record this machine's block as a piece (merge the pieces, then merge with the corpus)",
    ),
) -> None:
    """Record new episodes (other seeds) of a corpus' training apps as its id-test split."""
    from corpus.heldout import HeldOutConfig
    from corpus.pipelines import add_id_test

    def names(v: str | None, default: tuple[str, ...]) -> tuple[str, ...]:
        return default if v is None else tuple(a for a in v.split(",") if a)

    d = HeldOutConfig()
    cfg = HeldOutConfig(
        names(phone_apps, d.phone_apps),
        phone_episodes,
        phone_steps,
        names(tasks, d.miniwob_tasks),
        miniwob_episodes,
        miniwob_steps,
        names(third_party, d.third_party),
        third_party_episodes,
        third_party_steps,
        seed,
    )
    hints = {"path": "PATH", "shard": "--shard", "num_proc": "--num-proc"}
    dd = _call(add_id_test, hints, path, out, cfg, log=typer.echo, num_proc=num_proc, shard=shard)
    if dd is not None:
        typer.echo(f"wrote {out}: " + ", ".join(f"{k}={len(v)}" for k, v in dd.items()))
