"""`wm corpus build | record | merge | stats | compact | import-android | import-droidbot`."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import typer

app = typer.Typer(no_args_is_help=True, help="Record, import and inspect transition corpora.")


@app.command("build")
def build(
    out: Path = typer.Option(
        ..., "-o", "--out", file_okay=False, help="corpus folder to write (replaced atomically)"
    ),
    phone_episodes: int = typer.Option(24, min=0, help="exploration episodes in the phone app"),
    phone_steps: int = typer.Option(10, min=1),
    miniwob_episodes: int = typer.Option(3, min=0, help="episodes per MiniWoB++ task"),
    miniwob_steps: int = typer.Option(5, min=1),
    tasks: str = typer.Option("", help="comma-separated MiniWoB++ tasks (default: the built-in list)"),
    third_party: str = typer.Option(
        None, help="comma-separated third-party apps (default: the bundled five; '' for none)"
    ),
    third_party_episodes: int = typer.Option(3, min=0),
    third_party_steps: int = typer.Option(5, min=1),
    seed: int = typer.Option(0),
    compact: bool = typer.Option(
        True, "--compact/--no-compact", help="shorten each screen's HTML where its render stays identical"
    ),
) -> None:
    """Record real web apps in Chromium and save a train/validation/test corpus split by app."""
    from render import Renderer

    from .build import (
        BUNDLED_MINIWOB,
        DEFAULT_PINNED,
        DEFAULT_THIRD_PARTY,
        BuildConfig,
        record_corpus,
        score_html_fidelity,
        summarize,
    )
    from .store import save_corpus

    cfg = BuildConfig(
        phone_episodes,
        phone_steps,
        tuple(t for t in tasks.split(",") if t) or BUNDLED_MINIWOB,
        miniwob_episodes,
        miniwob_steps,
        seed,
        DEFAULT_THIRD_PARTY if third_party is None else tuple(a for a in third_party.split(",") if a),
        third_party_episodes,
        third_party_steps,
    )
    from .third_party import third_party_app

    for name in cfg.third_party:
        try:
            third_party_app(name)
        except ValueError as e:
            raise typer.BadParameter(str(e), param_hint="--third-party") from None
    transitions = record_corpus(cfg, log=typer.echo)
    with Renderer() as r:
        scores = score_html_fidelity(transitions, r)
    typer.echo(f"ground-truth HTML fidelity: {summarize(scores)}")
    if compact:
        from .compaction import compact_transitions

        transitions = compact_transitions(transitions)
    pinned = {a: s for a, s in DEFAULT_PINNED.items() if a in {t.app for t in transitions}}
    dd = save_corpus(transitions, out, pinned=pinned)
    typer.echo(f"wrote {out}: " + ", ".join(f"{k}={len(v)}" for k, v in dd.items()))


def _load_policy(spec: str):
    """'explore' or a user callable 'module:function' taking a StepContext."""
    import importlib

    from .explorer import explore

    if spec == "explore":
        return explore
    mod, sep, fn = spec.partition(":")
    if not sep or not mod or not fn:
        raise typer.BadParameter(f"{spec!r} is not 'explore' or module:function", param_hint="--policy")
    try:
        obj = getattr(importlib.import_module(mod), fn)
    except (ImportError, AttributeError) as e:
        raise typer.BadParameter(f"cannot load {spec!r}: {e}", param_hint="--policy") from None
    if not callable(obj):
        raise typer.BadParameter(f"{spec!r} is not callable", param_hint="--policy")
    return obj


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
) -> None:
    """Record any web app in Chromium: a local folder (served under a fake origin) or a dev server on loopback."""
    from render import Renderer

    from .apps import folder_app, parse_viewport, url_app
    from .build import score_html_fidelity, summarize
    from .recorder import CAPTURES, Recorder
    from .store import SPLITS, CorpusError, iter_transitions, load_corpus, save_corpus

    if capture not in CAPTURES:
        raise typer.BadParameter(f"{capture!r} is not one of {', '.join(CAPTURES)}", param_hint="--capture")
    if split != "auto" and split not in SPLITS:
        raise typer.BadParameter(f"{split!r} is not auto or one of {', '.join(SPLITS)}", param_hint="--split")
    try:
        vp = parse_viewport(viewport, scale)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--viewport") from None
    loopback = target.startswith(("http://", "https://"))
    try:
        spec = (
            url_app(target, name, vp, goal)
            if loopback
            else folder_app(target, entry, name, vp, goal, licence)
        )
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="TARGET") from None
    act = _load_policy(policy)
    old, pinned = [], {}
    if append and (out.exists() or out.is_symlink()):
        try:
            dd = load_corpus(out)
        except CorpusError as e:
            raise typer.BadParameter(str(e), param_hint="--out") from None
        for sp, ds in dd.items():
            for t in iter_transitions(ds, skipped=[]):
                old.append(t)
                pinned[t.app] = sp
    if split != "auto":
        pinned[spec.name] = split
    new, failed = [], []
    with Recorder(capture=capture, loopback=loopback) as rec:
        with typer.progressbar(range(episodes), label=f"recording {spec.name}", file=sys.stderr) as bar:
            for e in bar:
                eid = f"{spec.name}-{seed}-{e}"
                try:
                    new += rec.record_trajectory(spec, act, steps, seed * 1000 + e, eid)
                except Exception as err:  # noqa: BLE001 - one broken episode must not lose the others
                    failed.append(
                        f"episode {eid}: {type(err).__name__}: {str(err).splitlines()[0][:200] if str(err) else ''}"
                    )
    for f in failed:
        typer.echo(f"failed: {f}", err=True)
    if not new:
        raise RuntimeError(f"no transitions recorded from {target} ({len(failed)} episodes failed)")
    with Renderer() as r:
        scores = score_html_fidelity(new, r)
    typer.echo(f"capture fidelity of {spec.name}: {summarize(scores)}")
    if compact:
        from .compaction import compact_transitions

        new = compact_transitions(new)
    if split == "auto" and not (set(pinned) - {spec.name}):
        pinned[spec.name] = "train"  # a corpus of one app: it is the training data
    dd = save_corpus(old + new, out, pinned=pinned)
    typer.echo(
        f"recorded {len(new)} transitions in {episodes - len(failed)}/{episodes} episodes; "
        f"wrote {out}: " + ", ".join(f"{k}={len(v)}" for k, v in dd.items())
    )


@app.command("import-android")
def import_android_cmd(
    path: Path = typer.Argument(..., help="AndroidControl TFRecord file"),
    out: Path = typer.Option(..., "-o", "--out", file_okay=False),
    threshold: float = typer.Option(
        0.85, min=0.0, max=1.0, help="blurred SSIM a translated screen must reach"
    ),
    max_off: float = typer.Option(0.08, min=0.0, max=1.0, help="share of pixels a screen may have off"),
    rounds: int = typer.Option(2, min=0, help="revision rounds before a screen is dropped"),
    scale: float = typer.Option(1.0, min=0.25, max=8.0, help="device scale factor of the screenshots"),
    licence: str = typer.Option(
        None, help="the data's licence for the dataset card (default: what the source states)"
    ),
    coder: str = typer.Option(
        "rules", help="reviser: 'rules' (per-region fixes from the screenshot) or a model spec"
    ),
) -> None:
    """Translate AndroidControl episodes to HTML, revise with visual feedback, save the survivors."""
    if not path.is_file():
        raise typer.BadParameter(f"{path}: no such file", param_hint="PATH")
    if coder != "rules":
        _import_with_coder(path, out, threshold, rounds, scale, coder)
        return
    from .phone import import_android_corpus

    rep = import_android_corpus(path, out, scale, threshold, max_off, rounds, licence)
    _report(rep, out)


@app.command("import-droidbot")
def import_droidbot_cmd(
    folder: Path = typer.Argument(..., help="DroidBot output folder (events/, states/, utg.js)"),
    out: Path = typer.Option(..., "-o", "--out", file_okay=False),
    threshold: float = typer.Option(
        0.85, min=0.0, max=1.0, help="blurred SSIM a translated screen must reach"
    ),
    max_off: float = typer.Option(0.08, min=0.0, max=1.0, help="share of pixels a screen may have off"),
    rounds: int = typer.Option(2, min=0, help="revision rounds before a screen is dropped"),
    licence: str = typer.Option(
        None, help="the data's licence for the dataset card (default: what the source states)"
    ),
    app_name: str = typer.Option(None, "--app", help="app name (default: the states' commonest package)"),
) -> None:
    """Import a DroidBot exploration: events joined to their screens, translated, revised, saved."""
    from .phone import import_droidbot

    if not (folder / "events").is_dir() or not (folder / "states").is_dir():
        raise typer.BadParameter(
            f"{folder} is not a DroidBot output folder (no events/ and states/)", param_hint="FOLDER"
        )
    rep = import_droidbot(folder, out, threshold, max_off, rounds, licence, app_name)
    _report(rep, out)


def _report(rep, out: Path) -> None:
    for msg in rep.skipped[:20]:
        typer.echo(f"skipped a bad record: {msg}", err=True)
    typer.echo(rep.summary())
    if rep.kept:
        typer.echo(f"wrote {out}")


def _import_with_coder(
    path: Path, out: Path, threshold: float, rounds: int, scale: float, coder: str
) -> None:
    """import-android with a model as the reviser (whole-document rewrites, plain SSIM floor)."""
    from render import Renderer
    from worldmodel.predict_cli import parse_model

    from .android import import_android
    from .revise import backend_coder, revise_until
    from .store import save_corpus

    revise = backend_coder(str(parse_model(coder, "--coder")))
    kept, dropped, skipped = [], 0, []
    done: dict[int, object] = {}  # consecutive transitions share a screen: revise it once
    with Renderer() as r:
        for t in import_android(path, scale=scale, skipped=skipped):
            for s in (t.screen, t.next_screen):
                if id(s) not in done:
                    done[id(s)] = (
                        s,
                        revise_until(s.image, s.html, revise, r, s.viewport(), threshold, rounds),
                    )
                s.html = done[id(s)][1].html
            rev = done[id(t.next_screen)][1]
            t.meta["revision"] = rev.rounds
            t.meta["html_ssim"] = rev.score
            if rev.passed and done[id(t.screen)][1].passed:
                kept.append(t)
            else:
                dropped += 1
    for msg in skipped:
        typer.echo(f"skipped a bad record: {msg}", err=True)
    typer.echo(f"kept {len(kept)} transitions, dropped {dropped}, skipped {len(skipped)} bad records")
    if kept:
        save_corpus(kept, out)
        typer.echo(f"wrote {out}")


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
    from .store import CorpusError, load_corpus

    try:
        dd = load_corpus(path)
    except CorpusError as e:
        raise typer.BadParameter(str(e), param_hint="PATH") from None
    report = {}
    for split, ds in dd.items():
        cols = ds.select_columns(["app", "action_type"])
        apps, types = Counter(cols["app"]), Counter(cols["action_type"])
        report[split] = {"transitions": len(ds), "apps": dict(apps), "action_types": dict(types)}
        typer.echo(f"[{split}] {len(ds)} transitions, {len(apps)} apps")
        typer.echo("  actions: " + ", ".join(f"{k}={v}" for k, v in sorted(types.items())))
    if fidelity:
        from .fidelity import capture_fidelity, write_worst

        per_app, rows = capture_fidelity(dd)
        typer.echo("capture fidelity (captured HTML rendered in the sandbox vs its own screenshot):")
        typer.echo(
            f"  {'app':34s} {'screens':>7s} {'blurSSIM mean':>13s} {'min':>6s} {'px off mean':>11s} {'max':>6s}"
        )
        for app, f in sorted(per_app.items()):
            typer.echo(
                f"  {app:34s} {f['screens']:7d} {f['blur_ssim_mean']:13.4f} {f['blur_ssim_min']:6.3f}"
                f" {f['pixels_off_mean']:11.2%} {f['pixels_off_max']:6.1%}"
            )
        allf = [r for r in rows if r["error"] is None]
        if allf:
            mean_b = sum(r["blur_ssim"] for r in allf) / len(allf)
            mean_p = sum(r["pixels_off"] for r in allf) / len(allf)
            typer.echo(
                f"  all apps: blurred SSIM {mean_b:.4f}, pixels off {mean_p:.2%}, render failures {len(rows) - len(allf)}"
            )
        for split in report:
            report[split]["capture"] = {a: f for a, f in per_app.items() if a in report[split]["apps"]}
        if worst:
            for p in write_worst(rows, worst, out):
                typer.echo(f"  worst: {p}")
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
    from .store import SPLITS, CorpusError, iter_transitions, load_corpus, save_corpus

    pinned: dict[str, str] = {}
    for item in split:
        name, sep, where = item.partition("=")
        if not sep or not name or where not in SPLITS:
            raise typer.BadParameter(
                f"{item!r} is not APP=SPLIT with SPLIT one of {', '.join(SPLITS)}", param_hint="--split"
            )
        pinned[name] = where
    ts, splits, skipped = [], {}, []
    for src in sources:
        try:
            dd = load_corpus(src)
        except CorpusError as e:
            raise typer.BadParameter(str(e), param_hint="SOURCES") from None
        for sp, ds in dd.items():
            for app in set(ds["app"]):
                had = splits.setdefault(app, sp)
                if had != sp and app not in pinned:
                    raise typer.BadParameter(
                        f"{app} is in {had} in one corpus and in {sp} in {src}: say where with --split {app}=SPLIT",
                        param_hint="SOURCES",
                    )
            ts += list(iter_transitions(ds, skipped))
    unknown = set(pinned) - set(splits)
    if unknown:
        raise typer.BadParameter(f"no corpus has app(s) {', '.join(sorted(unknown))}", param_hint="--split")
    splits.update(pinned)
    dd = save_corpus(ts, out, splits)
    typer.echo(f"wrote {out}: " + ", ".join(f"{k}={len(v)}" for k, v in dd.items()))
    for s in skipped:
        typer.echo(f"skipped a bad record: {s}", err=True)


@app.command("compact")
def compact_cmd(
    path: Path = typer.Argument(None, help="corpus folder (default: the bundled corpus)"),
    out: Path = typer.Option(..., "-o", "--out", file_okay=False, help="where the compacted corpus goes"),
) -> None:
    """Shorten every screen's HTML where its render stays pixel-identical (render/compact.py)."""
    from worldmodel.dataset import iter_transitions

    from .compaction import compact_transitions
    from .store import CorpusError, load_corpus, save_corpus

    try:
        dd = load_corpus(path)
    except CorpusError as e:
        raise typer.BadParameter(str(e), param_hint="PATH") from None
    skipped: list[str] = []
    ts = [t for split in dd for t in iter_transitions(dd[split], skipped)]
    splits = {app: split for split in dd for app in set(dd[split]["app"])}
    new = compact_transitions(ts, lambda done, n: typer.echo(f"compacted {done}/{n} screens"))
    before = sum(len(t.next_screen.html or "") for t in ts) / len(ts)
    after = sum(len(t.next_screen.html or "") for t in new) / len(new)
    save_corpus(new, out, splits)
    typer.echo(
        f"wrote {out}: {len(new)} transitions; next-screen HTML {before:.0f} -> {after:.0f} chars on average"
    )
    for s in skipped:
        typer.echo(f"skipped a bad record: {s}", err=True)
