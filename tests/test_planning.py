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
    ProgressScorer,
    ValueScorer,
    VLMJudgeScorer,
    as_agent,
    parse_judgement,
    recorder_policy,
)
from planning.progress import GoalSpec
from worldmodel import Backend, WorldModel
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


def test_an_action_taken_is_not_taken_again_where_imagination_shows_it_changing_nothing(renderer):
    """Search was pressed in reality with the field as it is (the results are its answer, which
    the sim cannot show): pressing it again keeps half its score and the result the goal names
    wins; pressed when the field was empty, it is another step; an action whose imagined screen
    changes (typing) keeps its whole score."""
    from render import Viewport

    page = (
        "<html><body style='margin:0;font:16px sans-serif'><input id=q value='Annis' style='height:30px'>"
        "<button style='display:block;height:30px'>Search</button>"
        "<a href='#r' style='display:block;height:30px'>Annis</a><a href='#s' style='display:block;height:30px'>Bo</a>"
        "</body></html>"
    )
    screen = Screen(renderer.render(page, Viewport(320, 240)).png, html=page)
    boxes = {b.text or b.tag: b for b in renderer.render(page, Viewport(320, 240)).boxes}
    at = lambda b: dict(x=b.x + b.w / 2, y=b.y + b.h / 2)  # noqa: E731
    search, result = Action("tap", **at(boxes["Search"])), Action("tap", **at(boxes["Annis"]))
    typed = Action("type", **at(boxes["input"]), text="x")
    goal = 'Use the textbox to enter "Annis" and press "Search", then click the search result.'
    cands = [Candidate(search, 0.5), Candidate(result, 0.5), Candidate(typed, 0.3)]
    with WorldModel.load("sim", renderer=renderer) as wm:
        la = Lookahead(wm, ProgressScorer(renderer=renderer), confident_at=None, renderer=renderer)
        fresh = la.rank(screen, goal, cands)
        again = la.rank(screen, goal, cands, taken=[(screen, search)])
        retyped = la.rank(screen, goal, cands, taken=[(screen, typed)])
        # pressed before the field held its value: a press now is another step
        emptied = Screen(screen.image, html=page.replace("value='Annis'", "value=''"))
        earlier = la.rank(screen, goal, cands, taken=[(emptied, search)])
    score = lambda ranked, a: next(r.score for r in ranked if r.action is a)  # noqa: E731
    assert fresh[0].action is search and again[0].action is result
    assert score(again, search) == 0.5 * score(fresh, search) > 0
    assert score(retyped, typed) == score(fresh, typed) and earlier[0].action is search


def test_the_next_page_is_progress_only_while_what_the_goal_names_is_not_on_screen(renderer):
    """The instruction printed on the page names "Ignacio" once: a result list without it makes
    the next-page control progress; once a result reads Ignacio, the result is."""
    from render import Viewport

    goal = 'Use the textbox to enter "Ignacio" and press "Search", then click the 4th search result.'
    page = (
        "<html><body style='margin:0;font:16px sans-serif'><div style='height:40px'>" + goal + "</div>"
        "<button style='height:30px'>Search</button><a href='#a' style='display:block;height:30px'>{first}</a><a href='#b' style='display:block;height:30px'>Bo</a>"
        "<a href='#n' style='display:block;height:30px'>&gt;</a></body></html>"
    )
    scorer = ProgressScorer(renderer=renderer)

    def scores(first):
        html = page.format(first=first)
        screen = Screen(renderer.render(html, Viewport(320, 240)).png, html=html)
        boxes = {b.text: b for b in renderer.render(html, Viewport(320, 240)).boxes if b.tag == "a"}
        pred = Prediction(html=html, image=screen.image)
        tap = lambda b: Action("tap", x=b.x + b.w / 2, y=b.y + b.h / 2)  # noqa: E731
        return {t: scorer(screen, tap(b), pred, goal) for t, b in boxes.items()}

    later, here = scores("Cierra"), scores("Ignacio")
    assert later[">"] > later["Cierra"] == later["Bo"]
    assert here["Ignacio"] > here[">"] == here["Bo"]


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


