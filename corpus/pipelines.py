"""The corpus stage's pipelines as functions: build, record, import-android, import-droidbot,
stats, merge, compact, add-id-test.

`wm corpus ...` (wmcli/corpus.py) only parses its arguments and calls these; a Python user calls
them the same way. Each writes its corpus with the atomic save (corpus/store.py) and reports
progress through `log` (and what it skipped or could not do through `warn`). An argument that is
wrong raises `ArgumentError` naming the argument, before anything is written; a failure while
running raises what failed (RuntimeError, RenderError, OSError).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from worldmodel.dataset import CorpusError

from .build import BuildConfig
from .phone import FLOOR, MAX_OFF

Log = Callable[[str], None]


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr)


class ArgumentError(ValueError):
    """A pipeline argument that is wrong; `argument` is the parameter's name."""

    def __init__(self, argument: str, message: str):
        super().__init__(message)
        self.argument = argument


def _load(path, argument: str):
    from .store import load_corpus

    try:
        return load_corpus(path)
    except CorpusError as e:
        raise ArgumentError(argument, str(e)) from None


def build_corpus(
    out,
    cfg: BuildConfig | None = None,
    compact: bool = True,
    id_test: bool = True,
    log: Log = print,
    num_proc: int = 1,
    shard: str | None = None,
):
    """Record the bundled apps live in Chromium (`cfg` says which and how much) and save a
    train/validation/test corpus split by app at `out`, with (`id_test`) an id-test split: new
    episodes (other seeds) of the in-app apps it trains on. The episode plan
    (corpus/episodes.py) is recorded on `num_proc` processes, rows streamed to disk; `shard`
    "I/N" records this machine's block of it as a piece (`merge_corpora` joins them). Returns
    the saved DatasetDict (None for a piece)."""
    from .build import DEFAULT_PINNED, summarize
    from .episodes import as_units, build_plan, record_rows
    from .parallel import read_reports, remove_work, save_piece, stream_rows, work_folder
    from .store import save_rows
    from .third_party import third_party_app

    cfg = cfg or BuildConfig()
    for name in cfg.third_party:
        try:
            third_party_app(name)
        except ValueError as e:
            raise ArgumentError("third_party", str(e)) from None
    plan = build_plan(cfg)
    if id_test:
        from .episodes import held_out_plan
        from .heldout import build_held_out_config

        plan += held_out_plan(build_held_out_config(cfg))
    piece = _shard(shard, num_proc)
    units = piece.take(as_units(plan)) if piece else as_units(plan)
    work = work_folder(Path(out))
    try:
        ds = stream_rows(record_rows, units, num_proc, work, compact=compact)
        if ds is None:
            raise ArgumentError("cfg", "the plan recorded no transitions")
        log(f"recorded {len(ds)} transitions in {len(units)} episodes")
        log(f"ground-truth HTML fidelity: {summarize([r['html_ssim'] for r in read_reports(work)['rows']])}")
        if piece:
            save_piece(ds, Path(out), piece, {"pinned": DEFAULT_PINNED})
            log(f"wrote piece {piece} at {out}")
            return None
        pinned = {a: sp for a, sp in DEFAULT_PINNED.items() if a in set(ds.unique("app"))}
        dd = save_rows(ds, out, pinned=pinned)
    finally:
        remove_work(work)
    log(f"wrote {out}: " + ", ".join(f"{k}={len(v)}" for k, v in dd.items()))
    return dd


def load_policy(spec):
    """'explore', a callable, or a user's 'module:function' taking a StepContext."""
    import importlib

    from .explorer import explore

    if callable(spec):
        return spec
    if spec == "explore":
        return explore
    mod, sep, fn = str(spec).partition(":")
    if not sep or not mod or not fn:
        raise ArgumentError("policy", f"{spec!r} is not 'explore' or module:function")
    try:
        obj = getattr(importlib.import_module(mod), fn)
    except (ImportError, AttributeError) as e:
        raise ArgumentError("policy", f"cannot load {spec!r}: {e}") from None
    if not callable(obj):
        raise ArgumentError("policy", f"{spec!r} is not callable")
    return obj


