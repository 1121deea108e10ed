"""The in-app setting: held-out episodes (id-test) and the same-app memory backend.

Screens are rendered by the real Chromium; the memory corpora are hand-made (a small list app
and another app) or freshly recorded, never the shared Android data.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from corpus.store import app_splits, corpus_transitions, hold_out, load_corpus, save_corpus
from render import Viewport
from wmcli import app as cli
from worldmodel import WorldModel
from worldmodel.backends.memory import MemoryBackend, screen_key
from worldmodel.backends.retrieval import RetrievalBackend
from worldmodel.backends.sim import SimBackend
from worldmodel.types import Action, Query, Screen, Transition

VP = Viewport(200, 300, 1)
ADD = Action("tap", x=50, y=25)  # the centre of the Add button


def page(items, hover: bool = False, done: str = "") -> str:
    mark = ' class="wm-hover"' if hover else ""
    lis = "".join(f"<li{' class=done' if i == done else ''}>{i}</li>" for i in items)
    return (
        "<!DOCTYPE html><html><head><style>#screen{font:16px sans-serif;position:relative}"
        "button{position:absolute;left:10px;top:10px;width:80px;height:30px}"
        "ul{position:absolute;top:50px;margin:0}li{height:24px}.done{text-decoration:line-through}</style></head>"
        '<body style="margin:0"><div id="screen" style="width:200px;height:300px">'
        f'<button id="add"{mark}>Add</button><ul>{lis}</ul></div></body></html>'
    )


@pytest.fixture(scope="module")
def shots(renderer):
    """Screen factory: a page rendered by Chromium, as a screen of `app`."""

    def make(html: str, app: str = "lists") -> Screen:
        res = renderer.render_many([(html, VP)])[0]
        return Screen(res.pil(), html=html, app=app)

    return make


@pytest.fixture(scope="module")
def recorded(shots):
    """The list app's recordings (Add appends "new"; a tap on an item strikes it out) and one of another app."""
    return [
        Transition(
            shots(page(["one"])), ADD, shots(page(["one", "new"])), app="lists", episode_id="lists-0", step=0
        ),
        Transition(
            shots(page(["one"])),
            Action("tap", x=30, y=62),
            shots(page(["one"], done="one")),
            app="lists",
            episode_id="lists-0",
            step=1,
        ),
        Transition(
            shots(page(["x"]), "other"), ADD, shots(page([]), "other"), app="other", episode_id="other-0"
        ),
    ]


def test_screen_key_ignores_the_captures_state_markers():
    assert screen_key(page(["one"], hover=True)) == screen_key(page(["one"]))
    assert screen_key(page(["one", "two"])) != screen_key(page(["one"]))


ALONE = {"min_alike_elsewhere": 2.0}  # memory that never answers from another app's recordings


def test_memory_exact_hit_near_transplant_and_no_match(recorded, shots, renderer):
    mem = MemoryBackend(recorded, **ALONE)
    wm = WorldModel(mem, renderer)
    exact = wm.predict(shots(page(["one"], hover=True)), Action("tap", x=52, y=27), mode="edit")
    assert exact.note.startswith("exact") and "<li>new</li>" in exact.html
    near = wm.predict(shots(page(["a", "b", "c"])), ADD, mode="edit")
    assert near.note.startswith("near"), near.note
    assert "<li>c</li><li>new</li>" in near.html.replace("\n", "")  # the app's reaction, on this screen
    # the nearest recorded screen's tap on an item is no answer to a tap on empty space
    blank = wm.predict(shots(page(["a", "b", "c"])), Action("tap", x=150, y=250), mode="edit")
    assert blank.edit == "" and "with this action on this element: no change" in blank.note
    # with answers from elsewhere turned off, another app's recordings are never used: the
    # "other" app cleared its list on Add
    unknown = wm.predict(shots(page(["one"]), app="elsewhere"), ADD, mode="edit")
    assert unknown.edit == "" and "no recordings of app 'elsewhere'" in unknown.note
    assert dict(mem.stats) == {"exact": 1, "near": 1, "none": 2}
    # document mode gives the same screens whole
    doc = wm.predict(shots(page(["a", "b", "c"])), ADD)
    assert "<li>new</li>" in doc.html and doc.note.startswith("near")


