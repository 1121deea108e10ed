"""The revisit head: the episode's earlier screens as candidates, the learned choice, its stage.

A world model asked one step at a time cannot know an episode's own state; `Query.history`
carries the screens the episode showed, and the revisit head (worldmodel/revisit.py, trained by
training/revisit.py) answers with one of them where it scores high enough, or abstains.
"""

from __future__ import annotations

import json

import pytest
from PIL import Image

from worldmodel import WorldModel
from worldmodel.backends.base import Backend
from worldmodel.backends.copy import CopyBackend
from worldmodel.backends.revisit import RevisitBackend
from worldmodel.dataset import episode_histories
from worldmodel.revisit import FEATURES, MAX_CANDIDATES, RevisitError, RevisitHead, candidates
from worldmodel.types import Action, Completion, Query, Screen, Transition

LIST = "<html><body><h1>notes</h1><ul><li>milk</li><li>eggs</li><li>bread</li></ul></body></html>"
NOTE = "<html><body><h1>milk</h1><p>two litres, skimmed</p><button>back</button></body></html>"
OTHER_LIST = "<html><body><h1>notes</h1><ul><li>taxes</li><li>garden</li></ul></body></html>"


def _screen(html: str) -> Screen:
    return Screen(Image.new("RGB", (200, 160), "white"), html=html)


def _head(threshold: float = 0.5) -> RevisitHead:
    """A head by hand: one hidden unit reading 'alike in structure to the answer' and 'shown
    just before', so a screen of the answer's kind shown last scores high, anything else low."""
    n = len(FEATURES)
    row = [0.0] * n
    row[FEATURES.index("alike_answer")] = 3.0
    row[FEATURES.index("latest")] = 3.0
    return RevisitHead(
        mean=[0.0] * n, scale=[1.0] * n, w1=[row], b1=[-5.5], w2=[6.0], b2=0.0, threshold=threshold
    )


def test_episode_histories_are_the_episodes_earlier_screens_in_step_order():
    a, b, c, d = (_screen(f"<p>{k}</p>") for k in "abcd")
    act = Action("back")
    ts = [
        Transition(c, act, d, app="x", episode_id="e1", step=2),
        Transition(a, act, b, app="x", episode_id="e1", step=0),
        Transition(b, act, c, app="x", episode_id="e1", step=1),
        Transition(a, act, b, app="x", episode_id="e2", step=1),  # another episode
        Transition(a, act, b, app="y", episode_id="e1", step=3),  # another app, same episode id
        Transition(a, act, b),  # no episode
    ]
    got = episode_histories(ts)
    assert [[s.html for s in h] for h in got] == [["<p>a</p>", "<p>b</p>"], [], ["<p>a</p>"], [], [], []]


def test_candidates_are_distinct_earlier_screens_without_the_current_one():
    note, lst = _screen(NOTE), _screen(LIST)
    q = Query(_screen(OTHER_LIST), Action("back"), applied=True, origin=note, history=(lst, note, lst, note))
    got = candidates(q)
    assert [c.screen.html for c in got] == [LIST]  # the note is the current screen; the list once
    assert got[0].steps_back == 2 and len(got[0].features) == len(FEATURES)
    f = dict(zip(FEATURES, got[0].features))
    assert f["alike_answer"] == 1.0 and f["action_back"] == 1.0 and f["latest"] == 0.0
    assert candidates(Query(note, Action("back"))) == []  # no history, no candidates
    # what came right after the current screen's earlier showings: here a and d, after two of its showings
    a, b, c, d = (_screen(f"<p>{k}</p>") for k in "abcd")
    back_again = {
        x.screen.html: dict(zip(FEATURES, x.features))
        for x in candidates(Query(a, Action("back"), history=(a, b, c, a, d)))
    }
    assert {h: f["followed_current"] for h, f in back_again.items()} == {
        "<p>d</p>": 0.5,
        "<p>c</p>": 0.0,
        "<p>b</p>": 0.5,
    }
    many = tuple(_screen(f"<p>page {k}</p>") for k in range(MAX_CANDIDATES + 5))
    latest = candidates(Query(note, Action("back"), history=many))
    assert [c.steps_back for c in latest] == list(range(1, MAX_CANDIDATES + 1))  # the most recent only
    # the action's own words: the app it opens is named on the current screen, not on the candidate
    opened = candidates(
        Query(_screen(LIST), Action("open_app", app="Notes"), origin=_screen(LIST), history=(note,))
    )
    f = dict(zip(FEATURES, opened[0].features))
    assert (
        f["action_words_current"] == 1.0
        and f["action_words_candidate"] == 0.0
        and f["action_open_app"] == 1.0
    )


