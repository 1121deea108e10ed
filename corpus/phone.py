"""Importing real phone traces as a corpus: AndroidControl episodes and DroidBot output folders.

Both end the same way: each screen is translated from its accessibility tree and screenshot
(corpus/translate.py), revised against the screenshot in pooled render batches until it reaches
the floor (corpus/revise.revise_drafts: blurred SSIM and pixels off, rounds and time bounded),
and a transition is kept when both its screens did. A screen that cannot be translated or
rendered is reported and left out; the rest are kept. The dataset card's licence is the source's
own (a `--licence`, or the one a source folder states), never assumed.

DroidBot (https://github.com/honeynet/droidbot) writes `events/event_*.json` (an input event with
the `state_str` of the screen before and after it), `states/state_*.json` (the view hierarchy)
with `states/screen_*.{png,jpg}` beside it, and `utg.js`. Its views are turned into android_env's
accessibility forest (the real schema, corpus/proto) so one translator serves both sources.
"""

from __future__ import annotations

import gc
import io
import json
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from worldmodel.types import Action, Screen, Transition

from .parallel import report_unit

UNKNOWN_LICENCE = "unknown: the source states none (give one with --licence)"
# What a kept screen must reach against its screenshot. A screen's translation is judged on its
# own; the corpus' mean is well above these (benchmarks/RESULTS.md, eleventh round).
FLOOR, MAX_OFF = 0.85, 0.08


@dataclass
class ImportReport:
    """What an import kept, dropped (and why) and skipped, with its timings."""

    kept: list[Transition] = field(default_factory=list)
    dropped: Counter = field(default_factory=Counter)  # reason -> transitions
    skipped: list[str] = field(default_factory=list)  # records that could not be read at all
    screens: int = 0
    seconds: float = 0.0
    screen_scores: dict = field(default_factory=dict)  # id(screen) -> ScreenRevision
    rows: list[dict] = field(default_factory=list)  # one per screen: app, scores, document size
    streamed: int | None = None  # transitions kept and streamed to disk (then `kept` stays empty)

    @property
    def kept_count(self) -> int:
        return len(self.kept) if self.streamed is None else self.streamed

    @property
    def transitions(self) -> int:
        return self.kept_count + sum(self.dropped.values())

    def summary(self) -> str:
        rate = self.screens / self.seconds if self.seconds else float("nan")
        why = "; ".join(f"{n} {r}" for r, n in self.dropped.most_common(5))
        return (
            f"kept {self.kept_count} of {self.transitions} transitions"
            + (f", dropped {sum(self.dropped.values())} ({why})" if self.dropped else ", dropped 0")
            + f", skipped {len(self.skipped)} bad records; {self.screens} screens in {self.seconds:.1f}s "
            f"({rate:.2f} screens/s)"
        )


def _progress(total: int | None, desc: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="screen", disable=not enabled, file=sys.stderr, leave=False)


def revise_transitions(
    transitions: Iterable[Transition],
    drafts: dict,
    floor: float = FLOOR,
    max_off: float = MAX_OFF,
    rounds: int = 2,
    batch: int = 16,
    renderer=None,
    licence: str | None = None,
    progress: bool = True,
    report: ImportReport | None = None,
) -> ImportReport:
    """Revise the screens of `transitions` (their Drafts in `drafts`, by id(screen)) in batches
    and keep the transitions both of whose screens reach the floor."""
    from render import Renderer

    rep = report or ImportReport()
    t0 = time.perf_counter()
    own = renderer is None
    r = renderer or Renderer(pool_size=2, cache_size=0)
    bar = _progress(None, "screens", progress)
    pending: list[Transition] = []

    def flush():
        todo, seen = [], set()
        for t in pending:
            for s in (t.screen, t.next_screen):
                if id(s) not in rep.screen_scores and id(s) not in seen and id(s) in drafts:
                    seen.add(id(s))
                    todo.append(s)
        if todo:
            _revise_screens(todo, drafts, r, (floor, max_off, rounds), rep)
            bar.update(len(todo))
        _keep(pending, rep, licence)
        pending.clear()

    try:
        for t in transitions:
            pending.append(t)
            if len({id(s) for p in pending for s in (p.screen, p.next_screen)}) >= batch:
                flush()
        flush()
    finally:
        bar.close()
        if own:
            r.close()
    rep.seconds += time.perf_counter() - t0
    return rep


