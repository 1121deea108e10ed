"""The sim world model (browser physics on the current HTML), progress scoring, the learned task
reward, and lookahead that wins MiniWoB++ tasks the agent alone loses; all in real Chromium."""

import re

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from corpus.apps import miniwob_app
from corpus.recorder import Recorder
from corpus.store import iter_transitions, load_corpus
from planning import (
    ImaginedEnv,
    LearnedReward,
    Lookahead,
    MiniWoBAgent,
    ProgressScorer,
    WeightedScorer,
    recorder_policy,
)
from render import Viewport
from worldmodel import Action, Screen, WorldModel, parse_spec

PAGE = """<!DOCTYPE html><html><head><style>
body{margin:0;font:16px sans-serif} input:focus{background:yellow} button:hover{color:red}
</style></head><body>
<div id="q">Enter "Kasie" and press Submit</div>
<input id="t" type="text" style="position:absolute;left:10px;top:30px;width:150px;height:20px">
<label style="position:absolute;left:10px;top:70px"><input id="c" type="checkbox">Check me</label>
<a id="away" href="http://elsewhere.invalid/" style="position:absolute;left:10px;top:110px">away</a>
<a id="near" href="#sec" style="position:absolute;left:100px;top:110px">near</a>
<button style="position:absolute;left:10px;top:150px;width:80px;height:30px">Submit</button>
<div style="height:2000px"></div><div id="sec">section</div>
</body></html>"""
VP = Viewport(360, 640)


def inputs(html):
    return re.findall(r"<input[^>]*>", html)


def screen_of(html, renderer):
    return Screen(renderer.render(html, VP).png, html=html)


def test_sim_types_checks_tabs_scrolls_and_says_what_it_cannot_do(renderer):
    s0 = screen_of(PAGE, renderer)
    with WorldModel.load("sim", renderer=renderer) as wm:
        typed, checked, away, home, scrolled = wm.predict_many(
            [
                (s0, Action("type", x=60, y=40, text="Kasie")),
                (s0, Action("tap", x=20, y=78)),
                (s0, Action("tap", x=20, y=118)),
                (s0, Action("home")),
                (s0, Action("scroll", x=180, y=320, direction="down")),
            ]
        )
        assert 'value="Kasie"' in inputs(typed.html)[0] and "wm-focus" in inputs(typed.html)[0]
        assert "checked" in inputs(checked.html)[1] and "checked" not in inputs(PAGE)[1]
        assert "link to another page" in away.note and away.html.count('id="screen"') == 1
        assert "home" in home.note and "value=" not in home.html and "checked" not in home.html
        # the window's scroll stays a scroll: a target where the view's top was (render/capture.py)
        assert "top:300px" in scrolled.html and scrolled.html.count("data-wm-scroll") == 1
        # acting on an imagined screen: focus and text carry over, a second scroll adds up
        s1 = Screen(typed.image, html=typed.html)
        more, tabbed = wm.predict_many([(s1, Action("type", text=" Lee")), (s1, Action("key", key="Tab"))])
        assert 'value="Kasie Lee"' in inputs(more.html)[0]
        assert "wm-focus" not in inputs(tabbed.html)[0] and "wm-focus" in inputs(tabbed.html)[1]
        s2 = Screen(scrolled.image, html=scrolled.html)
        again = wm.predict(s2, Action("scroll", x=180, y=320, direction="down"))
        assert "top:600px" in again.html and again.html.count("data-wm-scroll") == 1
        assert again.html.count('id="screen"') == 1
        # the typed screen's render differs from the start where the field is, and only a little
        diff = np.abs(np.asarray(typed.image, int) - np.asarray(s0.image, int)).sum(axis=2) > 24
        assert 0 < diff.mean() < 0.05
        # no HTML: the screenshot is copied and the prediction says so
        bare = wm.predict(Screen(s0.image), Action("tap", x=20, y=78))
        assert bare.ok and "no current HTML" in bare.note


def test_sim_composes_and_parses():
    assert [s.kind for s in parse_spec("sim+retrieval").stages] == ["sim", "retrieval"]
    assert str(parse_spec("sim")) == "sim"


@pytest.fixture(scope="module")
def corpus():
    return load_corpus()


@pytest.fixture(scope="module")
def reward(corpus, renderer):
    return LearnedReward(renderer=renderer).fit(iter_transitions(corpus["train"]))


def _enter_text_start(corpus):
    for t in iter_transitions(corpus["train"]):
        if t.app == "miniwob-enter-text" and t.action.type == "type" and t.step == 0:
            return t
    raise AssertionError("the bundled corpus has no enter-text typing step")