def test_a_search_budget_is_spent_where_the_scorer_is_unsure_and_never_exceeded(renderer):
    # tapping 10 or 30 look alike one step ahead; only past the menu (30) is settings in reach
    wm = TableModel(
        {
            30: "<html><body><p>Menu</p></body></html>",
            40: "<html><body><p>Settings</p></body></html>",
            10: "<html><body><p>Inbox</p></body></html>",
            20: "<html><body><h1>Settings</h1></body></html>",
        }
    )

    def proposer(screen, goal):
        x = 40 if "Menu" in (screen.html or "") else 10
        return [Candidate(Action("tap", x=x, y=1), 0.5), Candidate(Action("tap", x=x, y=2), 0.4)]

    tie = [Candidate(Action("tap", x=10, y=1), 0.5), Candidate(Action("tap", x=30, y=1), 0.4)]
    for budget in (2, 3, 4, 7):
        la = Lookahead(
            wm,
            GoalTextScorer(),
            proposer=as_agent(proposer),
            beam=2,
            confident_at=None,
            renderer=renderer,
            budget=budget,
        )
        ranked = la.rank(SCREEN, GOAL, tie)
        assert la.last_spent <= budget and la.imagined_steps == la.last_spent
        if budget == 2:  # no step left past the first: the tie goes to the agent's preference
            assert ranked[0].action.x == 10 and la.last_spent == 2
        if budget >= 4:  # one level deeper finds settings behind the menu
            assert ranked[0].action.x == 30 and "Settings" in ranked[0].imagined[-1].html
    # a clear winner after the first step ends the search, whatever budget is left
    la = Lookahead(
        wm, GoalTextScorer(), proposer=as_agent(proposer), confident_at=None, renderer=renderer, budget=50
    )
    ranked = la.rank(SCREEN, GOAL, [Candidate(Action("tap", x=20, y=1), 0.1), tie[0]])
    assert ranked[0].action.x == 20 and la.last_spent == 2
    # when nothing stands out the search looks wider: the agent's next candidates
    many = [Candidate(Action("tap", x=10, y=k), 0.5 - k / 100) for k in range(4)] + [
        Candidate(Action("tap", x=20, y=9), 0.01)
    ]
    la = Lookahead(
        wm,
        GoalTextScorer(),
        proposer=as_agent(proposer),
        top_k=2,
        confident_at=None,
        renderer=renderer,
        budget=6,
    )
    assert la.rank(SCREEN, GOAL, many)[0].action.x == 20 and la.last_spent <= 6
    with pytest.raises(ValueError, match="budget"):
        Lookahead(wm, GoalTextScorer(), budget=0)


GOAL_NAMES = 'Enter "Ada" as the first name and "Byron" as the last name, then press Submit.'
# The same two fields in layouts a label-less reading could not tell apart, in either order.
LAYOUTS = [
    '<label for="a">Last name</label><input id="a" value="{last}"><label for="b">First name</label><input id="b" value="{first}">',
    '<input placeholder="First name" value="{first}"><input placeholder="Last name" value="{last}">',
    '<input name="lastname" aria-label="Last name" value="{last}"><input title="First name" value="{first}">',
    '<table><tr><td>Last name</td><td><input value="{last}"></td></tr><tr><td>First name</td><td><input value="{first}"></td></tr></table>',
    '<div><span>First name:</span><input value="{first}"><br><span>Last name:</span><input value="{last}"></div>',
    '<label>Last name <input value="{last}"></label><p>And your first name, please</p><input value="{first}">',
    '<div>Last name: <input value="{last}"><br>First name: <input value="{first}"></div>',
]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_named_values_go_to_fields_by_their_labels_in_any_layout(layout):
    from planning.progress import GoalSpec, TaskState, field_score

    g = GoalSpec.of(GOAL_NAMES)
    right = TaskState.of(f"<html><body>{layout.format(first='Ada', last='Byron')}</body></html>")
    swapped = TaskState.of(f"<html><body>{layout.format(first='Byron', last='Ada')}</body></html>")
    half = TaskState.of(f"<html><body>{layout.format(first='Ada', last='')}</body></html>")
    assert field_score(right, g)[:2] == (2, 0)
    assert field_score(swapped, g)[:2] == (0, 2)
    assert field_score(half, g)[:2] == (1, 0)