def test_memory_answers_an_app_it_has_no_recordings_of_from_another_apps_recording_of_the_same_screen(
    recorded, shots, renderer
):
    # an app memory never saw, on the very screen the list app recorded: that recording's answer
    mem = MemoryBackend(recorded[:2])
    wm = WorldModel(mem, renderer)
    same = wm.predict(shots(page(["one"]), app="newcomer"), ADD, mode="edit")
    assert (
        same.note.startswith("exact")
        and "(app 'lists', words 100% alike)" in same.note
        and "<li>new</li>" in same.html
    )
    assert same.settled
    # a screen of the same structure, other words: the recorded reaction, transplanted
    alike = wm.predict(shots(page(["a", "b"]), app="newcomer"), ADD, mode="edit")
    assert alike.note.startswith("near") and "(app 'lists', words" in alike.note, alike.note
    assert "<li>b</li><li>new</li>" in alike.html.replace("\n", "")
    assert dict(mem.elsewhere) == {"exact": 1, "near": 1}
    # the same structure with other words is another app on the same toolkit: nothing from it
    toolkit = wm.predict(shots(page(["p", "q", "r", "s"]), app="newcomer"), ADD, mode="edit")
    assert toolkit.edit == "" and "no recordings of app 'newcomer'" in toolkit.note, toolkit.note
    # a screen less alike than min_alike_elsewhere gets nothing from another app
    strict = WorldModel(MemoryBackend(recorded[:2], min_alike_elsewhere=1.0), renderer)
    other = page(["a"]).replace("<ul>", '<ul class="plain">')
    got = strict.predict(shots(other, app="newcomer"), ADD, mode="edit")
    assert got.edit == "" and "no recordings of app 'newcomer'" in got.note, got.note
    # the app's own recordings come first: "other" cleared its list on Add, and it is asked as itself
    own = WorldModel(MemoryBackend(recorded), renderer).predict(
        shots(page(["x", "y"]), "other"), ADD, mode="edit"
    )
    assert "(app " not in own.note and "<li>x</li>" not in own.html and "new" not in own.html, own.note


def test_sim_plus_memory_keys_on_the_callers_screen_and_keeps_the_sims_when_unsure(recorded, shots, renderer):
    with WorldModel([SimBackend(), MemoryBackend(recorded, **ALONE)], renderer) as wm:
        got = wm.predict_many(
            [Query(shots(page(["one"])), ADD), Query(shots(page(["one"]), app="elsewhere"), ADD)], "edit"
        )
        sim = WorldModel(SimBackend(), renderer).predict(
            shots(page(["one"]), app="elsewhere"), ADD, mode="edit"
        )
    assert "exact" in got[0].note and "<li>new</li>" in got[0].html
    assert "memory: no recordings" in got[1].note
    assert got[1].html == sim.html  # the sim's screen, as the sim left it
    # retrieval after the sim leaves another app's transplant out (the "other" app's Add cleared its list)
    with WorldModel([SimBackend(), RetrievalBackend.from_transitions(recorded[2:])], renderer) as wm:
        kept = wm.predict(shots(page(["one"]), app="elsewhere"), ADD, mode="edit")
    assert "another app (other): the screen is kept" in kept.note and kept.html == sim.html


def test_a_stage_after_memory_keeps_a_recorded_answer_and_writes_where_memory_knew_nothing(
    recorded, shots, renderer
):
    # a later stage that would change this screen: a recording in which Add cleared the list
    clears = Transition(shots(page(["one"])), ADD, shots(page([])), app="lists", episode_id="lists-9")
    screen = shots(page(["one"]))
    stages = [SimBackend(), MemoryBackend(recorded), RetrievalBackend.from_transitions([clears])]
    with WorldModel(stages, renderer) as wm:
        kept = wm.predict(screen, ADD, mode="edit")
    assert kept.settled and "exact" in kept.note and "retrieval" not in kept.note
    assert "<li>one</li><li>new</li>" in kept.html.replace("\n", "")
    # where memory knows nothing of this app, the stage after it writes
    stages = [SimBackend(), MemoryBackend(recorded[2:], **ALONE), RetrievalBackend.from_transitions([clears])]
    with WorldModel(stages, renderer) as wm:
        wrote = wm.predict(screen, ADD, mode="edit")
    assert not wrote.settled and "memory: no recordings" in wrote.note
    assert "<li>one</li>" not in wrote.html.replace("\n", ""), wrote.note


