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

from .build import BUNDLED_MINIWOB, DEFAULT_PINNED, DEFAULT_THIRD_PARTY, summarize
from .configs import opt
from .episodes import ID_TEST_OFFSET, held_out_plan  # noqa: F401 - the offset, re-exported

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
    """Which training apps get held-out episodes, and how many (`wm corpus add-id-test`'s flags)."""

    phone_apps: Sequence[str] = opt(IN_APP_PHONE, "phone apps (default: the training ones)", empty="none")
    phone_episodes: int = opt(3, "held-out episodes per phone app", min=0)
    phone_steps: int = opt(10, min=1)
    miniwob_tasks: Sequence[str] = opt(
        IN_APP_MINIWOB, "bundled MiniWoB++ tasks (default: 15 training ones)", flag="--tasks", empty="none"
    )
    miniwob_episodes: int = opt(2, min=0)
    miniwob_steps: int = opt(5, min=1)
    third_party: Sequence[str] = opt(
        IN_APP_THIRD_PARTY, "bundled third-party apps (default: the three that train)", empty="none"
    )
    third_party_episodes: int = opt(3, min=0)
    third_party_steps: int = opt(5, min=1)
    seed: int = opt(0, "held-out seeds are SEED*1000+500+e, never a build's own")


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


def add_held_out(
    corpus: str | Path | None,
    out: str | Path,
    cfg: HeldOutConfig,
    log: Callable[[str], None] = print,
    compact: bool = True,
    num_proc: int = 1,
    shard=None,
):
    """Record held-out episodes of `corpus`' training apps on `num_proc` processes and save
    corpus + them at `out`. With `shard` (a parallel.Shard) only its block of the plan is
    recorded and saved at `out` as a piece: the merged pieces hold the new episodes alone (their
    apps pinned to train), to merge with the corpus (`wm corpus merge`). Returns None for a piece.

    Every chosen app must be in the corpus' train split, and no planned episode may already be
    there (same app, same seed): ValueError names it before anything is recorded. The corpus at
    `out` is replaced atomically (it may be `corpus` itself). Returns the saved DatasetDict."""
    from datasets import concatenate_datasets

    from worldmodel.dataset import ID_TEST

    from .episodes import as_units, record_rows
    from .parallel import read_reports, remove_work, save_piece, stream_rows, work_folder
    from .store import app_splits, load_corpus, save_rows

    check_config(cfg)
    dd = load_corpus(corpus)
    splits = app_splits(dd)
    have = {(a, e) for ds in dd.values() for a, e in zip(ds["app"], ds["episode_id"])}
    plan = held_out_plan(cfg)
    for ep in plan:
        where = splits.get(ep.app)
        if where != "train":
            raise ValueError(
                f"{ep.app} is {'not in the corpus' if where is None else f'a {where} app'}: "
                "id-test holds new episodes of training apps"
            )
        if (ep.app, ep.episode_id) in have:
            raise ValueError(f"{ep.app} already has episode {ep.episode_id}: choose another --seed")
    work = work_folder(Path(out))
    try:
        units = shard.take(as_units(plan)) if shard else as_units(plan)
        new = stream_rows(record_rows, units, num_proc, work, compact=compact)
        if new is None:
            raise RuntimeError("no held-out transitions were recorded")
        scores = [r["html_ssim"] for r in read_reports(work)["rows"]]
        log(f"capture fidelity of the held-out episodes: {summarize(scores)}")
        if shard:
            save_piece(new, Path(out), shard, {"pinned": {ep.app: "train" for ep in plan}})
            log(f"wrote piece {shard} at {out}")
            return None
        old = [dd[s] for s in dd]
        held, start = set(), 0
        for s, ds in dd.items():  # the corpus' own id-test rows stay there
            held |= set(range(start, start + len(ds))) if s == ID_TEST else set()
            start += len(ds)
        return save_rows(concatenate_datasets([*old, new]), out, splits, held=held)
    finally:
        remove_work(work)


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