def _revise_screens(todo: list, drafts: dict, r, how: tuple, rep: ImportReport) -> None:
    """Revise one batch of screens (`how`: floor, max_off, rounds), giving each its revised HTML,
    its score in `rep.screen_scores` and a row in `rep.rows`; a batch that crashes is reported
    and its screens scored None."""
    from .revise import revise_drafts

    floor, max_off, rounds = how
    try:
        revs = revise_drafts(
            [(drafts[id(s)], np.asarray(s.image.convert("RGB"))) for s in todo],
            r,
            floor,
            max_off,
            rounds,
            deadline_s=30.0 * max(1, len(todo)),
        )
    except Exception as e:  # noqa: BLE001 - a batch that crashes is reported, the rest kept
        revs = [None] * len(todo)
        rep.skipped.append(f"a batch of {len(todo)} screens failed: {type(e).__name__}: {str(e)[:200]}")
    for s, rv in zip(todo, revs):
        rep.screen_scores[id(s)] = rv
        if rv is not None:
            s.html = rv.html
            last, first = rv.final or rv.rounds[-1], rv.rounds[0]
            rep.rows.append(
                {
                    "app": s.app,
                    "passed": rv.passed,
                    "blur_ssim": last.get("blur_ssim"),
                    "pixels_off": last.get("pixels_off"),
                    "first_pixels_off": first.get("pixels_off"),
                    "chars": len(rv.html),
                    "reason": rv.reason,
                }
            )
        drafts.pop(id(s), None)  # the draft (and its screenshot copy) is done with
    rep.screens += len(todo)


def _keep(pending: list, rep: ImportReport, licence: str | None) -> None:
    """Keep the transitions both of whose screens passed; count the rest by why they did not."""
    scores = rep.screen_scores
    for t in pending:
        a, b = scores.get(id(t.screen)), scores.get(id(t.next_screen))
        if a is None or b is None:
            rep.dropped["screens that could not be revised"] += 1
            continue
        t.meta["revision"] = _jsonable(b.rounds)
        t.meta["html_ssim"] = b.score
        t.meta["html_pixels_off"] = (b.final or {}).get("pixels_off")
        if licence:
            t.meta["licence"] = licence
        if a.passed and b.passed:
            rep.kept.append(t)
        else:
            rep.dropped[_short(b.reason if not b.passed else a.reason)] += 1


def _short(reason: str) -> str:
    """A drop reason without its numbers, so reasons can be counted."""
    if "render failed" in reason:
        return reason
    parts = []
    if "SSIM" in reason:
        parts.append("below the blurred-SSIM floor")
    if "pixels off" in reason:
        parts.append("too many pixels off")
    return " and ".join(parts) or reason


def _jsonable(rounds: list[dict]) -> list[dict]:
    return [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()} for r in rounds]


def source_licence(path: Path) -> str | None:
    """A licence the source states beside its data: a LICENSE file, or a manifest's licence field."""
    folder = path if path.is_dir() else path.parent
    for name in ("LICENSE", "LICENSE.txt", "LICENCE", "COPYING"):
        f = folder / name
        if f.is_file():
            first = f.read_text(errors="replace").strip().splitlines()
            return (first[0][:80] if first else name) + f" (from {name})"
    m = folder / "manifest.json"
    if m.is_file():
        try:
            d = json.loads(m.read_text())
        except ValueError:
            return None
        for k in ("license", "licence"):
            if isinstance(d, dict) and isinstance(d.get(k), str):
                return d[k]
    return None


