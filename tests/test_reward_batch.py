"""The GRPO rewards on one fixed batch equal the values recorded before they were redesigned.

The batch: four transitions of the bundled test split (a long press, a tab, typing, a scroll),
each answered as a document (the true next HTML, the current screen kept, a truncated
document, no HTML at all) and as an edit of its current screen (the true edit, the empty edit,
one that does not apply, one that applies in part, a `follow` line standing for the true edit,
a `follow` line with no hint). RECORDED holds what R_sem (SSIM and blurred SSIM, normalised and
raw), R_act, R_format and R_text paid each of them at commit eecd22e, through trl's call
`f(prompts, completions, **columns)`; the redesign keeps every value (to 1e-6).
"""

import pytest

from training.rewards import RenderBatch, SemanticReward, reward_functions, with_render_batch
from worldmodel.dataset import iter_transitions, load_corpus
from worldmodel.edit import diff

PICKED = (4, 83, 93, 106)
DOCUMENT_ANSWERS = ("truth", "copy", "truncated", "no html")
EDIT_ANSWERS = ("edit", "empty", "bad edit", "partial", "follow", "follow no hint")
BAD_LINE = 'text 9999 "x"'


def fixed_batch():
    """(completions, columns, labels) as trl hands them to the reward functions."""
    ts = list(iter_transitions(load_corpus()["test"]))
    completions, labels = [], []
    cols: dict[str, list] = {
        k: [] for k in ("screen", "next_screen", "action", "width", "height", "scale", "next_html")
    }
    cols.update(screen_html=[], edits_html=[], hint=[])
    for i in PICKED:
        t = ts[i]
        cur, nxt = t.screen.html, t.next_screen.html
        true_edit = diff(cur, nxt)
        answers = {
            "truth": (nxt, "", ""),
            "copy": (cur, "", ""),
            "truncated": (nxt[: len(nxt) // 2], "", ""),
            "no html": ("I cannot draw that screen.", "", ""),
            "edit": (true_edit, cur, ""),
            "empty": ("", cur, ""),
            "bad edit": (BAD_LINE, cur, ""),
            "partial": (true_edit + "\n" + BAD_LINE, cur, ""),
            "follow": ("follow", cur, true_edit),
            "follow no hint": ("follow", cur, ""),
        }
        vp = t.screen.viewport()
        for name in DOCUMENT_ANSWERS + EDIT_ANSWERS:
            text, base, hint = answers[name]
            completions.append([{"role": "assistant", "content": text}])
            labels.append(f"{i}:{name}")
            cols["screen"].append(t.screen.png())
            cols["next_screen"].append(t.next_screen.png())
            cols["action"].append(t.action.to_json())
            cols["width"].append(vp.width)
            cols["height"].append(vp.height)
            cols["scale"].append(vp.device_scale_factor)
            cols["next_html"].append(nxt)
            cols["screen_html"].append(cur)
            cols["edits_html"].append(base)
            cols["hint"].append(hint)
    return completions, cols, labels


def reward_table(renderer) -> dict[str, list]:
    """Each reward's values on the fixed batch, by reward name."""
    completions, cols, _ = fixed_batch()
    funcs = reward_functions(renderer, text=True)
    out = {f.__name__: f(None, completions, **cols) for f in funcs}
    out["r_sem_blur"] = reward_functions(renderer, sem_metric="blur_ssim")[0](None, completions, **cols)
    out["r_sem_raw"] = SemanticReward(renderer, normalised=False)(None, completions, **cols)
    return out


# label: (r_sem, r_act, r_format, r_text, r_sem_blur, r_sem_raw)
RECORDED: dict[str, tuple] = {
    "4:truth": (1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    "4:copy": (0.0, 0.0, 1.0, 0.0, 0.0, 0.884089405),
    "4:truncated": (0.390348925, -0.428461073, 0.4, -1.0, 0.239191662, 0.929334981),
    "4:no html": (0.357887505, -0.431179446, 0.4, -0.588028169, 0.193511706, 0.925572359),
    "4:edit": (1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    "4:empty": (0.0, 0.0, 1.0, 0.0, 0.0, 0.884089405),
    "4:bad edit": (-1.0, -1.0, 0.0, -1.0, -1.0, 0.0),
    "4:partial": (-1.0, -1.0, 0.458333333, -1.0, -1.0, 0.0),
    "4:follow": (1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    "4:follow no hint": (0.0, 0.0, 1.0, 0.0, 0.0, 0.884089405),
    "83:truth": (0.0, None, 1.0, 1.0, 0.0, 1.0),
    "83:copy": (0.0, None, 1.0, 0.0, 0.0, 1.0),
    "83:truncated": (-0.978189502, None, 0.7, -0.690569033, -1.0, 0.5270755),
    "83:no html": (-1.0, None, 0.4, -0.960836746, -1.0, 0.471152718),
    "83:edit": (0.0, None, 1.0, 1.0, 0.0, 1.0),
    "83:empty": (-7.1e-08, None, 1.0, 0.0, -3.4e-08, 0.999999966),
    "83:bad edit": (-1.0, None, 0.0, -1.0, -1.0, 0.0),
    "83:partial": (-1.0, None, 0.4375, -1.0, -1.0, 0.0),
    "83:follow": (0.0, None, 1.0, 1.0, 0.0, 1.0),
    "83:follow no hint": (-7.1e-08, None, 1.0, 0.0, -3.4e-08, 0.999999966),
    "93:truth": (1.0, 1.0, 1.0, 0.806451613, 1.0, 1.0),
    "93:copy": (0.0, 0.0, 1.0, 0.0, 0.0, 0.958479172),
    "93:truncated": (-1.0, -0.943801158, 0.4, -1.0, -1.0, 0.601280134),
    "93:no html": (-1.0, -0.943801158, 0.4, -0.921815889, -1.0, 0.572244427),
    "93:edit": (1.0, 1.0, 1.0, 0.806451613, 1.0, 1.0),
    "93:empty": (0.0, 0.0, 1.0, 0.0, 0.0, 0.958479172),
    "93:bad edit": (-1.0, -1.0, 0.0, -1.0, -1.0, 0.0),
    "93:partial": (-1.0, -1.0, 0.375, -1.0, -1.0, 0.0),
    "93:follow": (1.0, 1.0, 1.0, 0.806451613, 1.0, 1.0),
    "93:follow no hint": (0.0, 0.0, 1.0, 0.0, 0.0, 0.958479172),
    "106:truth": (1.0, 1.0, 1.0, 0.490196078, 1.0, 1.0),
    "106:copy": (0.000418853, 0.00267888, 1.0, 0.0, 0.000133144, 0.244763923),
    "106:truncated": (-1.0, -0.103542183, 0.7, -0.337395473, -1.0, 0.175803618),
    "106:no html": (0.243375346, 0.192280522, 0.4, -0.958747389, 0.222120995, 0.428330319),
    "106:edit": (1.0, 1.0, 1.0, 0.490196078, 1.0, 1.0),
    "106:empty": (0.000418853, 0.00267888, 1.0, 0.0, 0.000133144, 0.244763923),
    "106:bad edit": (-1.0, -1.0, 0.0, -1.0, -1.0, 0.0),
    "106:partial": (-1.0, -1.0, 0.473684211, -1.0, -1.0, 0.0),
    "106:follow": (1.0, 1.0, 1.0, 0.490196078, 1.0, 1.0),
    "106:follow no hint": (0.000418853, 0.00267888, 1.0, 0.0, 0.000133144, 0.244763923),
}
NAMES = ("r_sem", "r_act", "r_format", "r_text", "r_sem_blur", "r_sem_raw")


@pytest.mark.parametrize("name", NAMES)
def test_rewards_on_the_fixed_batch_are_the_recorded_ones(name, table):
    labels = fixed_batch()[2]
    got = table[name]
    assert labels == list(RECORDED) and len(got) == len(labels)
    for label, g in zip(labels, got):
        w = RECORDED[label][NAMES.index(name)]
        if w is None:
            assert g is None, label
        else:
            assert g == pytest.approx(w, abs=1e-6), label


@pytest.fixture(scope="module")
def table(renderer):
    return reward_table(renderer)


def test_one_batch_per_step_is_rendered_once_for_every_reward(renderer, table):
    # as GRPO's trainer hands them: trl's rows with the step's batch as one more column
    completions, cols, labels = fixed_batch()
    funcs = reward_functions(renderer, text=True)
    rows = with_render_batch(funcs[0].batches, [dict(zip(cols, v)) for v in zip(*cols.values())], completions)
    given = {k: [r[k] for r in rows] for k in rows[0]}
    assert isinstance(given["render_batch"][0], RenderBatch)
    assert all(b is given["render_batch"][0] for b in given["render_batch"])
    got = {f.__name__: f(None, completions, **given) for f in funcs}
    # 40 completions, less the 8 edits that do not apply in full: rendered once, not once a reward
    assert funcs[0].batches.rendered == 32
    for name, values in got.items():
        assert values == pytest.approx(table[name], abs=1e-6), name
    # the completions of one transition share its screenshots, decoded once
    assert len(given["render_batch"][0].targets()) == len(PICKED)