def test_memory_answers_an_episode_from_the_apps_other_episodes_when_told_to_leave_it_out(
    recorded, shots, renderer
):
    from training.data import memory_hints

    # a second visit to the list app: Add on another list
    again = Transition(
        shots(page(["two"])), ADD, shots(page(["two", "new"])), app="lists", episode_id="lists-1", step=0
    )
    mem = MemoryBackend([*recorded, again])
    mem.use_renderer(renderer)
    q = Query(shots(page(["one"])), ADD)
    assert mem.complete_edits([q])[0].settled  # lists-0 recorded this very transition
    mem.leave_out("lists-0")
    near = mem.complete_edits([q])[0]
    assert not near.settled and "near: lists-1 step 0" in near.note and "new</li>" in near.text
    mem.leave_out("lists-1")
    assert "exact" in mem.complete_edits([q])[0].note
    mem.leave_out(None)
    # training's hints: each episode from the others of its app; an app with one episode gets
    # another app's answer where that app recorded a screen as alike (as at prediction)
    ts = [recorded[0], again, recorded[2]]
    groups = []
    for mine in mem.each_episode_left_out(ts):
        groups.append(mine)
        if 0 in mine:  # lists-0 left out meanwhile
            assert not mem.complete_edits([q])[0].settled
    assert sorted(groups) == [[0], [1], [2]] and mem.complete_edits([q])[0].settled
    hints = memory_hints(ts, ts, renderer)
    assert "new</li>" in hints[0].text and "new</li>" in hints[1].text and "new</li>" in hints[2].text
    assert hints[0].known and hints[2].known and "(app 'lists'" in hints[2].note
    # the examples built on them: where memory knew nothing (each answered transition's copy
    # without its hint; here all three were answered) the prompt says so, apart from "no change"
    from training.data import ExampleOptions, examples_of
    from worldmodel.prompt import NO_HINT, UNKNOWN_HINT

    opts = ExampleOptions(target="edit", hints=True, hint_source="memory")
    shown = [e["prompt"][1]["content"][1]["text"] for e in examples_of(ts, opts, renderer)]
    assert len(shown) == 6 and sum(UNKNOWN_HINT in t for t in shown) == 3
    assert not any(NO_HINT in t for t in shown)


def test_a_checkpoint_hinted_by_memory_takes_the_memory_stage_and_leaves_memorys_answer_when_unsure(
    recorded, shots, renderer, tmp_path_factory
):
    from corpus.store import iter_transitions
    from worldmodel.backends.hf import TransformersBackend
    from worldmodel.tiny import build_tiny

    texts = [t.next_screen.html for t in iter_transitions(load_corpus()["train"].select(range(8)))]
    ckpt = build_tiny(tmp_path_factory.mktemp("tiny"), texts, hidden=64, layers=1, vocab_size=800)
    # a gate at 0 leaves out every edit of a random model: what stands is what it falls back on
    learned = TransformersBackend(
        ckpt,
        device="cpu",
        max_new_tokens=8,
        hints=True,
        hint_source="memory",
        min_confidence=0.0,
        focus=False,
    )
    with WorldModel([SimBackend(), MemoryBackend(recorded, **ALONE), learned], renderer) as wm:
        assert [type(b).__name__ for b in wm.stages] == ["SimBackend", "TransformersBackend"]
        assert wm.name.count("memory") == 1
        exact, near, unknown = wm.predict_many(
            [
                Query(shots(page(["one"])), ADD),
                Query(shots(page(["a", "b", "c"])), ADD),
                Query(shots(page(["one"]), app="elsewhere"), ADD),
            ],
            "edit",
        )
        sim = WorldModel(SimBackend(), renderer).predict(
            shots(page(["one"]), app="elsewhere"), ADD, mode="edit"
        )
    # a recording of this very transition passes the checkpoint by
    assert exact.settled and "<li>one</li><li>new</li>" in exact.html.replace("\n", "")
    # a near answer the model is unsure to overrule stands
    assert not near.settled and "memory's answer stands" in near.note, near.note
    assert "<li>c</li><li>new</li>" in near.html.replace("\n", "")
    # where memory knows nothing and the model is unsure, the sim's screen is kept
    assert "memory: " not in unknown.note and unknown.html == sim.html