def test_dates_times_and_case_the_goal_asks_for_are_values_too():
    from planning.progress import GoalSpec, TaskState, field_score

    form = '<input type="date" value="{d}"><input type="time" value="{t}"><label>Code <input value="{c}"></label>'
    g = GoalSpec.of('Enter 10/11/2016 as the date, 1:05 PM as the time and "abc" in upper case as the code.')
    good = TaskState.of(form.format(d="2016-10-11", t="13:05", c="ABC"))
    bad = TaskState.of(form.format(d="2016-11-10", t="01:05", c="abc"))
    assert field_score(good, g)[:2] == (3, 0) and field_score(bad, g)[:2] == (0, 3)


def test_the_parts_of_an_entry_the_goal_gives_are_met_by_the_whole_entry_not_by_one_part(renderer):
    """A goal asking for an entry that "starts with X and ends with Y": X typed alone is half-way (a list of suggestions waits),
    Y alone is wrong, an entry meeting both is done; a tap on such an entry in a list is progress,
    and Submit only once the field holds it."""
    from planning.progress import GoalSpec, TaskState, field_score, requirements_met

    goal = 'Enter an item that starts with "Nor" and ends with "land".'
    form = '<html><body><label for="t">Tags:</label><input id="t" value="{v}">{more}<button>Submit</button></body></html>'
    g = GoalSpec.of(goal)
    assert [v.kind for v in g.values] == ["prefix", "suffix"]
    state = {v: TaskState.of(form.format(v=v, more="")) for v in ("Nor", "land", "Norfolk Island", "Norway")}
    assert field_score(state["Nor"], g)[:2] == (0.5, 0)
    assert field_score(state["land"], g)[:2] == (0, 1)
    assert field_score(state["Norway"], g)[:2] == (0, 1)
    assert field_score(state["Norfolk Island"], g)[:2] == (1, 0)
    assert requirements_met(state["Nor"], g) < 1.0 <= requirements_met(state["Norfolk Island"], g)

    scorer = ProgressScorer(renderer=renderer)
    blank = np.full((240, 320, 3), 255, np.uint8)
    empty = Screen(blank, html=form.format(v="", more=""))
    pred = lambda html: Prediction(html=html, image=empty.image)  # noqa: E731
    typed = scorer(empty, Action("type", x=80, y=10, text="Nor"), pred(form.format(v="Nor", more="")), goal)
    wrong = scorer(empty, Action("type", x=80, y=10, text="land"), pred(form.format(v="land", more="")), goal)
    assert typed > 0.5 > wrong
    listed = '<ul style="margin:0"><li style="height:30px">Norway</li><li style="height:30px">Norfolk Island</li></ul>'
    shown = Screen(blank, html=form.format(v="Nor", more=listed))
    boxes = renderer.render(shown.html, shown.viewport()).boxes
    at = {b.text: b for b in boxes if b.tag == "li"}
    tap = lambda b: Action("tap", x=b.x + b.w / 2, y=b.y + b.h / 2)  # noqa: E731
    right = scorer(shown, tap(at["Norfolk Island"]), pred(shown.html), goal)
    other = scorer(shown, tap(at["Norway"]), pred(shown.html), goal)
    assert right > other


ACCORDION = """<html><head><style>body{margin:0;font:16px sans-serif} h3{margin:0;height:30px}
.hide{display:none}</style></head><body><div id="area">
<h3>Section #1</h3><div style="display: none">Lorem <span>ipsum</span> dolor</div>
<h3>Section #2</h3><div style="display:none">Sed <span>eu</span> elementum</div>
<ul><li><span>Folder A</span><ul class="hide"><li><span>Rex</span></li></ul></li>
<li><span>Folder B</span><ul hidden><li><span>Dolores</span></li></ul></li></ul>
</div></body></html>"""