def import_android_episodes(
    path: str | Path,
    out: str | Path | None = None,
    floor: float = FLOOR,
    max_off: float = MAX_OFF,
    rounds: int = 2,
    licence: str | None = None,
    scale: float = 1.0,
    id_test_share: float = 0.0,
    progress: bool = True,
    renderer=None,
    num_proc: int = 1,
    shard=None,
) -> ImportReport:
    """AndroidControl episodes (a TFRecord file, a folder of shards or a glob) to a corpus.

    With `out`, rows are streamed to disk by `num_proc` processes (corpus/parallel.py; each its
    own Chromium; the same corpus for any number), split by app (`id_test_share`: that share of
    each training app's episodes held out as id-test) and saved there; with `shard` (a
    parallel.Shard) only that block of the episodes, saved as a piece for `wm corpus merge`.
    Without `out`, the kept transitions come back in `ImportReport.kept`, in this process."""
    from .android import android_episode_units, import_android

    lic = licence or source_licence(Path(path)) or UNKNOWN_LICENCE
    units, sizes = android_episode_units(path)
    opts = dict(scale=scale, floor=floor, max_off=max_off, rounds=rounds, licence=lic)
    if out is not None:
        return _stream_import(_android_rows, units, out, num_proc, shard, id_test_share, opts, sizes)
    drafts: dict = {}
    rep = ImportReport()
    t0 = time.perf_counter()
    for f in sorted({u[0] for u in units}):
        trs = import_android(f, scale=scale, skipped=rep.skipped, drafts=drafts)
        revise_transitions(
            trs, drafts, floor, max_off, rounds, licence=lic, progress=progress, renderer=renderer, report=rep
        )
    rep.seconds = time.perf_counter() - t0
    return rep


# ---- DroidBot --------------------------------------------------------------------------------


def _droidbot_forest(state: dict, sx: float, sy: float) -> bytes:
    """A DroidBot state's views as android_env's AndroidAccessibilityForest, bounds scaled by (sx, sy)."""
    from .a11y import forest_class
    from .translate import TYPE_APPLICATION

    f = forest_class()()
    w = f.windows.add(window_type=TYPE_APPLICATION, layer=1, id=1)
    views = state.get("views") or []
    lo = [None, None, None, None]
    for v in views:
        n = w.tree.nodes.add()
        n.unique_id = int(v.get("temp_id", 0))
        n.child_ids.extend(int(c) for c in v.get("children") or [])
        (x0, y0), (x1, y1) = v.get("bounds") or [[0, 0], [0, 0]]
        b = n.bounds_in_screen
        b.left, b.top, b.right, b.bottom = (round(x0 * sx), round(y0 * sy), round(x1 * sx), round(y1 * sy))
        n.class_name = v.get("class") or ""
        n.package_name = v.get("package") or ""
        n.text = v.get("text") or ""
        n.content_description = v.get("content_description") or ""
        n.view_id_resource_name = v.get("resource_id") or ""
        for k_src, k_dst in (
            ("clickable", "is_clickable"),
            ("checkable", "is_checkable"),
            ("checked", "is_checked"),
            ("editable", "is_editable"),
            ("is_password", "is_password"),
            ("visible", "is_visible_to_user"),
            ("enabled", "is_enabled"),
            ("focused", "is_focused"),
            ("scrollable", "is_scrollable"),
            ("long_clickable", "is_long_clickable"),
            ("selected", "is_selected"),
        ):
            setattr(n, k_dst, bool(v.get(k_src)))
        if v.get("parent", -1) == -1:
            lo = [b.left, b.top, b.right, b.bottom]
    if lo[0] is not None:
        (
            w.bounds_in_screen.left,
            w.bounds_in_screen.top,
            w.bounds_in_screen.right,
            w.bounds_in_screen.bottom,
        ) = lo
    return f.SerializeToString()


def _centre(view: dict | None, sx: float, sy: float) -> tuple[float, float] | None:
    if not view or not view.get("bounds"):
        return None
    (x0, y0), (x1, y1) = view["bounds"]
    return (x0 + x1) / 2 * sx, (y0 + y1) / 2 * sy