def test_a_prompt_tells_memory_knowing_nothing_from_memory_answering_no_change_if_its_card_does(
    recorded, shots, renderer, tmp_path_factory
):
    from worldmodel.backends.hf import TransformersBackend
    from worldmodel.card import CheckpointCard
    from worldmodel.prompt import HINT_NOTE, MEMORY_HINT_NOTE, NO_HINT, UNKNOWN_HINT
    from worldmodel.tiny import build_tiny

    mem = MemoryBackend(recorded, **ALONE)
    mem.use_renderer(renderer)
    here, elsewhere = Query(shots(page(["one"])), ADD), Query(shots(page(["one"]), app="elsewhere"), ADD)
    assert [c.known for c in mem.complete_edits([here, elsewhere])] == [True, False]
    ckpt = build_tiny(tmp_path_factory.mktemp("tiny"), [page(["one"])], hidden=32, layers=1, vocab_size=300)
    for told in (True, False):
        card = CheckpointCard(
            target="edit", hints=True, hint_source="memory", unknown_hint=told, own_app_note=told
        )
        learned = TransformersBackend(ckpt, device="cpu", card=card, focus=False)
        learned.use_renderer(renderer)
        unknown, no_change = (t for t, _ in learned._prompts([here, here], "edit", ["", ""], [False, True]))
        assert NO_HINT in no_change and UNKNOWN_HINT not in no_change
        # a card from before the fields: one string for both, and memory's hints said to come
        # "from another app", as that checkpoint was trained
        assert (UNKNOWN_HINT in unknown, NO_HINT in unknown) == (told, not told)
        assert (MEMORY_HINT_NOTE in unknown, HINT_NOTE in unknown) == (told, not told)


def test_held_out_episodes_keep_their_split_through_every_save(recorded, tmp_path):
    train, held = recorded[:1], hold_out([recorded[1]])
    save_corpus(train + held, tmp_path / "c", {"lists": "train", "other": "test"})
    dd = load_corpus(tmp_path / "c")
    assert list(dd) == ["train", "id-test"] and dd["id-test"]["episode_id"] == ["lists-0"]
    assert app_splits(dd) == {"lists": "train"}
    # saved again (as merge, compact and --append do) the held-out rows stay held out
    save_corpus(corpus_transitions(load_corpus(tmp_path / "c")), tmp_path / "d", app_splits(dd))
    assert len(load_corpus(tmp_path / "d")["id-test"]) == 1
    with pytest.raises(ValueError, match="id-test holds episodes of training apps, but lists is in test"):
        save_corpus(train + held, tmp_path / "e", {"lists": "test"})
    assert not (tmp_path / "e").exists()
    with pytest.raises(ValueError, match="never indexes the test or id-test"):
        MemoryBackend.from_corpus(tmp_path / "c", splits=("train", "id-test"))


def test_add_id_test_records_new_seeds_of_training_apps_only(shots, tmp_path):
    from corpus.heldout import HeldOutConfig, add_held_out

    base = [
        Transition(
            shots(page(["one"]), "phone-notes"),
            ADD,
            shots(page(["one", "new"]), "phone-notes"),
            app="phone-notes",
            episode_id="phone-notes-0",
        )
    ]
    save_corpus(base, tmp_path / "c", {"phone-notes": "train"})
    cfg = HeldOutConfig(
        phone_apps=("notes",), phone_episodes=1, phone_steps=2, miniwob_tasks=(), third_party=()
    )
    dd = add_held_out(tmp_path / "c", tmp_path / "c", cfg, log=lambda _m: None)
    assert len(dd["train"]) == 1 and set(dd["id-test"]["episode_id"]) == {"phone-notes-500"}
    assert len(dd["id-test"]) == 2 and set(dd["id-test"]["app"]) == {"phone-notes"}
    with pytest.raises(ValueError, match="already has episode phone-notes-500"):
        add_held_out(tmp_path / "c", tmp_path / "c", cfg)
    # nothing is recorded for an app the corpus does not train on, or a task that is not bundled
    res = CliRunner().invoke(
        cli,
        [
            "corpus",
            "add-id-test",
            str(tmp_path / "c"),
            "-o",
            str(tmp_path / "x"),
            "--phone-apps",
            "contacts",
            "--tasks",
            "",
            "--third-party",
            "",
        ],
    )
    assert res.exit_code == 2 and "phone-contacts is not in the corpus" in res.output
    res = CliRunner().invoke(
        cli,
        ["corpus", "add-id-test", str(tmp_path / "c"), "-o", str(tmp_path / "x"), "--tasks", "click-tab-2"],
    )
    assert res.exit_code == 2 and "'click-tab-2' is not bundled" in res.output
    assert not (tmp_path / "x").exists()
    # wm eval puts in-app and unseen apps side by side where the corpus has both
    save_corpus(
        corpus_transitions(load_corpus(tmp_path / "c"))
        + [
            Transition(
                shots(page(["q"]), "z"), ADD, shots(page(["q", "new"]), "z"), app="z", episode_id="z-0"
            )
        ],
        tmp_path / "both",
        {"phone-notes": "train", "z": "test"},
    )
    res = CliRunner().invoke(
        cli,
        [
            "eval",
            "--corpus",
            str(tmp_path / "both"),
            "-m",
            "copy",
            "-m",
            "sim+memory",
            "-o",
            str(tmp_path / "ev"),
        ],
    )
    assert res.exit_code == 0, res.output
    figs = json.loads((tmp_path / "ev" / "figures.json").read_text())
    assert set(figs) == {"id-test", "test"} and figs["id-test"]["n"] == 2 and figs["test"]["n"] == 1
    assert "in-app SSIM" in res.output and "unseen apps SSIM" in res.output