def test_progress_ranks_typing_the_goal_above_a_noop_when_the_banner_already_shows_it(corpus, renderer):
    t = _enter_text_start(corpus)
    quoted = re.findall(r'"([^"]+)"', t.goal)[0]
    assert quoted.lower() in t.screen.html.lower()  # the banner shows the goal's words already
    with WorldModel.load("sim", renderer=renderer) as wm:
        typed, noop = wm.predict_many(
            [(t.screen, Action("type", x=t.action.x, y=t.action.y, text=quoted)), (t.screen, Action("wait"))]
        )
    scorer = ProgressScorer()
    s_typed = scorer(t.screen, t.action, typed, t.goal)
    s_noop = scorer(t.screen, Action("wait"), noop, t.goal)
    assert s_typed > 0.5 > s_noop


def test_learned_reward_tells_a_winning_submit_from_a_losing_one(corpus, reward, tmp_path):
    assert reward.trained_on > 50
    wins = [t for t in iter_transitions(corpus["validation"]) if t.meta.get("reward", 0) > 0]
    other = [
        t for t in iter_transitions(corpus["validation"]) if "reward" in t.meta and t.meta["reward"] <= 0
    ]
    p_win = np.mean([reward.predict(t.screen, t.action, t.goal)[0] for t in wins])
    p_other = np.mean([reward.predict(t.screen, t.action, t.goal)[0] for t in other])
    assert p_win > p_other + 0.2  # on apps it was not fitted on
    again = LearnedReward.load(reward.save(tmp_path / "reward.json"), renderer=reward.renderer)
    t = wins[0]
    assert again.predict(t.screen, t.action, t.goal) == pytest.approx(
        reward.predict(t.screen, t.action, t.goal)
    )


def test_lookahead_with_sim_wins_enter_text_where_the_agent_alone_loses(reward, renderer):
    agent = MiniWoBAgent(renderer)
    with WorldModel.load("sim", renderer=renderer) as wm, Recorder() as rec:
        la = Lookahead(
            wm, WeightedScorer([(ProgressScorer(), 1.0), (reward, 1.0)]), top_k=12, confident_at=None
        )
        plain = rec.record_trajectory(
            miniwob_app("enter-text"), recorder_policy(agent, max_actions=4), 4, seed=7
        )
        looked = rec.record_trajectory(miniwob_app("enter-text"), recorder_policy(agent, la, 4), 4, seed=7)
    assert not (plain and plain[-1].meta.get("reward", 0) > 0)
    assert looked and looked[-1].meta["reward"] > 0 and la.imagined_steps > 0


def test_two_step_rollouts_are_batched_across_candidates(corpus, renderer):
    t = _enter_text_start(corpus)
    agent = MiniWoBAgent(renderer)
    with WorldModel.load("sim", renderer=renderer) as wm:
        calls = []
        real = wm.predict_many
        wm.predict_many = lambda qs, *a, **kw: calls.append(len(qs)) or real(qs, *a, **kw)
        la = Lookahead(wm, ProgressScorer(), proposer=agent, depth=2, beam=2, top_k=3, confident_at=None)
        ranked = la.rank(t.screen, t.goal, agent(t.screen, t.goal))
    assert len(calls) == 2 and calls[0] == 3 and calls[1] > 3  # one batch per depth, across candidates
    assert any(len(r.imagined) == 2 for r in ranked) and la.imagined_steps == sum(calls)


def test_imagined_env_runs_multi_step_episodes_on_sim_and_passes_the_checker(corpus, renderer):
    starts = [t for t in iter_transitions(corpus["train"]) if t.app.startswith("miniwob-")][:3]
    env = ImaginedEnv(starts, world_model="sim+copy", renderer=renderer, max_steps=3, mode="auto")
    check_env(env, skip_render_check=True)
    env.reset(seed=1, options={"index": 0})
    t = starts[0]
    a = Action("type", x=t.screen.size[0] / 2, y=t.screen.size[1] / 2, text="hello")
    steps = [env.step(a) for _ in range(3)]
    assert steps[-1][3] or steps[-1][2]  # truncated at max_steps (or done)
    assert all(s[4]["render_error"] is None for s in steps)