def record_app(
    target: str,
    out,
    episodes: int = 3,
    steps: int = 8,
    seed: int = 0,
    viewport: str = "phone",
    scale: float = 1.0,
    policy="explore",
    goal: str = "",
    name: str | None = None,
    entry: str = "index.html",
    capture: str = "stylesheets",
    licence: str = "",
    split: str = "auto",
    append: bool = False,
    compact: bool = True,
    held_out: int = 0,
    log: Log = print,
    warn: Log = _stderr,
    num_proc: int = 1,
    shard: str | None = None,
):
    """Record any web app in Chromium (a local folder served under a fake origin, or a dev server
    on loopback) and save it at `out` (added to the corpus there with `append`). A crashing
    episode is reported through `warn` and the others are kept. Returns the saved DatasetDict.
    `held_out`: the last N episodes go to the id-test split (the app trains; those episodes are
    unseen). Episodes are recorded on `num_proc` processes, rows streamed to disk; `shard` "I/N"
    records this machine's block of them as a piece (None is returned)."""
    from datasets import concatenate_datasets

    from .apps import folder_app, parse_viewport, url_app
    from .build import summarize
    from .parallel import read_reports, remove_work, save_piece, stream_rows, work_folder
    from .recorder import CAPTURES
    from .store import SPLITS, app_splits, save_rows

    out = Path(out)
    piece = _shard(shard, num_proc)
    if capture not in CAPTURES:
        raise ArgumentError("capture", f"{capture!r} is not one of {', '.join(CAPTURES)}")
    if split != "auto" and split not in SPLITS:
        raise ArgumentError("split", f"{split!r} is not auto or one of {', '.join(SPLITS)}")
    if held_out and held_out >= episodes:
        raise ArgumentError("held_out", f"{held_out} held-out episodes leave none of {episodes} to train on")
    if held_out and split not in ("auto", "train"):
        raise ArgumentError("held_out", f"held-out episodes are of a training app, but --split is {split}")
    try:
        vp = parse_viewport(viewport, scale)
    except ValueError as e:
        raise ArgumentError("viewport", str(e)) from None
    loopback = target.startswith(("http://", "https://"))
    try:
        spec = (
            url_app(target, name, vp, goal)
            if loopback
            else folder_app(target, entry, name, vp, goal, licence)
        )
    except ValueError as e:
        raise ArgumentError("target", str(e)) from None
    old, pinned = None, {}
    if append and (out.exists() or out.is_symlink()):
        old = _load(out, "out")
        pinned = app_splits(old)
    if split != "auto":
        pinned[spec.name] = split
    if held_out:
        if pinned.get(spec.name, "train") != "train":
            raise ArgumentError(
                "held_out",
                f"{spec.name} is a {pinned[spec.name]} app in {out}: held-out episodes are of a training app",
            )
        pinned[spec.name] = "train"
    load_policy(policy)  # a bad policy is named before any browser starts
    units = [(e, e >= episodes - held_out) for e in range(episodes)]
    units = piece.take(units) if piece else units
    work = work_folder(out)
    try:
        gen = dict(spec=spec, capture=capture, loopback=loopback, policy=policy, steps=steps, seed=seed)
        new = stream_rows(_record_app_rows, units, num_proc, work, compact=compact, **gen)
        tot = read_reports(work)
        for f in tot["skipped"]:
            warn(f"failed: {f}")
        if new is None:
            raise RuntimeError(
                f"no transitions recorded from {target} ({len(tot['skipped'])} episodes failed)"
            )
        log(f"capture fidelity of {spec.name}: {summarize([r['html_ssim'] for r in tot['rows']])}")
        done = f"recorded {len(new)} transitions in {len(units) - len(tot['skipped'])}/{len(units)} episodes"
        if piece:
            save_piece(new, out, piece, {"pinned": {spec.name: pinned.get(spec.name, "train")}})
            log(f"{done}; wrote piece {piece} at {out}")
            return None
        if split == "auto" and not (set(pinned) - {spec.name}):
            pinned[spec.name] = "train"  # a corpus of one app: it is the training data
        rows = concatenate_datasets([*(old[s] for s in old), new]) if old else new
        held = _id_test_rows(old)
        dd = save_rows(rows, out, pinned=pinned, held=held)
    finally:
        remove_work(work)
    log(f"{done}; wrote {out}: " + ", ".join(f"{k}={len(v)}" for k, v in dd.items()))
    return dd


def _id_test_rows(dd) -> set[int]:
    """Positions of a corpus' id-test rows when its splits are laid end to end."""
    from .store import ID_TEST

    held, start = set(), 0
    for s, ds in (dd or {}).items():
        if s == ID_TEST:
            held |= set(range(start, start + len(ds)))
        start += len(ds)
    return held