def listing(items, select: bool = False, picked=(), link: str = "") -> str:
    """A list app with two states: browsing (a tap opens nothing here; it strikes the item out)
    and selection mode (a bar with a Clear button; a tap picks the item)."""
    bar = '<div id="bar"><button id="clear">Clear</button></div>' if select else '<div id="bar">Notes</div>'
    lis = "".join(f"<li{' class=picked' if i in picked else ''}>{i}</li>" for i in items)
    return (
        "<!DOCTYPE html><html><head><style>#screen{font:16px sans-serif}#bar{height:30px}"
        "li{height:24px}.picked{background:#8cf}.done{text-decoration:line-through}</style></head>"
        '<body style="margin:0"><div id="screen" style="width:200px;height:300px">'
        f"{bar}<ul style='margin:0'>{lis}</ul>{link}</div></body></html>"
    )


ONE = Action("tap", x=20, y=42)  # on the first item


def test_memory_prefers_a_recording_of_the_same_state_and_knows_where_links_and_home_lead(shots, renderer):
    def rec(before, action, after, ep, step=0):
        return Transition(shots(before), action, shots(after), app="lists", episode_id=ep, step=step)

    launcher = page([])
    to_b = '<a href="b.html" style="display:block;height:30px">{}</a>'
    recorded = [
        # browsing: a tap strikes the item out; the screen looks just like the query's below
        rec(
            listing(["one", "two", "three"]),
            ONE,
            listing(["one", "two", "three"]).replace("<li>one", "<li class=done>one"),
            "l-0",
        ),
        # selection mode, other items: a tap picks the item
        rec(
            listing(["one", "nine"], select=True),
            ONE,
            listing(["one", "nine"], select=True, picked=("one",)),
            "l-1",
        ),
        # a link to b.html left the page for page b
        rec(listing(["x"], link=to_b.format("Next")), Action("tap", x=20, y=70), page(["b"]), "l-2"),
        # home from two different screens went to the launcher
        rec(listing(["x"]), Action("home"), launcher, "l-3"),
        rec(listing(["y", "z"], select=True), Action("home"), launcher, "l-4"),
    ]
    mem = MemoryBackend(recorded)
    wm = WorldModel(mem, renderer)
    sel = wm.predict(shots(listing(["one", "two", "three"], select=True)), ONE, mode="edit")
    assert sel.note.startswith("near: l-1 step 0") and '<li class="picked">one</li>' in sel.html.replace(
        "'", '"'
    ), sel.note
    assert "100% alike in structure" in sel.note
    # a link with another text but the same target goes where the recorded one went
    link = wm.predict(
        shots(listing(["p", "q"], link=to_b.format("Go to B"))), Action("tap", x=20, y=100), mode="edit"
    )
    assert link.note.startswith("destination: where l-2 step 0 went") and "<li>b</li>" in link.html, link.note
    home = wm.predict(shots(listing(["a"], select=True, picked=("a",))), Action("home"), mode="edit")
    assert home.note.startswith("destination: where l-"), home.note
    assert "<ul></ul>" in home.html.replace("\n", "") and "Clear" not in home.html  # the launcher, whole
    assert mem.hit_rates()["destination"] == 2 / 3
    # with one recording of an unpointed action there is no telling where it leads from elsewhere
    alone = WorldModel(MemoryBackend(recorded[:4]), renderer)
    once = alone.predict(shots(listing(["a"], select=True)), Action("home"), mode="edit")
    assert once.note.startswith("near: l-3 step 0"), once.note  # its reaction, transplanted
    # a recording of another state of the app is no answer once the structures differ too much
    strict = WorldModel(MemoryBackend(recorded[1:2], min_alike=0.95), renderer)
    got = strict.predict(shots(listing(["one", "two"])), ONE, mode="edit")
    assert got.edit == "" and "no change" in got.note
