"""Lookahead over imagined screens, the imagined gymnasium env, and live MiniWoB++ agents."""

import json

import numpy as np
import pytest
from conftest import chat_server
from gymnasium.utils.env_checker import check_env

from corpus.apps import miniwob_app
from corpus.recorder import Recorder
from corpus.store import iter_transitions, load_corpus
from planning import (
    Candidate,
    GoalTextScorer,
    ImaginedEnv,
    LearnedReward,
    Lookahead,
    MiniWoBAgent,
    ValueScorer,
    VLMJudgeScorer,
    as_agent,
    parse_judgement,
    recorder_policy,
)
from planning.progress import GoalSpec
from worldmodel import Backend
from worldmodel.types import Action, Prediction, Screen


class TableModel(Backend):
    """A world model backend whose next screen depends on where you tap (a real backend, not a mock:
    it implements the interface over fixed HTML, like the retrieval baseline over its corpus)."""

    name = "table"

    def __init__(self, table):
        self.table = table

    def complete(self, queries):
        return [
            self.table.get(round(q.action.x or -1), "<html><body><p>nothing</p></body></html>")
            for q in queries
        ]


GOAL = 'Open the "settings" page'
SCREEN = Screen(np.full((100, 80, 3), 255, np.uint8), html="<p>home</p>")


def test_lookahead_picks_the_action_whose_imagined_screen_fits_the_goal(renderer):
    wm = TableModel(
        {10: "<html><body><p>Inbox</p></body></html>", 20: "<html><body><h1>Settings</h1></body></html>"}
    )
    la = Lookahead(wm, GoalTextScorer(), confident_at=None, renderer=renderer)
    cands = [Candidate(Action("tap", x=10, y=5), 0.6), Candidate(Action("tap", x=20, y=5), 0.3)]
    ranked = la.rank(SCREEN, GOAL, cands)
    assert ranked[0].action.x == 20 and ranked[0].score > ranked[1].score
    assert "Settings" in ranked[0].imagined[0].html and la.imagined_steps == 2


def test_confident_agent_skips_imagination(renderer):
    wm = TableModel({})
    la = Lookahead(wm, GoalTextScorer(), confident_at=0.9, renderer=renderer)
    best = la.choose(SCREEN, GOAL, [Candidate(Action("tap", x=1, y=1), 0.95), Candidate(Action("back"), 0.1)])
    assert best.x == 1 and la.imagined_steps == 0


def test_rollout_finds_a_goal_two_steps_away(renderer):
    # tapping 30 leads to a menu; only from the menu does tapping 40 reach settings
    wm = TableModel(
        {
            30: "<html><body><p>Menu</p></body></html>",
            40: "<html><body><p>Settings</p></body></html>",
            10: "<html><body><p>Inbox</p></body></html>",
        }
    )

    def proposer(screen, goal):
        return (
            [Candidate(Action("tap", x=40, y=1), 0.5)]
            if "Menu" in (screen.html or "")
            else [Candidate(Action("tap", x=10, y=1), 0.5)]
        )

    cands = [Candidate(Action("tap", x=10, y=1), 0.5), Candidate(Action("tap", x=30, y=1), 0.4)]
    one = Lookahead(wm, GoalTextScorer(), confident_at=None, renderer=renderer).rank(SCREEN, GOAL, cands)
    two = Lookahead(
        wm,
        GoalTextScorer(),
        proposer=as_agent(proposer),
        depth=2,
        beam=2,
        confident_at=None,
        renderer=renderer,
    ).rank(SCREEN, GOAL, cands)
    assert two[0].action.x == 30 and "Settings" in two[0].imagined[-1].html
    assert one[0].score < two[0].score
    with pytest.raises(ValueError, match="needs a proposer"):
        Lookahead(wm, GoalTextScorer(), depth=2)


def test_agent_adapter_accepts_plain_callables():
    agent = as_agent(lambda s, g: [Action("back"), (Action("home"), 0.7)])
    out = agent(SCREEN, GOAL)
    assert [c.action.type for c in out] == ["back", "home"] and out[1].confidence == 0.7


