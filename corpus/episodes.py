"""The one episode planner of the bundled corpus, and recording a plan's episodes as corpus rows.

`wm corpus build` records training episodes of the bundled apps and `wm corpus add-id-test` (and
build's own id-test) held-out episodes of its training apps. Both are a list of `Episode`s: an
app, a seed, a step budget, a policy and whether it is held out. The plan is written here once;
`record_rows` records any list of them in order, one Chromium per process, each episode's
screens scored for capture fidelity and compacted, and yields its rows, so a pipeline runs a
plan on every core and across machines through corpus/parallel.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from worldmodel.types import Transition

# Seeds of held-out episodes start here (within one build seed's thousand): a build records
# episodes 0..N-1, so up to 500 training episodes per app never meet a held-out one.
ID_TEST_OFFSET = 500


@dataclass(frozen=True)
class Episode:
    """One episode to record: `kind` phone, miniwob or third_party; `name` the app or task."""

    kind: str
    name: str
    seed: int
    steps: int
    solve: bool = False  # a MiniWoB++ task's solver drives it instead of exploration
    held_out: bool = False  # it goes to the id-test split

    @property
    def app(self) -> str:
        return {"phone": f"phone-{self.name}", "miniwob": f"miniwob-{self.name}"}.get(self.kind, self.name)

    @property
    def episode_id(self) -> str:
        """The seed stays visible: a held-out episode never shares an id with a training one."""
        return f"phone-{self.name}-{self.seed}" if self.kind == "phone" else f"{self.name}-{self.seed}"


def build_plan(cfg) -> list[Episode]:
    """The training episodes a `wm corpus build` (corpus.build.BuildConfig) records, in order:
    phone apps in turn, then each MiniWoB++ task (the solver on every other episode of a solved
    task; with `more_tasks` EXTRA_MINIWOB's after the chosen ones), then each third-party app."""
    from .apps import PHONE_APPS
    from .explorer import SOLVED_TASKS

    base = cfg.seed * 1000
    out = [
        Episode("phone", PHONE_APPS[e % len(PHONE_APPS)], base + e, cfg.phone_steps)
        for e in range(cfg.phone_episodes)
    ]
    tasks = list(cfg.miniwob_tasks)
    if cfg.more_tasks:
        from .build import EXTRA_MINIWOB

        tasks += [t for t in EXTRA_MINIWOB if t not in tasks]
    out += [
        Episode("miniwob", t, base + e, cfg.miniwob_steps, solve=t in SOLVED_TASKS and e % 2 == 0)
        for t in tasks
        for e in range(cfg.miniwob_episodes)
    ]
    out += [
        Episode("third_party", n, base + e, cfg.third_party_steps)
        for n in cfg.third_party
        for e in range(cfg.third_party_episodes)
    ]
    return out


def held_out_plan(cfg) -> list[Episode]:
    """The held-out episodes a corpus.heldout.HeldOutConfig records, seeds from ID_TEST_OFFSET
    up, solved as a build solves them (every other episode of a solved task)."""
    from .explorer import SOLVED_TASKS

    base = cfg.seed * 1000 + ID_TEST_OFFSET
    out = [
        Episode("phone", a, base + e, cfg.phone_steps, held_out=True)
        for a in cfg.phone_apps
        for e in range(cfg.phone_episodes)
    ]
    out += [
        Episode("miniwob", t, base + e, cfg.miniwob_steps, t in SOLVED_TASKS and e % 2 == 0, True)
        for t in cfg.miniwob_tasks
        for e in range(cfg.miniwob_episodes)
    ]
    out += [
        Episode("third_party", n, base + e, cfg.third_party_steps, held_out=True)
        for n in cfg.third_party
        for e in range(cfg.third_party_episodes)
    ]
    return out


def record_episode(rec, ep: Episode) -> list[Transition]:
    """Record `ep` with a corpus.recorder.Recorder; held-out episodes come back marked so."""
    from .apps import miniwob_app, phone_app
    from .explorer import explore, solver_policy
    from .store import hold_out
    from .third_party import third_party_app

    if ep.kind == "phone":
        spec = phone_app(ep.name, ep.seed)
    elif ep.kind == "miniwob":
        spec = miniwob_app(ep.name)
    else:
        spec = third_party_app(ep.name)
    ts = rec.record_trajectory(spec, solver_policy if ep.solve else explore, ep.steps, ep.seed, ep.episode_id)
    return hold_out(ts) if ep.held_out else ts


def record_rows(units, work, compact: bool = True) -> Iterator[dict]:
    """Corpus rows of every episode in `units` (Episode fields as tuples), in order: recorded,
    scored for capture fidelity (corpus.build.score_html_fidelity) and compacted; what each
    recorded is written to `work` for the parent's log."""
    from render import Renderer
    from worldmodel.dataset import to_row

    from .build import score_html_fidelity
    from .compaction import compact_transitions
    from .parallel import report_unit
    from .recorder import Recorder

    with Recorder() as rec, Renderer(cache_size=0) as r:  # compaction compares fresh renders
        for fields in units:
            ep = Episode(*fields)
            ts = record_episode(rec, ep)
            scores = score_html_fidelity(ts, r)
            if compact:
                ts = compact_transitions(ts, renderer=r)
            report_unit(Path(work), ep.episode_id, _report(ep, ts, scores))
            yield from (to_row(t) for t in ts)


def _report(ep: Episode, ts, scores) -> dict:
    return {
        "kept": len(ts),
        "dropped": {},
        "skipped": [],
        "screens": len(ts),
        "rows": [{"app": ep.app, "episode": ep.episode_id, "html_ssim": s} for s in scores],
    }


def as_units(plan: list[Episode]) -> list[tuple]:
    """A plan as plain tuples (what corpus/parallel.py hands the processes)."""
    return [(e.kind, e.name, e.seed, e.steps, e.solve, e.held_out) for e in plan]