def test_on_a_recorded_screen_the_sim_writes_only_what_it_did(corpus, renderer):
    """A recorded checkbox tap and typed word: the sim's screen is the recorded next screen
    exactly (its stylesheet the recorded one, no state classes or markers no rule reads), and its
    edit is what the browser did, not a rewrite of the stylesheet."""
    from worldmodel.edit import diff

    recorded = list(iter_transitions(corpus["train"]))
    ticks = [
        t
        for t in recorded
        if t.app == "miniwob-click-checkboxes" and 'checked ""' in diff(t.screen.html, t.next_screen.html)
    ]
    typed = [t for t in recorded if t.app == "miniwob-enter-text" and t.action.type == "type"]
    ts = ticks[:2] + typed[:2]
    assert len(ts) == 4
    with WorldModel.load("sim", renderer=renderer) as wm:
        preds = wm.predict_many([(t.screen, t.action) for t in ts], mode="edit")
    for t, p in zip(ts, preds):
        assert p.ok and "css-" not in p.edit and "wm-focus-within" not in p.edit
        assert diff(p.html, t.next_screen.html) == "", (t.app, t.action, p.edit)


FORM = """<!DOCTYPE html><html><head><style>
body{margin:0;font:16px sans-serif} input:focus{outline:2px solid blue} label:hover{color:red}
.row{height:34px} textarea{width:200px;height:40px}
</style></head><body>
<div class="row"><input id="name" type="text" maxlength="4" style="width:150px"></div>
<div class="row"><input id="day" type="date"></div>
<div class="row"><label><input id="c1" type="checkbox">One</label> <label for="c2">Two</label><input id="c2" type="checkbox"></div>
<div class="row"><input type="radio" name="r" id="r1"><input type="radio" name="r" id="r2" checked></div>
<div class="row"><textarea id="note"></textarea></div>
<a href="#end" style="display:block;height:30px">jump</a>
<div style="height:1500px"></div><div id="end">end</div>
</body></html>"""


def test_the_fast_sim_gives_the_reference_sims_next_screens(renderer):
    """Pooled pages, batched input events, one-call loads and a cache give the same next screen
    (HTML and pixels) as a fresh page per step, in any order, and leave no pointer, focus or
    scroll behind for the next render on the same page."""
    from worldmodel.backends.sim import SimBackend

    s0 = screen_of(FORM, renderer)
    pairs = [
        Action("type", x=60, y=17, text="Kasie"),  # maxlength 4: one insertion keeps it too
        Action("type", x=12, y=51, text="10112016"),  # a date field takes keys, not insertion
        Action("tap", x=8, y=85),  # a checkbox inside its label
        Action("tap", x=70, y=85),  # a label for another checkbox
        Action("tap", x=8, y=119),  # a radio: the other one unchecks
        Action("type", x=60, y=160, text="two\nlines"),  # a newline is a key
        Action("tap", x=20, y=205),  # an in-page anchor: the page's URL gets a fragment
        Action("scroll", x=180, y=320, direction="up"),
        Action("key", key="Tab"),
        Action("tap", x=300, y=600),  # nothing there
    ]
    queries = [(s0, a) for a in pairs]
    with WorldModel(SimBackend(renderer, pooled=False, cache_size=0), renderer) as ref:
        want = ref.predict_many(queries)
    fast_backend = SimBackend(renderer)
    with WorldModel(fast_backend, renderer) as fast:
        got = fast.predict_many(queries, lazy=True)
        again = fast.predict_many(list(reversed(queries)))[::-1]  # served by the cache
        assert fast_backend.cache_hits == len(pairs)
        fast_backend.clear_cache()
        one_by_one = [fast.predict_many([q])[0] for q in reversed(queries)][::-1]  # pages reused in turn
    for w, g, a, o in zip(want, got, again, one_by_one):
        assert w.ok and g.ok, (w.render_error, g.render_error)
        assert g.html == w.html == a.html == o.html
        assert np.array_equal(np.asarray(g.image), np.asarray(w.image))  # rendered when read
        assert np.array_equal(np.asarray(o.image), np.asarray(w.image))
    assert 'value="Kasi"' in inputs(got[0].html)[0]
    assert 'value="2016-10-11"' in inputs(got[1].html)[1]
    # a page a pooled interaction used renders the next page as a fresh page does: the pointer
    # the tap left over the label is moved off first
    from render import Renderer

    label_page = FORM.replace("label:hover{color:red}", "label:hover{color:red;background:#0f0}")
    with Renderer(pool_size=1) as one, Renderer(pool_size=1) as other:
        assert not isinstance(
            one.interact_many([(FORM, VP, [("click", 70.0, 85.0)])], pooled=True)[0], Exception
        )
        assert np.array_equal(one.render(label_page, VP).image, other.render(label_page, VP).image)