def test_value_hook_and_judge_parsing(renderer):
    p = Prediction(html="<p>x</p>", image=SCREEN.image)
    assert ValueScorer(lambda s, g: 0.25)(SCREEN, Action("back"), p, GOAL) == 0.25
    assert parse_judgement('{"valid": true, "confidence": 0.8}') == pytest.approx(0.8)
    assert parse_judgement('Sure: {"valid": false, "confidence": 0.9}') == pytest.approx(0.1)
    assert parse_judgement("no idea") == 0.5


def test_vlm_judge_over_an_openai_compatible_endpoint():
    def reply(body):
        images = [c for c in body["messages"][0]["content"] if c["type"] == "image_url"]
        return '{"valid": true, "confidence": 0.75}' if len(images) == 2 else "?"

    with chat_server(reply) as (url, seen):
        judge = VLMJudgeScorer(url, "judge")
        s = judge(SCREEN, Action("back"), Prediction(html="<p>x</p>", image=SCREEN.image), GOAL)
    assert s == pytest.approx(0.75) and GOAL in seen[0][1]["messages"][0]["content"][2]["text"]


@pytest.fixture(scope="module")
def starts():
    return list(iter_transitions(load_corpus()["test"].select(range(4))))


def test_imagined_env_passes_gymnasium_checker(starts, renderer):
    env = ImaginedEnv(starts, world_model="retrieval", renderer=renderer, max_steps=3)
    check_env(env, skip_render_check=True)


def test_imagined_env_steps_through_the_world_model(starts, renderer):
    env = ImaginedEnv(starts, world_model="copy", renderer=renderer, max_steps=2)
    obs, info = env.reset(seed=3)
    assert obs["image"].shape == (128, 128, 3) and env.observation_space.contains(obs)
    a = {"type": 0, "point": np.array([0.5, 0.5], np.float32), "direction": 0, "text": ""}
    obs2, r, term, trunc, info = env.step(a)
    assert json.loads(info["action"])["type"] == "tap" and info["render_error"] is None
    assert np.abs(obs2["image"].astype(int) - obs["image"].astype(int)).mean() < 8  # copy model: same screen
    _, _, term, trunc, _ = env.step(a)
    assert trunc or term


def test_miniwob_agent_solves_a_live_task_with_and_without_lookahead(renderer):
    agent = MiniWoBAgent(renderer)
    la = Lookahead("retrieval", GoalTextScorer(), confident_at=None, renderer=renderer)
    with Recorder() as rec:
        plain = rec.record_trajectory(miniwob_app("click-button"), recorder_policy(agent), 3, seed=101)
        looked = rec.record_trajectory(miniwob_app("click-button"), recorder_policy(agent, la), 3, seed=101)
    assert plain and plain[-1].meta["done"] and plain[-1].meta["reward"] > 0  # the goal names the button
    assert looked and looked[-1].meta["done"] and la.imagined_steps > 0


def test_an_unfitted_learned_reward_says_so_instead_of_scoring_zero():
    r = LearnedReward()
    with pytest.raises(RuntimeError, match="not fitted"):
        r(SCREEN, Action("tap", x=5, y=5), None, GOAL)
    with pytest.raises(RuntimeError, match="not fitted"):
        r.done(SCREEN, Action("tap", x=5, y=5), None, GOAL)


def test_goal_quotes_are_read_in_one_place():
    from worldmodel.goal import goal_quotes, quoted

    goal = 'Enter the username "kasie" and the password "x2", then "" and "ok"'
    assert goal_quotes(goal) == [("username", "kasie"), ("password", "x2"), ("then", ""), ("and", "ok")]
    assert quoted(goal) == ["kasie", "x2", "ok"]
    assert GoalSpec.of(goal).quoted == [("username", "kasie"), ("password", "x2"), ("and", "ok")]