def droidbot_action(ev: dict, sx: float, sy: float, size: tuple[int, int]) -> Action | str:
    """A DroidBot event as the project's Action, or a string naming why it cannot be one."""
    kind = ev.get("event_type")
    pt = _centre(ev.get("view"), sx, sy)
    if pt is None and ev.get("x") is not None and ev.get("y") is not None:
        pt = (float(ev["x"]) * sx, float(ev["y"]) * sy)
    if pt is not None:  # a view partly off the screen: its centre clamped onto it
        pt = (min(max(pt[0], 0.0), size[0] - 1.0), min(max(pt[1], 0.0), size[1] - 1.0))
    if kind in ("touch", "long_touch"):
        if pt is None:
            return f"{kind} without a point"
        return Action("tap" if kind == "touch" else "long_press", x=pt[0], y=pt[1])
    if kind == "scroll":
        d = (ev.get("direction") or "").lower()
        if d not in ("up", "down", "left", "right"):
            return f"scroll direction {ev.get('direction')!r}"
        x, y = pt if pt is not None else (size[0] / 2, size[1] / 2)
        # DroidBot's UP drags the finger down the view: the view travels up, as our scroll 'up'
        return Action("scroll", x=x, y=y, direction=d)
    if kind == "swipe":
        try:
            (ax, ay), (bx, by) = ev["start_xy"], ev["end_xy"]
        except (KeyError, TypeError, ValueError):
            return "swipe without start/end points"
        dx, dy = bx - ax, by - ay
        d = ("right" if dx > 0 else "left") if abs(dx) >= abs(dy) else ("down" if dy > 0 else "up")
        return Action("swipe", x=ax * sx, y=ay * sy, direction=d)
    if kind == "set_text":
        text = ev.get("text")
        if not isinstance(text, str):
            return "set_text without text"
        return Action("type", text=text, x=pt[0] if pt else None, y=pt[1] if pt else None)
    if kind == "key":
        name = (ev.get("name") or "").upper()
        if name == "BACK":
            return Action("back")
        if name == "HOME":
            return Action("home")
        if name == "ENTER":
            return Action("key", key="Enter")
        return f"key {name or '?'}"
    return f"{kind or 'unknown'} event"


def _find_image(states: Path, tag: str) -> Path | None:
    for ext in ("png", "jpg", "jpeg"):
        p = states / f"screen_{tag}.{ext}"
        if p.is_file():
            return p
    return None


def read_droidbot(
    folder: str | Path,
    skipped: list[str],
    drop: Counter,
    drafts: dict | None = None,
    app: str | None = None,
    steps: range | None = None,
) -> Iterator[Transition]:
    """Transitions from a DroidBot output folder: each usable event joined (by `state_str`) to
    the screens before and after it. What cannot be used is counted in `drop` by reason; a
    state that cannot be read is named in `skipped`. `steps`: only the events at these positions
    (a pipeline's share; states are counted in `drop` only by the share that starts at 0)."""
    folder = Path(folder)
    ev_dir, st_dir = folder / "events", folder / "states"
    if not ev_dir.is_dir() or not st_dir.is_dir():
        raise FileNotFoundError(f"{folder} is not a DroidBot output folder (no events/ and states/)")
    states = _droidbot_states(st_dir, skipped, drop, steps is None or steps.start == 0)
    if app is None:
        pk = Counter(st.get("foreground_activity", "").split("/")[0] for st, _ in states.values())
        pk.pop("", None)
        pk.pop("com.android.launcher3", None)
        app = pk.most_common(1)[0][0] if pk else folder.name
    screens: dict[str, Screen | None] = {}
    scale_of: dict[int, float] = {}  # id(screen) -> screenshot pixels per phone pixel

    def screen(key: str) -> Screen | None:
        if key not in screens:
            screens[key] = _droidbot_screen(*states[key], app, skipped, scale_of, drafts)
        return screens[key]

    episode = folder.name
    for step, p in enumerate(sorted(ev_dir.glob("event_*.json"))):
        if steps is not None and step not in steps:
            continue
        try:
            rec = json.loads(p.read_text())
            ev = rec["event"]
            a_key, b_key = rec.get("start_state"), rec.get("stop_state")
        except (ValueError, KeyError, TypeError) as e:
            skipped.append(f"{p.name}: not a DroidBot event ({type(e).__name__}: {e})")
            continue
        if a_key not in states or b_key not in states:
            drop["events whose screens were not recorded"] += 1
            continue
        a = screen(a_key)
        if a is None:
            drop["events on a screen that could not be translated"] += 1
            continue
        s_ = scale_of[id(a)]
        act = droidbot_action(ev, s_, s_, a.size)
        if isinstance(act, str):
            drop[act] += 1
            continue
        b = screen(b_key)
        if b is None:
            drop["events on a screen that could not be translated"] += 1
            continue
        meta = {"source": "droidbot", "event": rec.get("event_str", "")[:200], "tag": rec.get("tag", "")}
        yield Transition(a, act, b, "", app, episode, step, meta)