def test_a_control_that_reveals_the_goals_hidden_target_is_progress(renderer):
    from planning import ProgressScorer
    from planning.progress import Sight
    from render import Viewport

    screen = Screen(renderer.render(ACCORDION, Viewport(360, 640)).png, html=ACCORDION)
    boxes = renderer.render(ACCORDION, Viewport(360, 640)).boxes
    where = {b.text: b for b in boxes}
    assert "eu" not in where and "Dolores" not in where  # hidden, so not laid out
    goal = 'Expand the sections below, to find and click on the link "eu".'
    assert Sight.of(ACCORDION, boxes, goal).revealers == {("h3", "section #2")}
    assert Sight.of(ACCORDION, boxes, 'Find the file named "Dolores".').revealers == {("span", "folder b")}
    assert Sight.of(ACCORDION, boxes, 'Click on "Section #1".').revealers == set()  # already shown

    scorer = ProgressScorer(renderer=renderer)
    same = Prediction(html=ACCORDION, image=screen.image)  # a world model without the app's scripts

    def tap(text):
        b = where[text]
        return Action("tap", x=b.x + b.w / 2, y=b.y + b.h / 2)

    scores = {t: scorer(screen, tap(t), same, goal) for t in ("Section #1", "Section #2", "Folder B")}
    assert scores["Section #2"] > scores["Section #1"] == scores["Folder B"]
    # a control named exactly as the goal quotes it, in any script
    page = "<html><body><button>♥♥♥</button> <button>确定</button></body></html>"
    s2 = Screen(renderer.render(page, Viewport(360, 640)).png, html=page)
    bx = {b.text: b for b in renderer.render(page, Viewport(360, 640)).boxes}
    pred = Prediction(html=page, image=s2.image)
    hearts, other = (Action("tap", x=bx[t].x + 5, y=bx[t].y + 5) for t in ("♥♥♥", "确定"))
    g2 = 'Click on the "♥♥♥" button.'
    assert scorer(s2, hearts, pred, g2) > scorer(s2, other, pred, g2)


# Issue #40: values the goal names through the screen, a scorer that reads the imagined DOMs.
MOVIES = "Search for saga movies directed by Good from year 2003."
BANNER = '<div id="query">Search for <b>saga</b> movies directed by <b>Good</b> from year <b>2003</b>.</div>'
MOVIE_FORMS = [
    '<p><span>Genre:</span><input type="text"></p><p><span>Director:</span><input type="text"></p>'
    '<p><span>Year:</span><input type="text"></p><button>Submit</button>',
    "<table><tr><th>Year</th><td><input></td></tr><tr><th>Director</th><td><input></td></tr>"
    '<tr><th>Genre</th><td><input></td></tr></table><div class="final">Submit</div>',
    '<input placeholder="director"><input placeholder="year of release"><input placeholder="genre">'
    "<button>Search</button>",
]


def _page(body: str) -> str:
    return (
        f"<html><head><style>body{{margin:0;font:14px sans-serif}}</style></head><body>{body}</body></html>"
    )


def _screen(renderer, html):
    from render import Viewport

    res = renderer.render(html, Viewport(360, 640))
    return Screen(res.png, html=html), {b.text: b for b in res.boxes}, res.boxes