def _record_app_rows(units, work, spec, capture, loopback, policy, steps, seed, compact) -> Iterator[dict]:
    """Rows of `record_app`'s episodes (units: (episode, held out)), each recorded, scored for
    capture fidelity and compacted; a crashing episode is reported in `work` and skipped."""
    from render import Renderer
    from worldmodel.dataset import to_row

    from .build import score_html_fidelity
    from .compaction import compact_transitions
    from .parallel import report_unit
    from .recorder import Recorder
    from .store import hold_out

    act = load_policy(policy)
    with Recorder(capture=capture, loopback=loopback) as rec, Renderer(cache_size=0) as r:
        for e, held in units:
            eid = f"{spec.name}-{seed}-{e}"
            report = {"kept": 0, "dropped": {}, "skipped": [], "screens": 0, "rows": []}
            try:
                ts = rec.record_trajectory(spec, act, steps, seed * 1000 + e, eid)
            except Exception as err:  # noqa: BLE001 - one broken episode must not lose the others
                first = str(err).splitlines()[0][:200] if str(err) else ""
                report["skipped"].append(f"episode {eid}: {type(err).__name__}: {first}")
                report_unit(Path(work), f"{e:08d}", report)
                continue
            ts = hold_out(ts) if held else ts
            report["rows"] = [{"html_ssim": x} for x in score_html_fidelity(ts, r)]
            report["kept"] = len(ts)
            report_unit(Path(work), f"{e:08d}", report)
            yield from (to_row(t) for t in (compact_transitions(ts, renderer=r) if compact else ts))


def _shard(text: str | None, num_proc: int = 1):
    """A `--shard I/N` as a parallel.Shard (None: the whole job), or an ArgumentError naming it."""
    from .parallel import Shard

    if num_proc < 1:
        raise ArgumentError("num_proc", f"{num_proc} is not >= 1")
    try:
        return Shard.parse(text) if text else None
    except ValueError as e:
        raise ArgumentError("shard", str(e)) from None


def _phone_report(rep, out, log: Log, warn: Log) -> int:
    for msg in rep.skipped[:20]:
        warn(f"skipped a bad record: {msg}")
    log(rep.summary())
    if rep.kept_count:
        log(f"wrote {out}")
    return rep.kept_count


