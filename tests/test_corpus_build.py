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