@pytest.mark.parametrize("form", MOVIE_FORMS)
def test_unquoted_values_set_apart_on_screen_are_proposed_and_placed_one_to_a_field(renderer, form):
    """Bold values in the page's instruction are values; each goes to the field its clause names,
    the one no clause names to the field left; live in Chromium through the sim, no render."""
    from planning.agents import typed_values
    from planning.progress import TaskState

    html = _page(BANNER + form)
    screen, _, boxes = _screen(renderer, html)
    st = TaskState.of(html)
    assert typed_values(MOVIES, st) == ["saga", "Good", "2003"]
    fields = sorted((b for b in boxes if b.tag == "input"), key=lambda b: (b.y, b.x))  # document order here
    hints = [f.hint for f in st.fields]
    want = {
        i: v
        for i, h in enumerate(hints)
        for k, v in (("genre", "saga"), ("direct", "Good"), ("year", "2003"))
        if k in h
    }
    assert len(want) == 3
    scorer = ProgressScorer(renderer=renderer)
    la = Lookahead(WorldModel.load("sim", renderer=renderer), scorer, confident_at=None, top_k=20)
    cands = [
        Candidate(Action("type", x=b.x + 4, y=b.y + b.h / 2, text=v), 0.3)
        for b in fields
        for v in ("saga", "Good", "2003")
    ]
    ranked = la.rank(screen, MOVIES, cands)
    best = {
        (round(r.action.x), round(r.action.y), r.action.text) for r in ranked if r.score == ranked[0].score
    }
    right = {(round(fields[i].x + 4), round(fields[i].y + fields[i].h / 2), v) for i, v in want.items()}
    assert best == right  # the three right placements, and only they, rated best
    assert scorer.renders == 0  # typed text: read off the imagined DOM, nothing laid out
    assert all(getattr(r.imagined[0], "pending", False) for r in ranked)  # and nothing rendered


def test_a_value_beside_a_named_label_and_text_to_copy_are_values_the_label_is_not():
    from planning.agents import typed_values
    from planning.progress import GoalSpec, TaskState, field_score

    table = _page(
        "<table><tr><td>Religion</td><td>Buddhism</td></tr><tr><td>Color</td><td>purple</td></tr></table>"
        '<input id="tt" value="{v}"><button>Submit</button>'
    )
    goal = "Enter the value of Color into the text field and press Submit."
    st = TaskState.of(table.replace("{v}", ""))
    assert typed_values(goal, st) == ["purple"]
    g = GoalSpec.of(goal, st)
    assert field_score(TaskState.of(table.replace("{v}", "purple")), g)[:2] == (1, 0)
    assert field_score(TaskState.of(table.replace("{v}", "Color")), g)[:2] == (0, 1)

    copy = _page(
        '<input id="answer" value="{v}"><textarea id="src">Lorem ipsum. </textarea><button>Submit</button>'
    )
    goal = "Copy the text in the textarea below, paste it into the textbox and press Submit."
    st = TaskState.of(copy.replace("{v}", ""))
    assert typed_values(goal, st) == ["Lorem ipsum. "]
    g = GoalSpec.of(goal, st)
    assert field_score(st, g)[:2] == (0, 0)  # the text to copy is not yet an answer
    assert field_score(TaskState.of(copy.replace("{v}", "Lorem ipsum. ")), g)[:2] == (1, 0)
    assert (
        typed_values("Enter the value of Color.", TaskState.of(_page("<p>Color</p><p>red</p>"))) == []
    )  # no field


COLLAPSED = _page(
    '<div id="query">Expand the section below and click submit.</div>'
    '<h3 aria-expanded="false" style="height:30px">Section #4</h3><div style="display:none">Lorem ipsum</div>'
    '<p aria-expanded="false" class="header-collapsed">tail <button>Submit</button></p>'
)


def test_a_closed_section_is_opened_first_when_the_goal_asks_and_only_then(renderer):
    """A closed control (aria-expanded false) is the way in when the goal asks to expand; a
    button inside a closed container is not that control; a title with a submit word is no submit."""
    from planning.progress import is_submit

    screen, where, _ = _screen(renderer, COLLAPSED)
    scorer = ProgressScorer(renderer=renderer)
    same = Prediction(html=COLLAPSED, image=screen.image)  # no app scripts: nothing visibly changes

    def tap(t):
        return Action("tap", x=where[t].x + where[t].w / 2, y=where[t].y + where[t].h / 2)

    goal = "Expand the section below and click submit."
    assert scorer(screen, tap("Section #4"), same, goal) > scorer(screen, tap("Submit"), same, goal)
    other = "Click submit."
    assert scorer(screen, tap("Section #4"), same, other) == scorer(screen, tap("Submit"), same, other)
    assert (
        is_submit("div", "submit") and is_submit("button", "log in") and not is_submit("div", "movie search")
    )