def _droidbot_states(st_dir: Path, skipped: list[str], drop: Counter, count: bool) -> dict:
    """A DroidBot folder's states by `state_str`: (state JSON, screenshot path); what cannot be
    read is named in `skipped` or counted in `drop`, when `count` (one share counts them)."""
    states: dict[str, tuple[dict, Path]] = {}
    for p in sorted(st_dir.glob("state_*.json")):
        try:
            st = json.loads(p.read_text())
        except ValueError as e:
            if count:
                skipped.append(f"{p.name}: not JSON ({e})")
            continue
        img = _find_image(st_dir, p.stem[len("state_") :])
        if img is None or not st.get("state_str"):
            if count:
                drop["states without a screenshot"] += 1
            continue
        states.setdefault(st["state_str"], (st, img))
    return states


def _droidbot_screen(
    st: dict, img_path: Path, app: str, skipped: list, scale_of: dict, drafts
) -> Screen | None:
    """One DroidBot state translated (its Draft kept in `drafts`, its screenshot pixels per phone
    pixel in `scale_of`), or None, named in `skipped`, when it cannot be."""
    from .translate import translate

    try:
        png = img_path.read_bytes()
        im = Image.open(io.BytesIO(png)).convert("RGB")
        W, H = im.size
        # a state's width/height are swapped for portrait screens: the phone's width is the smaller
        pw = min(int(st.get("width") or W), int(st.get("height") or H)) or W
        s_ = W / pw
        forest = _droidbot_forest(st, s_, s_)
        d = translate(forest, im, 1.0, (W, H))
        s = Screen(im, html=d.html(), app=app)
        scale_of[id(s)] = s_
        if drafts is not None:
            drafts[id(s)] = d
        return s
    except Exception as e:  # noqa: BLE001 - a screen that cannot be read is reported, the rest kept
        skipped.append(f"{img_path.name}: could not translate: {type(e).__name__}: {str(e)[:200]}")
        return None


def import_droidbot(
    folder: str | Path,
    out: str | Path | None = None,
    floor: float = FLOOR,
    max_off: float = MAX_OFF,
    rounds: int = 2,
    licence: str | None = None,
    app: str | None = None,
    id_test_share: float = 0.0,
    progress: bool = True,
    renderer=None,
    num_proc: int = 1,
    shard=None,
) -> ImportReport:
    """A DroidBot output folder to a corpus at `out`, streamed, parallel and sharded as
    `import_android_episodes` is (its run cut into stretches of DROIDBOT_CHUNK events); without
    `out`, the kept transitions come back in `ImportReport.kept`."""
    folder = Path(folder)
    lic = licence or source_licence(folder) or UNKNOWN_LICENCE
    if out is not None:
        opts = dict(app=app, floor=floor, max_off=max_off, rounds=rounds, licence=lic)
        units = droidbot_units(folder)
        sizes = [end - first for _, first, end in units]
        return _stream_import(_droidbot_rows, units, out, num_proc, shard, id_test_share, opts, sizes)
    drafts: dict = {}
    rep = ImportReport()
    drop: Counter = Counter()
    t0 = time.perf_counter()
    trs = read_droidbot(folder, rep.skipped, drop, drafts, app)
    revise_transitions(
        trs, drafts, floor, max_off, rounds, licence=lic, progress=progress, renderer=renderer, report=rep
    )
    rep.dropped.update({f"{k} (not usable)": v for k, v in drop.items()})
    rep.seconds = time.perf_counter() - t0
    return rep


# ---- streamed, parallel and sharded (corpus/parallel.py) -------------------------------------

DROIDBOT_CHUNK = 40  # events of a DroidBot run per unit of work (translated and revised on its own)


def droidbot_units(folder: Path) -> list[tuple[str, int, int]]:
    """A DroidBot run's events in stretches of DROIDBOT_CHUNK: (folder, first, end) each."""
    n = len(list((folder / "events").glob("event_*.json")))
    return [(str(folder), a, min(n, a + DROIDBOT_CHUNK)) for a in range(0, n, DROIDBOT_CHUNK)]


