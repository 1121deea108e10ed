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
from .configs import AndroidImportConfig, DroidBotImportConfig, PhoneImportConfig, RecordConfig

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
    cfg: RecordConfig | None = None,
    log: Log = print,
    warn: Log = _stderr,
    num_proc: int = 1,
    shard: str | None = None,
):
    """Record any web app in Chromium (a local folder served under a fake origin, or a dev server
    on loopback) as `cfg` says and save it at `out` (added to the corpus there with
    `cfg.append`). A crashing episode is reported through `warn` and the others are kept.
    Returns the saved DatasetDict. `cfg.held_out`: the last N episodes go to the id-test split
    (the app trains; those episodes are unseen). Episodes are recorded on `num_proc`
    processes, rows streamed to disk; `shard` "I/N" records this machine's block of them as a
    piece (None is returned)."""
    from .parallel import remove_work, work_folder

    cfg = cfg or RecordConfig()
    out = Path(out)
    piece = _shard(shard, num_proc)
    _check_record(cfg)
    spec, loopback = _record_spec(target, cfg)
    old, pinned = _record_splits(out, cfg, spec.name)
    load_policy(cfg.policy)  # a bad policy is named before any browser starts
    units = [(e, e >= cfg.episodes - cfg.held_out) for e in range(cfg.episodes)]
    units = piece.take(units) if piece else units
    work = work_folder(out)
    try:
        gen = dict(spec=spec, capture=cfg.capture, loopback=loopback, policy=cfg.policy, steps=cfg.steps)
        new, done = _record_units(units, num_proc, work, cfg, gen, target, log, warn)
        if piece:
            from .parallel import save_piece

            save_piece(new, out, piece, {"pinned": {spec.name: pinned.get(spec.name, "train")}})
            log(f"{done}; wrote piece {piece} at {out}")
            return None
        dd = _save_recorded(new, old, out, pinned, cfg.split, spec.name)
    finally:
        remove_work(work)
    log(f"{done}; wrote {out}: " + ", ".join(f"{k}={len(v)}" for k, v in dd.items()))
    return dd


def _check_record(cfg: RecordConfig) -> None:
    """An ArgumentError naming the first of `cfg`'s values that cannot be recorded."""
    from .recorder import CAPTURES
    from .store import SPLITS

    if cfg.capture not in CAPTURES:
        raise ArgumentError("capture", f"{cfg.capture!r} is not one of {', '.join(CAPTURES)}")
    if cfg.split != "auto" and cfg.split not in SPLITS:
        raise ArgumentError("split", f"{cfg.split!r} is not auto or one of {', '.join(SPLITS)}")
    if cfg.held_out and cfg.held_out >= cfg.episodes:
        raise ArgumentError(
            "held_out", f"{cfg.held_out} held-out episodes leave none of {cfg.episodes} to train on"
        )
    if cfg.held_out and cfg.split not in ("auto", "train"):
        raise ArgumentError(
            "held_out", f"held-out episodes are of a training app, but --split is {cfg.split}"
        )


def _record_spec(target: str, cfg: RecordConfig):
    """The app to record (an AppSpec) and whether it is served on loopback (a URL)."""
    from .apps import folder_app, parse_viewport, url_app

    try:
        vp = parse_viewport(cfg.viewport, cfg.scale)
    except ValueError as e:
        raise ArgumentError("viewport", str(e)) from None
    loopback = target.startswith(("http://", "https://"))
    try:
        if loopback:
            return url_app(target, cfg.name, vp, cfg.goal), loopback
        return folder_app(target, cfg.entry, cfg.name, vp, cfg.goal, cfg.licence), loopback
    except ValueError as e:
        raise ArgumentError("target", str(e)) from None


def _record_splits(out: Path, cfg: RecordConfig, app: str):
    """The corpus appended to (None: a new one) and the splits its apps are pinned to, with
    this app's (`cfg.split`; a training app when it holds episodes out)."""
    from .store import app_splits

    old, pinned = None, {}
    if cfg.append and (out.exists() or out.is_symlink()):
        old = _load(out, "out")
        pinned = app_splits(old)
    if cfg.split != "auto":
        pinned[app] = cfg.split
    if cfg.held_out:
        if pinned.get(app, "train") != "train":
            raise ArgumentError(
                "held_out",
                f"{app} is a {pinned[app]} app in {out}: held-out episodes are of a training app",
            )
        pinned[app] = "train"
    return old, pinned


def _record_units(units, num_proc: int, work: Path, cfg: RecordConfig, gen: dict, target, log, warn):
    """The recorded rows of `units` (streamed to disk), and the line saying how many were."""
    from .build import summarize
    from .parallel import read_reports, stream_rows

    new = stream_rows(_record_app_rows, units, num_proc, work, compact=cfg.compact, seed=cfg.seed, **gen)
    tot = read_reports(work)
    for f in tot["skipped"]:
        warn(f"failed: {f}")
    if new is None:
        raise RuntimeError(f"no transitions recorded from {target} ({len(tot['skipped'])} episodes failed)")
    log(f"capture fidelity of {gen['spec'].name}: {summarize([r['html_ssim'] for r in tot['rows']])}")
    return new, f"recorded {len(new)} transitions in {len(units) - len(tot['skipped'])}/{len(units)} episodes"