def import_android_corpus(
    path,
    out,
    floor: float = FLOOR,
    max_off: float = MAX_OFF,
    rounds: int = 2,
    licence: str | None = None,
    scale: float = 1.0,
    coder: str = "rules",
    log: Log = print,
    warn: Log = _stderr,
    id_test_share: float = 0.0,
    num_proc: int = 1,
    shard: str | None = None,
) -> int:
    """Translate AndroidControl episodes (a TFRecord file, a folder of shards or a glob) to HTML that looks like their
    screenshots and save the screens that reach blurred SSIM `floor` with at most `max_off`
    of their pixels off at `out`. `coder` 'rules': corpus/phone.py's translation with per-region
    revision from the screenshot; a model spec: that model rewrites each draft as a whole
    document until its render reaches SSIM `floor`. `id_test_share` holds that share of each
    training app's episodes out as id-test (in-app figures). `num_proc` processes share the
    work; `shard` "I/N" does this machine's block and saves a piece (`merge_corpora` joins them).
    Returns how many were kept."""
    from .android import tfrecord_files

    try:
        files = tfrecord_files(path)
    except FileNotFoundError as e:
        raise ArgumentError("path", str(e)) from None
    if coder == "rules":
        from .phone import import_android_episodes

        rep = import_android_episodes(
            path,
            out,
            floor,
            max_off,
            rounds,
            licence,
            scale,
            id_test_share=id_test_share,
            num_proc=num_proc,
            shard=_shard(shard, num_proc),
        )
        return _phone_report(rep, out, log, warn)
    if num_proc != 1 or shard:
        raise ArgumentError(
            "coder", "a model coder runs in one process, unsharded: leave --num-proc and --shard"
        )
    if len(files) != 1:
        raise ArgumentError("path", "a model coder reads one TFRecord file, not a folder of shards")
    path = files[0]
    from render import Renderer
    from worldmodel.spec import SpecError, parse_spec

    from .android import import_android
    from .revise import backend_coder, revise_until
    from .store import save_corpus

    try:
        spec = parse_spec(coder)
    except SpecError as e:
        raise ArgumentError("coder", str(e)) from None
    kept, dropped, skipped = [], 0, []
    done: dict[int, object] = {}  # consecutive transitions share a screen: revise it once
    with Renderer() as r:
        revise = backend_coder(spec, r)
        for t in import_android(path, scale=scale, skipped=skipped):
            for s in (t.screen, t.next_screen):
                if id(s) not in done:
                    done[id(s)] = (
                        s,
                        revise_until(s.image, s.html, revise, r, s.viewport(), floor, rounds),
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
        warn(f"skipped a bad record: {msg}")
    log(
        f"kept {len(kept)} transitions, dropped {dropped} whose screens never reached SSIM {floor}, "
        f"skipped {len(skipped)} bad records"
    )
    if kept:
        save_corpus(kept, out, id_test_share=id_test_share)
        log(f"wrote {out}")
    return len(kept)


def import_droidbot_corpus(
    folder,
    out,
    floor: float = FLOOR,
    max_off: float = MAX_OFF,
    rounds: int = 2,
    licence: str | None = None,
    app: str | None = None,
    log: Log = print,
    warn: Log = _stderr,
    id_test_share: float = 0.0,
    num_proc: int = 1,
    shard: str | None = None,
) -> int:
    """Import a DroidBot exploration (events/, states/, utg.js): events joined to their screens,
    translated, revised, and the screens that reach the floor saved at `out` (with
    `id_test_share`, the last share of the run held out as id-test). Returns how many
    transitions were kept."""
    from .phone import import_droidbot

    folder = Path(folder)
    if not (folder / "events").is_dir() or not (folder / "states").is_dir():
        raise ArgumentError("folder", f"{folder} is not a DroidBot output folder (no events/ and states/)")
    rep = import_droidbot(
        folder,
        out,
        floor,
        max_off,
        rounds,
        licence,
        app,
        id_test_share=id_test_share,
        num_proc=num_proc,
        shard=_shard(shard, num_proc),
    )
    return _phone_report(rep, out, log, warn)


def corpus_stats(
    path=None, fidelity: bool = True, worst: int = 5, out="runs/stats", log: Log = print
) -> dict:
    """Counts per split, app and action type, and (with `fidelity`) how faithfully each app's
    captured HTML renders against its own screenshot; the `worst` screens go to `out` as
    side-by-side PNGs. Returns the report, keyed by split."""
    dd = _load(path, "path")
    report = {}
    for split, ds in dd.items():
        cols = ds.select_columns(["app", "action_type"])
        apps, types = Counter(cols["app"]), Counter(cols["action_type"])
        report[split] = {"transitions": len(ds), "apps": dict(apps), "action_types": dict(types)}
        log(f"[{split}] {len(ds)} transitions, {len(apps)} apps")
        log("  actions: " + ", ".join(f"{k}={v}" for k, v in sorted(types.items())))
    if fidelity:
        from .fidelity import capture_fidelity, write_worst

        per_app, rows = capture_fidelity(dd)
        log("capture fidelity (captured HTML rendered in the sandbox vs its own screenshot):")
        log(
            f"  {'app':34s} {'screens':>7s} {'blurSSIM mean':>13s} {'min':>6s} {'px off mean':>11s} {'max':>6s}"
        )
        for app, f in sorted(per_app.items()):
            log(
                f"  {app:34s} {f['screens']:7d} {f['blur_ssim_mean']:13.4f} {f['blur_ssim_min']:6.3f}"
                f" {f['pixels_off_mean']:11.2%} {f['pixels_off_max']:6.1%}"
            )
        allf = [r for r in rows if r["error"] is None]
        if allf:
            mean_b = sum(r["blur_ssim"] for r in allf) / len(allf)
            mean_p = sum(r["pixels_off"] for r in allf) / len(allf)
            log(
                f"  all apps: blurred SSIM {mean_b:.4f}, pixels off {mean_p:.2%}, render failures {len(rows) - len(allf)}"
            )
        for split in report:
            report[split]["capture"] = {a: f for a, f in per_app.items() if a in report[split]["apps"]}
        if worst:
            for p in write_worst(rows, worst, Path(out)):
                log(f"  worst: {p}")
    return report


def merge_corpora(
    sources: Sequence, out, pinned: dict[str, str] | None = None, log: Log = print, warn: Log = _stderr
):
    """Join corpora recorded in pieces into one at `out`, each app keeping its split (or the one
    `pinned` gives it: {app: split}). The N pieces of one sharded run (`--shard I/N`) are joined
    in order and split as the unsharded run would have split them. Returns the saved DatasetDict."""
    from .parallel import merge_pieces, read_piece
    from .store import SPLITS, app_splits, corpus_transitions, save_corpus

    pieces = [read_piece(Path(src)) for src in sources]
    if any(pieces):
        if not all(pieces) or pinned:
            raise ArgumentError(
                "sources", "pieces of a sharded run merge with each other only, without --split"
            )
        try:
            dd, _ = merge_pieces([Path(src) for src in sources], Path(out))
        except ValueError as e:
            raise ArgumentError("sources", str(e)) from None
        log(f"wrote {out}: " + ", ".join(f"{k}={len(v)}" for k, v in dd.items()))
        return dd

    pinned = dict(pinned or {})
    for app, where in pinned.items():
        if where not in SPLITS:
            raise ArgumentError("pinned", f"{app}={where}: {where!r} is not one of {', '.join(SPLITS)}")
    ts, splits, skipped = [], {}, []
    for src in sources:
        dd = _load(src, "sources")
        for app, sp in app_splits(dd).items():
            had = splits.setdefault(app, sp)
            if had != sp and app not in pinned:
                raise ArgumentError(
                    "sources",
                    f"{app} is in {had} in one corpus and in {sp} in {src}: say where with --split {app}=SPLIT",
                )
        ts += corpus_transitions(dd, skipped)
    unknown = set(pinned) - set(splits)
    if unknown:
        raise ArgumentError("pinned", f"no corpus has app(s) {', '.join(sorted(unknown))}")
    splits.update(pinned)
    dd = save_corpus(ts, out, splits)
    log(f"wrote {out}: " + ", ".join(f"{k}={len(v)}" for k, v in dd.items()))
    for s in skipped:
        warn(f"skipped a bad record: {s}")
    return dd


COMPACT_ROWS = 64  # rows per unit of `compact_corpus`'s work


def compact_corpus(
    path, out, log: Log = print, warn: Log = _stderr, num_proc: int = 1, shard: str | None = None
) -> tuple[float, float]:
    """Shorten every screen's HTML where its render stays pixel-identical (render/compact.py) and
    save the result at `out`, on `num_proc` processes (`shard` "I/N": this machine's block of the
    rows, saved as a piece). Returns the mean next-screen HTML length before and after."""
    from .compaction import compact_rows
    from .parallel import read_reports, remove_work, save_piece, stream_rows, work_folder
    from .store import app_splits, save_rows

    dd = _load(path, "path")
    piece = _shard(shard, num_proc)
    units = [
        (s, a, min(a + COMPACT_ROWS, len(ds)))
        for s, ds in dd.items()
        for a in range(0, len(ds), COMPACT_ROWS)
    ]
    units = piece.take(units) if piece else units
    work = work_folder(Path(out))
    try:
        new = stream_rows(compact_rows, units, num_proc, work, path=None if path is None else str(path))
        if new is None:
            raise ArgumentError("path", "no transition could be read")
        for s in read_reports(work)["skipped"]:
            warn(f"skipped a bad record: {s}")
        before = _mean_len(dd[s].select(range(a, b)) for s, a, b in units)
        after = _mean_len([new])
        if piece:
            save_piece(new, Path(out), piece, {"pinned": app_splits(dd)})
        else:
            save_rows(new, out, app_splits(dd))
    finally:
        remove_work(work)
    log(f"wrote {out}: {len(new)} transitions; next-screen HTML {before:.0f} -> {after:.0f} chars on average")
    return before, after


def _mean_len(parts) -> float:
    n = total = 0
    for ds in parts:
        for batch in ds.select_columns(["next_html"]).iter(batch_size=512):
            n += len(batch["next_html"])
            total += sum(len(h or "") for h in batch["next_html"])
    return total / max(1, n)


def add_id_test(path, out, cfg=None, log: Log = print, num_proc: int = 1, shard: str | None = None):
    """Record new episodes (other seeds) of a corpus' training apps (`cfg`: a
    corpus.heldout.HeldOutConfig; None: its defaults) and save the corpus with them as its id-test
    split at `out` (which may be `path`). Returns the saved DatasetDict."""
    from .heldout import HeldOutConfig, add_held_out

    try:
        piece = _shard(shard, num_proc)
        return add_held_out(path, out, cfg or HeldOutConfig(), log=log, num_proc=num_proc, shard=piece)
    except CorpusError as e:
        raise ArgumentError("path", str(e)) from None
    except ValueError as e:
        raise ArgumentError("cfg", str(e)) from None
