"""Each reward function on crafted completions, through the real renderer."""

import io

import pytest
from PIL import Image

from training.rewards import ActionReward, FormatReward, SemanticReward, TextReward, completion_text

W, H = 120, 200


def page(body, bg="white"):
    return (
        f'<!DOCTYPE html><html><body style="margin:0"><div id="screen" style="width:{W}px;height:{H}px;'
        f'background:{bg};position:relative">{body}</div></body></html>'
    )


def png_of(renderer, html):
    from render import Viewport

    return renderer.render(html, Viewport(W, H)).png


CURRENT = page('<button style="position:absolute;left:10px;top:10px;width:100px;height:30px">Open</button>')
NEXT = page(
    '<div style="position:absolute;left:0;top:0;width:120px;height:60px;background:rgb(20,90,200)"></div>'
    '<p style="position:absolute;top:80px;left:10px;margin:0">Opened</p>'
)


def kw(renderer, n, action='{"type": "tap", "x": 60, "y": 25}'):
    return dict(
        screen=[png_of(renderer, CURRENT)] * n,
        next_screen=[png_of(renderer, NEXT)] * n,
        action=[action] * n,
        width=[W] * n,
        height=[H] * n,
        scale=[1.0] * n,
    )


def test_semantic_reward_ranks_the_real_next_screen_first(renderer):
    r = SemanticReward(renderer)
    out = r(None, [NEXT, CURRENT, page("", "black"), "no html"], **kw(renderer, 4))
    assert out[0] == pytest.approx(1.0, abs=1e-6)
    assert out[0] > out[1] > 0 and out[2] < out[1]
    assert all(0.0 <= v <= 1.0 for v in out)


def test_render_failure_gets_the_lowest_reward_not_a_crash(renderer):
    from render import Renderer

    # (scripts are stripped before rendering, so a page too large for the renderer is the failure here)
    with Renderer(max_html_bytes=2000) as small:
        for R in (SemanticReward, ActionReward, FormatReward):
            assert R(small)(None, [page("x" * 5000)], **kw(renderer, 1)) == [0.0]


def test_action_reward_wants_change_where_the_tap_was(renderer):
    r = ActionReward(renderer)
    out = r(None, [NEXT, CURRENT], **kw(renderer, 2))
    assert out[0] == pytest.approx(1.0) and out[1] < 0.6  # copying the screen ignores the tap


def test_action_reward_checks_typed_text(renderer):
    r = ActionReward(renderer)
    typed = '{"type": "type", "x": 60, "y": 25, "text": "hello world"}'
    shows = NEXT.replace("Opened", "hello world")
    out = r(None, [shows, NEXT], **kw(renderer, 2, typed))
    assert out[0] > out[1]


def test_action_reward_takes_a_corpus_row_dict_and_never_raises_on_a_bad_action(renderer):
    r = ActionReward(renderer)
    as_json = r(None, [NEXT, CURRENT], **kw(renderer, 2))
    row = {"type": "tap", "x": 60, "y": 25, "direction": None, "text": None, "key": None, "app": None}
    args = kw(renderer, 2)
    assert r(None, [NEXT, CURRENT], **{**args, "action": [row, row]}) == as_json
    bad = r(None, [NEXT, CURRENT], **{**args, "action": ["not json", {"kind": "tap"}]})
    assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in bad)
    assert bad[0] == pytest.approx(1.0) and bad[1] < bad[0]  # still the whole screen's change


def test_format_reward(renderer):
    r = FormatReward(renderer)
    sized_clean = page("<p>x</p>")
    wrong_size = sized_clean.replace(f"width:{W}px", "width:50px")
    chatter = "Here you go:\n" + sized_clean
    out = r(None, [sized_clean, wrong_size, chatter, "no html at all"], **kw(renderer, 4))
    assert out[0] == pytest.approx(1.0)
    assert out[1] == pytest.approx(0.7) and out[2] == pytest.approx(0.7)
    assert out[3] < out[2]


def test_conversational_completions_are_read():
    assert completion_text([{"role": "assistant", "content": "<p>a</p>"}]) == "<p>a</p>"
    assert completion_text([{"role": "assistant", "content": [{"type": "text", "text": "<b>"}]}]) == "<b>"


def test_rewards_accept_pil_and_dict_images(renderer):
    img = Image.open(io.BytesIO(png_of(renderer, NEXT)))
    args = kw(renderer, 2)
    args["next_screen"] = [img, {"bytes": png_of(renderer, NEXT)}]
    assert SemanticReward(renderer)(None, [NEXT, NEXT], **args) == pytest.approx([1.0, 1.0])


def test_text_reward_scores_the_words_of_the_applied_edit(renderer):
    r = TextReward(renderer)
    args = kw(renderer, 4)
    args["edits_html"] = [CURRENT] * 4
    args["next_html"] = [NEXT, NEXT, NEXT, ""]
    right = 'text 2 "Opened"'  # the button (2) now says what the next screen says
    out = r(None, [right, "", "text 2 bare", right], **args)
    assert out[0] == pytest.approx(1.0)
    assert out[1] == 0.0  # nothing changed: "Open" is not a word of the next screen
    assert out[2] == 0.0  # does not apply: nothing renders
    assert out[3] is None  # no next HTML recorded: left out of the sum


def test_a_follow_line_is_scored_as_the_hint_its_prompt_showed(renderer):
    from training.rewards import reward_functions

    _, _, fmt, text = reward_functions(renderer, text=True)
    args = kw(renderer, 4)
    args["edits_html"] = [CURRENT] * 4
    args["next_html"] = [NEXT] * 4
    right = 'text 2 "Opened"'
    args["hint"] = [right, right, "", 'text 99 "x"']
    got = text(None, ["follow", right, "follow", "follow"], **args)
    assert got[0] == pytest.approx(1.0) and got[0] == got[1]  # as if the hint were written out
    assert got[2] == 0.0  # no hint: follow is the empty edit, the screen kept
    assert fmt(None, ["follow", right, "follow", "follow"], **args)[3] < 1.0  # a hint that does not apply
    # without the hint column a follow line is no operation the edit language knows
    del args["hint"]
    assert fmt(None, ["follow"], **{k: v[:1] for k, v in args.items()}) == [0.0]