def _android_rows(units, work, scale, floor, max_off, rounds, licence) -> Iterator[dict]:
    """Corpus rows of AndroidControl episodes (units: (file, position), in file order), one
    episode at a time; a file is read forward once, past the episodes other processes took."""
    from render import Renderer

    from .android import episode_transitions, read_episodes

    work = Path(work)
    at, records = (None, -1), iter(())  # the file being read and the position last taken
    with Renderer(pool_size=2, cache_size=0) as r:
        for file, k in units:
            if at[0] != file or at[1] >= k:
                records = enumerate(read_episodes(file))
            ep = next(ep for i, ep in records if i == k)
            at = (file, k)
            skipped: list[str] = []
            drafts: dict = {}
            trs = list(episode_transitions(ep, scale, skipped, drafts))
            key = f"{Path(file).name}-{k:08d}"
            if trs:
                yield from _unit_rows(trs, drafts, skipped, key, work, r, (floor, max_off, rounds, licence))
            elif skipped:  # an episode with nothing left to revise still reports what was wrong
                report_unit(work, key, _unit_report(ImportReport(skipped=skipped)))


def _droidbot_rows(units, work, app, floor, max_off, rounds, licence) -> Iterator[dict]:
    """Corpus rows of stretches of DroidBot runs (units: (folder, first event, end))."""
    from render import Renderer

    work = Path(work)
    with Renderer(pool_size=2, cache_size=0) as r:
        for folder, a, b in units:
            skipped: list[str] = []
            drop: Counter = Counter()
            drafts: dict = {}
            trs = list(read_droidbot(folder, skipped, drop, drafts, app, steps=range(a, b)))
            unusable = {f"{k} (not usable)": v for k, v in drop.items()}
            key = f"{Path(folder).name}-{a:08d}"
            yield from _unit_rows(
                trs, drafts, skipped, key, work, r, (floor, max_off, rounds, licence), unusable
            )


def _unit_rows(trs, drafts, skipped, key, work, renderer, revision, unusable=None) -> Iterator[dict]:
    """Revise one unit's transitions, report it, write its assets, and yield its kept rows."""
    from render.assets import STORE, names_in
    from worldmodel.dataset import to_row

    floor, max_off, rounds, licence = revision
    rep = ImportReport(skipped=list(skipped))
    skipped.clear()
    revise_transitions(
        trs, drafts, floor, max_off, rounds, renderer=renderer, licence=licence, progress=False, report=rep
    )
    rep.dropped.update(unusable or {})
    report_unit(work, key, _unit_report(rep))
    STORE.write(
        {n for t in rep.kept for s in (t.screen, t.next_screen) for n in names_in(s.html)}, work / "assets"
    )
    for t in rep.kept:
        yield to_row(t)
    # A unit's renders (their PNGs) sit in reference cycles with the browser calls' coroutine
    # frames, which only Python's full collection frees, and it comes rarely: on real phone
    # screens memory climbed ~12 MB a unit and grew with the input (benchmarks/import_scale.py).
    rep = trs = None
    gc.collect()


def _unit_report(rep: ImportReport) -> dict:
    return {
        "kept": len(rep.kept),
        "dropped": dict(rep.dropped),
        "skipped": rep.skipped,
        "screens": rep.screens,
        "rows": rep.rows,
    }


def _stream_import(make_rows, units, out, num_proc, shard, id_test_share, opts, sizes) -> ImportReport:
    """Run `make_rows` over `units` (this shard's block) on `num_proc` processes and save the
    rows at `out`: a corpus, or with `shard` a piece. The machines' blocks carry near-equal
    `sizes` (screens or events); the processes share their machine's units as they go. Returns
    the summed report."""
    from render.assets import STORE

    from .parallel import read_reports, remove_work, save_piece, stream_rows, work_folder
    from .store import save_rows

    t0 = time.perf_counter()
    out = Path(out)
    if shard is not None:
        units = shard.take(units, sizes)
    work = work_folder(out)
    try:
        ds = stream_rows(make_rows, units, num_proc, work, **opts)
        tot = read_reports(work)
        STORE.add_folder(work / "assets")
        if ds is not None and len(ds):
            if shard is not None:
                save_piece(ds, out, shard, {"id_test_share": id_test_share})
            else:
                save_rows(ds, out, id_test_share=id_test_share)
        del ds
    finally:
        remove_work(work)
    rep = ImportReport(
        dropped=tot["dropped"], skipped=tot["skipped"], screens=tot["screens"], rows=tot["rows"]
    )
    rep.streamed = tot["kept"]
    rep.seconds = time.perf_counter() - t0
    return rep