def test_the_head_answers_with_the_earlier_screen_or_abstains():
    head = _head()
    note, lst = _screen(NOTE), _screen(LIST)
    # the answer before it (another episode's list) is of the list's kind: the episode's own list
    q = Query(_screen(OTHER_LIST), Action("back"), applied=True, origin=note, history=(lst,))
    pick = head.choose(q)
    assert pick is not None and pick[0].screen.html == LIST and pick[1] > 0.9
    # an answer unlike any earlier screen: it abstains
    q2 = Query(
        _screen("<html><body><form><input></form></body></html>"),
        Action("tap", x=5, y=5),
        origin=note,
        history=(lst,),
    )
    assert head.choose(q2) is None
    assert _head(threshold=0.999999).choose(q) is None  # below its threshold it abstains too


def test_a_head_file_that_does_not_fit_is_named(tmp_path):
    path = _head().save(tmp_path)
    assert RevisitHead.load(tmp_path).threshold == 0.5
    data = json.loads(path.read_text())
    data["features"] = data["features"][:-1]
    path.write_text(json.dumps(data))
    with pytest.raises(RevisitError, match="other features"):
        RevisitHead.load(tmp_path)
    path.write_text("{not json")
    with pytest.raises(RevisitError, match="cannot be read"):
        RevisitHead.load(path)


class _Settled(Backend):
    """Answers every query with one fixed page, marked as a recording of this very step."""

    name = "settled"

    def complete(self, queries):
        return [Completion(OTHER_LIST, note="recorded", settled=True) for _ in queries]


def test_the_revisit_stage_replaces_even_a_settled_answer_and_leaves_the_rest(renderer):
    stage = RevisitBackend(head=_head())
    wm = WorldModel([_Settled(), stage], renderer)
    note, lst = _screen(NOTE), _screen(LIST)
    with_past = Query(note, Action("back"), history=(lst,))
    without = Query(note, Action("back"))
    got = wm.predict_many([with_past, without], "edit")
    assert (
        got[0].ok
        and got[0].html.endswith(LIST)
        and "revisit: the screen this episode showed 1 step(s) back" in got[0].note
    )
    assert got[0].settled and got[0].edit  # an edit of the caller's screen to the list
    assert (
        got[1].ok and got[1].html.endswith(OTHER_LIST) and "revisit" not in got[1].note
    )  # the answer stands
    assert got[1].settled  # and stays what the stage before it made it
    assert stage.chosen == 1
    from worldmodel import predict_next

    one = predict_next(note, Action("back"), model=wm, renderer=renderer, mode="edit", history=[lst])
    assert one.html.endswith(LIST)  # the library call passes the past on too
    # without an earlier stage it still writes a screen: the current one where it abstains
    alone = WorldModel([stage], renderer).predict_many([without], "document")[0]
    assert alone.ok and alone.html.endswith(NOTE)
    copy_then = WorldModel([CopyBackend(), stage], renderer).predict_many([with_past], "edit")[0]
    assert copy_then.html.endswith(NOTE)  # the copy's answer is the note itself: nothing alike shown before


def test_a_checkpoint_folder_with_a_head_runs_it_after_the_coder(tmp_path_factory, renderer):
    from worldmodel.spec import SpecError, parse_spec
    from worldmodel.tiny import build_tiny

    ckpt = build_tiny(tmp_path_factory.mktemp("tiny"), [LIST, NOTE], hidden=32, layers=1, vocab_size=300)
    with WorldModel.load(f"hf:{ckpt}", renderer=renderer, max_new_tokens=4) as wm:
        assert [b.name for b in wm.stages][-1] != "revisit"
    _head().save(ckpt)
    with WorldModel.load(f"hf:{ckpt}", renderer=renderer, max_new_tokens=4) as wm:
        assert wm.stages[-1].name == "revisit" and wm.name.endswith("+revisit")
    with WorldModel.load(f"copy+revisit:{ckpt}", renderer=renderer) as wm:
        assert [b.name for b in wm.stages] == ["copy", "revisit"]
    with pytest.raises(SpecError, match="revisit needs a path"):
        parse_spec("copy+revisit")


