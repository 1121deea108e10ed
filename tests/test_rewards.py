"""Each reward function on crafted completions, through the real renderer."""

import io
import warnings

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


# an app's tinted page: a blank white one is further from the next screen than keeping this one
TINT = "rgb(200,215,235)"
CURRENT = page(
    '<button style="position:absolute;left:10px;top:10px;width:100px;height:30px">Open</button>', TINT
)
NEXT = page(
    '<div style="position:absolute;left:0;top:0;width:120px;height:60px;background:rgb(20,90,200)"></div>'
    '<p style="position:absolute;top:80px;left:10px;margin:0">Opened</p>',
    TINT,
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


BLANK = page("")
WRONG = page('<p style="position:absolute;top:150px;left:10px;margin:0">Closed now</p>', "rgb(240,200,200)")


def lines(*words, bg=TINT):
    return page("".join(f'<p style="margin:4px 8px;font-size:14px">{w}</p>' for w in words), bg)


def test_semantic_reward_is_the_gain_over_keeping_the_screen(renderer):
    # a screen of text whose third line changes: the copy is near, a blank page far
    cur, nxt = (
        lines("Wi-Fi", "Bluetooth", "Display", "Sound", "Battery"),
        lines("Wi-Fi", "Bluetooth", "Brightness level", "Sound", "Battery"),
    )
    args = {
        **kw(renderer, 6),
        "screen": [png_of(renderer, cur)] * 6,
        "next_screen": [png_of(renderer, nxt)] * 6,
    }
    wrong = lines("Storage", "Apps", "Privacy", "Location", "Security", "Accounts")
    out = SemanticReward(renderer)(None, [nxt, cur, BLANK, wrong, page("", "black"), "no html"], **args)
    gt, copy, blank, other, black, _ = out
    assert gt == pytest.approx(1.0, abs=1e-6)
    assert copy == pytest.approx(0.0, abs=1e-6)  # keeping the screen gains nothing
    assert blank == pytest.approx(-1.0, abs=1e-6)  # a white page is the bottom of the scale
    assert gt > copy > other > blank >= black
    assert all(-1.0 <= v <= 1.0 for v in out)
    raw = SemanticReward(renderer, normalised=False)(None, [nxt, cur], **args)
    assert raw[0] == pytest.approx(1.0, abs=1e-6) and 0 < raw[1] < 1  # the old [0, 1] score


def test_render_failure_gets_the_lowest_reward_not_a_crash(renderer):
    from render import Renderer

    # (scripts are stripped before rendering, so a page too large for the renderer is the failure here)
    with Renderer(max_html_bytes=2000) as small:
        args = {**kw(renderer, 1), "next_html": [NEXT]}
        assert SemanticReward(small)(None, [page("x" * 5000)], **args) == [-1.0]
        assert TextReward(small)(None, [page("x" * 5000)], **args) == [-1.0]
        assert ActionReward(small)(None, [page("x" * 5000)], **args) == [-1.0]
        assert FormatReward(small)(None, [page("x" * 5000)], **args) == [0.0]


def test_action_reward_pays_only_a_change_that_lands_where_and_as_the_real_one(renderer):
    r = ActionReward(renderer)
    half = NEXT.replace("Opened", "")  # the blue band, not the word
    out = r(None, [NEXT, CURRENT, half, WRONG, BLANK], **kw(renderer, 5))
    gt, copy, part, wrong, blank = out
    assert gt == pytest.approx(1.0) and copy == 0.0
    assert 0.0 < part < gt  # half the change, drawn right
    assert wrong < copy and blank < copy  # changes the real screen did not make cost
    assert all(-1.0 <= v <= 1.0 for v in out)


def test_action_reward_is_none_where_nothing_changed(renderer):
    args = kw(renderer, 2)
    args["next_screen"] = args["screen"]
    assert ActionReward(renderer)(None, [CURRENT, NEXT], **args) == [None, None]


def test_rewards_never_raise_on_bad_columns(renderer):
    from training.rewards import reward_functions

    args = kw(renderer, 2)
    args["next_screen"] = [b"not a png", None]
    args["action"] = ["not json", {"kind": "tap"}]
    for f in reward_functions(renderer, text=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = f(None, [NEXT, 7], **args, next_html=[NEXT, None])
        assert len(got) == 2 and all(v is None or -1.0 <= v <= 1.0 for v in got)
    # a column missing altogether: None for every completion, never an exception
    with pytest.warns(UserWarning, match="r_sem left out of this batch"):
        assert SemanticReward(renderer)(None, [NEXT], width=[W], height=[H], scale=[1.0]) == [None]


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
    args = kw(renderer, 5)
    args["edits_html"] = [CURRENT] * 5
    args["next_html"] = [NEXT, NEXT, NEXT, "", NEXT]
    right = 'text 2 "Opened"'  # the button (2) now says what the next screen says
    invented = 'text 2 "Opened" \nappend 1 "<p>Closed</p><p>Gone</p>"'
    out = r(None, [right, "", "text 2 bare", right, invented], **args)
    assert out[0] > 0  # better than keeping the screen
    assert out[1] == 0.0  # nothing changed: the copy's own score
    assert out[2] == -1.0  # does not apply: nothing renders
    assert out[3] is None  # no next HTML recorded: left out of the sum
    assert out[4] < out[0]  # invented words and elements cost
    assert r(None, [NEXT], **{**kw(renderer, 1), "next_html": [NEXT]}) == [pytest.approx(1.0)]


def test_a_follow_line_is_scored_as_the_hint_its_prompt_showed(renderer):
    from training.rewards import reward_functions

    _, _, fmt, text = reward_functions(renderer, text=True)
    args = kw(renderer, 4)
    args["edits_html"] = [CURRENT] * 4
    args["next_html"] = [NEXT] * 4
    right = 'text 2 "Opened"'
    args["hint"] = [right, right, "", 'text 99 "x"']
    got = text(None, ["follow", right, "follow", "follow"], **args)
    assert got[0] > 0 and got[0] == got[1]  # as if the hint were written out
    assert got[2] == 0.0  # no hint: follow is the empty edit, the screen kept
    assert fmt(None, ["follow", right, "follow", "follow"], **args)[3] < 1.0  # a hint that does not apply
    # without the hint column a follow line is no operation the edit language knows
    del args["hint"]
    assert fmt(None, ["follow"], **{k: v[:1] for k, v in args.items()}) == [0.0]
