"""The in-app test split: new episodes of apps the corpus trains on, held out as `id-test`.

Code2World measures a world model both in distribution (apps seen in training, episodes not)
and out of it (apps never seen). The app splits give the second; this records the first: for
chosen training apps, whole episodes with seeds no training episode used (`seed*1000 + 500 + e`,
where a build's own episodes are `seed*1000 + e`), marked held out (corpus/store.py's
`hold_out`) so every later save keeps them in `id-test`. Only tasks of
corpus.build.BUNDLED_MINIWOB and bundled third-party apps are ever recorded here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from worldmodel.types import Transition

from .build import BUNDLED_MINIWOB, DEFAULT_PINNED, DEFAULT_THIRD_PARTY, score_html_fidelity, summarize

# Seeds of held-out episodes start here (within one build seed's thousand): a build records
# episodes 0..N-1, so up to 500 training episodes per app never meet a held-out one.
ID_TEST_OFFSET = 500

# The bundled corpus' in-app apps: every phone app that trains (phone-settings is a test app),
# fifteen training MiniWoB++ tasks of varied kinds (buttons, boxes, typing, menus, trees,
# autocomplete, dialogs) and the three bundled third-party apps that train.
IN_APP_PHONE = ("notes", "contacts")
IN_APP_MINIWOB = (
    "click-button",
    "click-checkboxes",
    "enter-text",
    "focus-text",
    "click-button-sequence",
    "click-collapsible",
    "click-test",
    "focus-text-2",
    "click-option",
    "navigate-tree",
    "use-autocomplete",
    "click-dialog",
    "click-menu",
    "enter-text-2",
    "social-media",
)
IN_APP_THIRD_PARTY = ("spectre-docs", "98css-docs", "impress-demo")
assert set(IN_APP_MINIWOB) <= set(BUNDLED_MINIWOB)
assert all(DEFAULT_PINNED[f"miniwob-{t}"] == "train" for t in IN_APP_MINIWOB)
assert set(IN_APP_THIRD_PARTY) <= set(DEFAULT_THIRD_PARTY)


@dataclass
class HeldOutConfig:
    phone_apps: Sequence[str] = IN_APP_PHONE
    phone_episodes: int = 3  # per phone app
    phone_steps: int = 10
    miniwob_tasks: Sequence[str] = IN_APP_MINIWOB
    miniwob_episodes: int = 2
    miniwob_steps: int = 5
    third_party: Sequence[str] = IN_APP_THIRD_PARTY
    third_party_episodes: int = 3
    third_party_steps: int = 5
    seed: int = 0


def check_config(cfg: HeldOutConfig) -> None:
    """ValueError naming the first app this may not record (an unbundled MiniWoB++ task, say)."""
    from .apps import PHONE_APPS
    from .third_party import third_party_app

    for a in cfg.phone_apps:
        if a not in PHONE_APPS:
            raise ValueError(f"no phone app {a!r}: one of {', '.join(PHONE_APPS)}")
    for t in cfg.miniwob_tasks:
        if t not in BUNDLED_MINIWOB:
            raise ValueError(
                f"MiniWoB++ task {t!r} is not bundled (corpus.build.BUNDLED_MINIWOB); only those are recorded"
            )
    for n in cfg.third_party:
        third_party_app(n)


def planned(cfg: HeldOutConfig) -> list[tuple[str, str, int]]:
    """(kind, name, seed) of every held-out episode `cfg` records, in order."""
    base = cfg.seed * 1000 + ID_TEST_OFFSET
    out = [("phone", a, base + e) for a in cfg.phone_apps for e in range(cfg.phone_episodes)]
    out += [("miniwob", t, base + e) for t in cfg.miniwob_tasks for e in range(cfg.miniwob_episodes)]
    out += [("third_party", n, base + e) for n in cfg.third_party for e in range(cfg.third_party_episodes)]
    return out


def app_name(kind: str, name: str) -> str:
    return {"phone": f"phone-{name}", "miniwob": f"miniwob-{name}"}.get(kind, name)


def episode_id(kind: str, name: str, seed: int) -> str:
    """The episode id corpus.build.record_corpus would give the episode: the seed stays visible."""
    return f"phone-{name}-{seed}" if kind == "phone" else f"{name}-{seed}"


def record_held_out(cfg: HeldOutConfig, log: Callable[[str], None] = print) -> list[Transition]:
    """Record every planned held-out episode; the transitions come back marked for id-test."""
    from .apps import miniwob_app, phone_app
    from .explorer import SOLVED_TASKS, explore, solver_policy
    from .recorder import Recorder
    from .store import hold_out
    from .third_party import third_party_app

    check_config(cfg)
    out: list[Transition] = []
    base = cfg.seed * 1000 + ID_TEST_OFFSET
    with Recorder() as rec:
        for kind, name, seed in planned(cfg):
            eid = episode_id(kind, name, seed)
            if kind == "phone":
                ts = rec.record_trajectory(phone_app(name, seed), explore, cfg.phone_steps, seed, eid)
            elif kind == "miniwob":
                # as a build does: the solver on every other episode of a solved task
                solve = name in SOLVED_TASKS and (seed - base) % 2 == 0
                policy = solver_policy if solve else explore
                ts = rec.record_trajectory(miniwob_app(name), policy, cfg.miniwob_steps, seed, eid)
            else:
                ts = rec.record_trajectory(third_party_app(name), explore, cfg.third_party_steps, seed, eid)
            out += hold_out(ts)
            log(f"id-test {eid}: {len(ts)} transitions")
    return out


def add_held_out(
    corpus: str | Path | None,
    out: str | Path,
    cfg: HeldOutConfig,
    log: Callable[[str], None] = print,
    compact: bool = True,
):
    """Record held-out episodes of `corpus`' training apps and save corpus + them at `out`.

    Every chosen app must be in the corpus' train split, and no planned episode may already be
    there (same app, same seed): ValueError names it before anything is recorded. The corpus at
    `out` is replaced atomically (it may be `corpus` itself). Returns the saved DatasetDict."""
    from render import Renderer

    from .store import app_splits, corpus_transitions, load_corpus, save_corpus

    check_config(cfg)
    dd = load_corpus(corpus)
    splits = app_splits(dd)
    old = corpus_transitions(dd, skipped=[])
    have = {(t.app, t.episode_id) for t in old}
    for kind, name, seed in planned(cfg):
        app = app_name(kind, name)
        where = splits.get(app)
        if where != "train":
            raise ValueError(
                f"{app} is {'not in the corpus' if where is None else f'a {where} app'}: "
                "id-test holds new episodes of training apps"
            )
        if (app, episode_id(kind, name, seed)) in have:
            raise ValueError(
                f"{app} already has episode {episode_id(kind, name, seed)}: choose another --seed"
            )
    new = record_held_out(cfg, log)
    if not new:
        raise RuntimeError("no held-out transitions were recorded")
    with Renderer() as r:
        log(f"capture fidelity of the held-out episodes: {summarize(score_html_fidelity(new, r))}")
    if compact:
        from .compaction import compact_transitions

        new = compact_transitions(new)
    return save_corpus(old + new, out, splits)


def build_held_out_config(build_cfg) -> HeldOutConfig:
    """The held-out episodes a `wm corpus build` (corpus.build.BuildConfig) records beside its own:
    the in-app apps it records and trains on, as many steps per episode as it records."""
    from .build import DEFAULT_PINNED

    trains = lambda app: DEFAULT_PINNED.get(app, "train") == "train"  # noqa: E731
    d = HeldOutConfig()
    return HeldOutConfig(
        tuple(a for a in d.phone_apps if trains(f"phone-{a}")) if build_cfg.phone_episodes else (),
        d.phone_episodes,
        build_cfg.phone_steps,
        tuple(t for t in d.miniwob_tasks if t in build_cfg.miniwob_tasks and trains(f"miniwob-{t}"))
        if build_cfg.miniwob_episodes
        else (),
        d.miniwob_episodes,
        build_cfg.miniwob_steps,
        tuple(n for n in d.third_party if n in build_cfg.third_party and trains(n))
        if build_cfg.third_party_episodes
        else (),
        d.third_party_episodes,
        build_cfg.third_party_steps,
        build_cfg.seed,
    )