def _save_recorded(new, old, out: Path, pinned: dict, split: str, app: str):
    """The recorded rows saved at `out`, after the appended corpus' rows (its id-test kept)."""
    from datasets import concatenate_datasets

    from .store import save_rows

    if split == "auto" and not (set(pinned) - {app}):
        pinned[app] = "train"  # a corpus of one app: it is the training data
    rows = concatenate_datasets([*(old[s] for s in old), new]) if old else new
    return save_rows(rows, out, pinned=pinned, held=_id_test_rows(old))


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


def _phone_import(importer, source, out, cfg: PhoneImportConfig, log, warn, num_proc, shard, **extra) -> int:
    """Run a corpus.phone importer with the options both imports share; report; how many were kept."""
    rep = importer(
        source,
        out,
        cfg.floor,
        cfg.max_off,
        cfg.rounds,
        cfg.licence,
        id_test_share=cfg.id_test_share,
        num_proc=num_proc,
        shard=_shard(shard, num_proc),
        **extra,
    )
    for msg in rep.skipped[:20]:
        warn(f"skipped a bad record: {msg}")
    log(rep.summary())
    if rep.kept_count:
        log(f"wrote {out}")
    return rep.kept_count


def import_android_corpus(
    path,
    out,
    cfg: AndroidImportConfig | None = None,
    log: Log = print,
    warn: Log = _stderr,
    num_proc: int = 1,
    shard: str | None = None,
) -> int:
    """Translate AndroidControl episodes (a TFRecord file, a folder of shards or a glob) to HTML
    that looks like their screenshots and save the screens that reach blurred SSIM `cfg.floor`
    with at most `cfg.max_off` of their pixels off at `out`. `cfg.coder` 'rules':
    corpus/phone.py's translation with per-region revision from the screenshot; a model spec:
    that model rewrites each draft as a whole document until its render reaches SSIM
    `cfg.floor`. `cfg.id_test_share` holds that share of each training app's episodes out as
    id-test (in-app figures). `num_proc` processes share the work; `shard` "I/N" does this
    machine's block and saves a piece (`merge_corpora` joins them). Returns how many were kept."""
    from .android import tfrecord_files

    cfg = cfg or AndroidImportConfig()
    try:
        files = tfrecord_files(path)
    except FileNotFoundError as e:
        raise ArgumentError("path", str(e)) from None
    if cfg.coder == "rules":
        from .phone import import_android_episodes

        return _phone_import(
            import_android_episodes, path, out, cfg, log, warn, num_proc, shard, scale=cfg.scale
        )
    if num_proc != 1 or shard:
        raise ArgumentError(
            "coder", "a model coder runs in one process, unsharded: leave --num-proc and --shard"
        )
    if len(files) != 1:
        raise ArgumentError("path", "a model coder reads one TFRecord file, not a folder of shards")
    return _import_android_with_model(files[0], out, cfg, log, warn)


def _import_android_with_model(path, out, cfg: AndroidImportConfig, log: Log, warn: Log) -> int:
    """`import_android_corpus` with a model as the coder: each screen revised by the model
    until its render reaches the floor; transitions whose two screens both do are kept."""
    from render import Renderer
    from worldmodel.spec import SpecError, parse_spec

    from .android import import_android
    from .revise import backend_coder
    from .store import save_corpus

    try:
        spec = parse_spec(cfg.coder)
    except SpecError as e:
        raise ArgumentError("coder", str(e)) from None
    kept, dropped, skipped = [], 0, []
    with Renderer() as r:
        revise = backend_coder(spec, r)
        done: dict[int, object] = {}  # consecutive transitions share a screen: revise it once
        for t in import_android(path, scale=cfg.scale, skipped=skipped):
            if _revised(t, done, revise, r, cfg):
                kept.append(t)
            else:
                dropped += 1
    for msg in skipped:
        warn(f"skipped a bad record: {msg}")
    log(
        f"kept {len(kept)} transitions, dropped {dropped} whose screens never reached SSIM {cfg.floor}, "
        f"skipped {len(skipped)} bad records"
    )
    if kept:
        save_corpus(kept, out, id_test_share=cfg.id_test_share)
        log(f"wrote {out}")
    return len(kept)


def _revised(t, done: dict, revise, r, cfg: AndroidImportConfig) -> bool:
    """Revise both screens of `t` in place (each screen once, remembered in `done`); whether
    both reached the floor."""
    from .revise import revise_until

    for s in (t.screen, t.next_screen):
        if id(s) not in done:
            done[id(s)] = (s, revise_until(s.image, s.html, revise, r, s.viewport(), cfg.floor, cfg.rounds))
        s.html = done[id(s)][1].html
    rev = done[id(t.next_screen)][1]
    t.meta["revision"] = rev.rounds
    t.meta["html_ssim"] = rev.score
    return rev.passed and done[id(t.screen)][1].passed


def import_droidbot_corpus(
    folder,
    out,
    cfg: DroidBotImportConfig | None = None,
    log: Log = print,
    warn: Log = _stderr,
    num_proc: int = 1,
    shard: str | None = None,
) -> int:
    """Import a DroidBot exploration (events/, states/, utg.js): events joined to their screens,
    translated, revised, and the screens that reach the floor saved at `out` (with
    `cfg.id_test_share`, the last share of the run held out as id-test). Returns how many
    transitions were kept."""
    from .phone import import_droidbot

    cfg = cfg or DroidBotImportConfig()
    folder = Path(folder)
    if not (folder / "events").is_dir() or not (folder / "states").is_dir():
        raise ArgumentError("folder", f"{folder} is not a DroidBot output folder (no events/ and states/)")
    return _phone_import(import_droidbot, folder, out, cfg, log, warn, num_proc, shard, app=cfg.app)


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