def test_fitting_learns_which_earlier_screen_is_the_next_one():
    from training.revisit import MARGIN, fit, held_out

    rows = []
    for q in range(60):  # per query: the screen shown last and alike the answer wins, another loses
        k = q % 2
        good = [0.0] * len(FEATURES)
        good[FEATURES.index("alike_answer")] = 0.9 + 0.01 * k
        good[FEATURES.index("latest")] = 1.0
        bad = [0.0] * len(FEATURES)
        bad[FEATURES.index("alike_answer")] = 0.2 + 0.01 * k
        rows.append({"query": q, "episode": ("a", str(q // 4)), "f": tuple(good), "gain": 0.4})
        rows.append({"query": q, "episode": ("a", str(q // 4)), "f": tuple(bad), "gain": -0.3})
    head = fit(rows)
    assert head.probability(rows[0]["f"]) > 0.8 > 0.2 > head.probability(rows[1]["f"])
    table = held_out(rows, 60)
    assert table[0.5][0] == 60 and table[0.5][1] == pytest.approx(0.4)  # every held-out query right
    assert MARGIN > 0


class _Seen(Backend):
    """Copies the screen, and keeps how many earlier screens each query carried."""

    name = "seen"

    def __init__(self):
        self.lengths: list[int] = []

    def complete(self, queries):
        self.lengths += [len(q.history) for q in queries]
        return [q.screen.html or "" for q in queries]


def test_rollouts_and_the_imagined_env_carry_the_episodes_past(renderer):
    from planning.env import ImaginedEnv

    seen = _Seen()
    wm = WorldModel([seen], renderer)
    steps = wm.rollout(_screen(NOTE), [Action("back")] * 3, history=(_screen(LIST),))
    assert len(steps) == 3 and seen.lengths == [1, 2, 3]
    start = Transition(_screen(NOTE), Action("back"), _screen(LIST), goal="milk", app="x", episode_id="e")
    env = ImaginedEnv([start], world_model=WorldModel([_Seen()], renderer), renderer=renderer, max_steps=3)
    env.reset(seed=0)
    env.step(Action("back"))
    env.step(Action("back"))
    assert env.world_model.stages[0].lengths == [0, 1]
    env.reset(seed=0)
    env.step(Action("back"))
    assert env.world_model.stages[0].lengths == [0, 1, 0]  # a new episode starts with no past


def test_train_revisit_learns_from_the_bundled_phone_episodes(tmp_path):
    from training.revisit import train_revisit

    lines: list[str] = []
    path = train_revisit(tmp_path, apps=("phone-notes",), episodes=4, echo=lines.append)
    head = RevisitHead.load(path)
    assert head.trained_on["positives"] > 0 and head.trained_on["transitions"] <= 4 * 12
    assert 0.5 <= head.threshold <= 0.95 and any("held-out text F1 gain" in x for x in lines)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        train_revisit(tmp_path / "missing")


def test_lookahead_asks_its_first_steps_with_the_screens_taken_before(renderer):
    from planning.lookahead import Candidate as Proposed
    from planning.lookahead import Lookahead
    from planning.scorers import GoalTextScorer

    seen = _Seen()
    la = Lookahead(WorldModel([seen], renderer), GoalTextScorer(), confident_at=None, renderer=renderer)
    taken = [(_screen(LIST), Action("tap", x=5, y=5)), (_screen(OTHER_LIST), Action("back"))]
    la.rank(_screen(NOTE), "milk", [Proposed(Action("back"), 0.5), Proposed(Action("home"), 0.4)], taken)
    assert seen.lengths == [2, 2]
    la.rank(_screen(NOTE), "milk", [Proposed(Action("back"), 0.5)])
    assert seen.lengths == [2, 2, 0]
