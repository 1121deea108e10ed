"""The bundled corpus' plan (corpus/build.py): every app pinned to its split, no reserved page."""

from corpus.store import load_corpus


def test_every_bundled_app_is_pinned_to_its_split_and_no_reserved_page_is_recorded():
    from corpus.build import BUNDLED_MINIWOB, DEFAULT_PINNED
    from corpus.store import app_splits

    dd = load_corpus()
    got = app_splits(dd)  # an app's held-out id-test episodes do not move it
    # a fresh `wm corpus build` puts every app where the bundle has it
    assert {a: DEFAULT_PINNED.get(a) for a in got} == got
    tasks = BUNDLED_MINIWOB
    assert len(set(tasks)) == len(tasks)
    assert not [t for t in tasks if "flight" in t]  # reserved for independent evaluation
    from corpus.build import reserved_miniwob

    assert not [t for t in tasks if reserved_miniwob(t)]
    assert reserved_miniwob("email-inbox-reply") and not reserved_miniwob("email-inbox")


def test_more_tasks_adds_the_surveyed_tasks_as_training_apps_and_leaves_the_held_out_plan():
    from corpus.build import BUNDLED_MINIWOB, DEFAULT_PINNED, EXTRA_MINIWOB, BuildConfig, reserved_miniwob
    from corpus.episodes import build_plan, held_out_plan
    from corpus.heldout import build_held_out_config

    plain, more = BuildConfig(), BuildConfig(more_tasks=True)
    added = [e for e in build_plan(more) if e not in build_plan(plain)]
    assert sorted({e.name for e in added}) == sorted(EXTRA_MINIWOB)
    assert len(added) == len(EXTRA_MINIWOB) * more.miniwob_episodes
    assert not set(EXTRA_MINIWOB) & set(BUNDLED_MINIWOB)
    assert not [t for t in EXTRA_MINIWOB if reserved_miniwob(t)]
    assert {DEFAULT_PINNED[f"miniwob-{t}"] for t in EXTRA_MINIWOB} == {"train"}
    # the id-test split is the bundle's: no held-out episode of an added task
    assert held_out_plan(build_held_out_config(more)) == held_out_plan(build_held_out_config(plain))
