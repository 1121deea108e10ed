"""`wm corpus build | stats | import-android`."""

from __future__ import annotations

import json
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
    seed: int = typer.Option(0),
) -> None:
    """Record real web apps in Chromium and save a train/validation/test corpus split by app."""
    from render import Renderer

    from .build import (
        DEFAULT_MINIWOB,
        DEFAULT_PINNED,
        BuildConfig,
        record_corpus,
        score_html_fidelity,
        summarize,
    )
    from .store import save_corpus

    cfg = BuildConfig(
        phone_episodes,
        phone_steps,
        tuple(t for t in tasks.split(",") if t) or DEFAULT_MINIWOB,
        miniwob_episodes,
        miniwob_steps,
        seed,
    )
    transitions = record_corpus(cfg, log=typer.echo)
    with Renderer() as r:
        scores = score_html_fidelity(transitions, r)
    typer.echo(f"ground-truth HTML fidelity: {summarize(scores)}")
    pinned = {a: s for a, s in DEFAULT_PINNED.items() if a in {t.app for t in transitions}}
    dd = save_corpus(transitions, out, pinned=pinned)
    typer.echo(f"wrote {out}: " + ", ".join(f"{k}={len(v)}" for k, v in dd.items()))


@app.command("import-android")
def import_android_cmd(
    path: Path = typer.Argument(..., help="AndroidControl TFRecord file"),
    out: Path = typer.Option(..., "-o", "--out", file_okay=False),
    threshold: float = typer.Option(0.8, min=0.0, max=1.0, help="SSIM a translated screen must reach"),
    rounds: int = typer.Option(2, min=0, help="revision rounds before a screen is dropped"),
    scale: float = typer.Option(1.0, min=0.25, max=8.0, help="device scale factor of the screenshots"),
    coder: str = typer.Option(
        "rules", help="reviser: 'rules' (colours sampled from the screenshot) or a model spec"
    ),
) -> None:
    """Translate AndroidControl episodes to HTML, revise with visual feedback, save the survivors."""
    from render import Renderer

    from .android import import_android
    from .revise import backend_coder, revise_until, sample_colours
    from .store import save_corpus

    kept, dropped, skipped = [], 0, []
    done: dict[int, object] = {}  # consecutive transitions share a screen: revise it once

    def rules(img, html, fb):
        return sample_colours(img, html, fb, scale)

    if not path.is_file():
        raise typer.BadParameter(f"{path}: no such file", param_hint="PATH")
    if coder == "rules":
        revise = rules
    else:
        from worldmodel.predict_cli import parse_model

        revise = backend_coder(str(parse_model(coder, "--coder")))

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
    typer.echo(
        f"kept {len(kept)} transitions, dropped {dropped} whose screens never reached SSIM {threshold}, "
        f"skipped {len(skipped)} bad records"
    )
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
