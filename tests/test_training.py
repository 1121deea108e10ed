"""Short real training runs on a tiny VLM: both stages finish, change the weights, and save a
checkpoint that predict_next loads."""

import json
import re
from dataclasses import replace

import pytest
import torch

from corpus.store import load_corpus
from render.metrics import text_f1
from training.config import preset
from training.data import _shift_edit, to_examples
from training.train import _load, init_checkpoint, run_grpo, run_sft, sft_examples, train, training_examples
from worldmodel.backends.hf import TransformersBackend
from worldmodel.card import CheckpointCard
from worldmodel.dataset import from_row, iter_transitions
from worldmodel.edit import apply, diff
from worldmodel.prompt import FOLLOW, HINT_NOTE, HINT_NOTES, NO_HINT, cut_hint, draw_action, expand_follow
from worldmodel.types import Action


def _cfg(tmp_path, **kw):
    base = dict(
        output_dir=str(tmp_path),
        tiny_hidden=64,
        tiny_layers=1,
        tiny_vocab=800,
        max_length=1024,
        max_prompt_html_chars=300,
        num_generations=2,
        max_completion_length=24,
        sft_batch_size=1,
        save_steps=1000,
        calibrate_gate=False,
    )
    base.update(kw)
    return preset("tiny", **base)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("train")
    cfg = _cfg(tmp)
    train_ds = load_corpus()["train"]
    path = init_checkpoint(cfg, train_ds.select(range(30)))
    examples = to_examples(train_ds.select(range(4)), True, cfg.max_prompt_html_chars)
    return cfg, path, examples


def _snapshot(model):
    return {k: v.detach().clone() for k, v in model.named_parameters()}


def _changed(before, model):
    return sum(not torch.equal(before[k], v) for k, v in model.named_parameters())


def test_two_step_sft_changes_weights(tiny, tmp_path):
    cfg, path, examples = tiny
    model, processor = _load(path, cfg)
    before = _snapshot(model)
    trainer, result = run_sft(cfg, model, processor, examples, 2, tmp_path / "sft")
    assert trainer.state.global_step == 2 and result.training_loss > 0
    assert _changed(before, trainer.model) > 0


def test_two_step_grpo_changes_weights_and_logs_rewards(tiny, tmp_path, renderer):
    cfg, path, examples = tiny
    model, processor = _load(path, cfg)
    before = _snapshot(model)
    trainer, _ = run_grpo(cfg, model, processor, examples, 2, tmp_path / "grpo", renderer=renderer)
    assert trainer.state.global_step == 2
    logged = [h for h in trainer.state.log_history if "rewards/r_sem/mean" in h]
    assert logged and all(0.0 <= h["rewards/r_format/mean"] <= 1.0 for h in logged)
    assert _changed(before, trainer.model) > 0


def test_train_saves_a_checkpoint_predict_next_loads(tmp_path, renderer):
    # SFT moves the weights far from the tiny init; GRPO's KL reference must be the SFT model
    first = tmp_path / "first"
    cfg = _cfg(first, sft_steps=2, sft_lr=0.05, grpo_steps=1, beta=0.04, max_train_examples=2)
    final = train(cfg, echo=lambda s: None)
    figures = json.loads((first / "figures.json").read_text())
    assert figures["sft_loss"] > 0
    assert figures["grpo_kl_first"] < 1e-4, figures["grpo_kl_first"]  # policy and reference alike at step 1
    backend = TransformersBackend(final, device="cpu", max_new_tokens=8)
    # trained without the current HTML in its prompts (the tiny preset), so predicting shows none
    assert not backend.with_html and TransformersBackend(final, device="cpu", with_html=True).with_html
    from corpus.store import iter_transitions
    from worldmodel import predict_next

    t = next(iter_transitions(load_corpus()["test"].select([0])))
    p = predict_next(t.screen, t.action, t.goal, model=backend, renderer=renderer)
    assert p.ok
    # resuming picks up the last checkpoint and trains on from its step instead of starting over
    cfg2 = _cfg(tmp_path, sft_steps=1, grpo_steps=0, max_train_examples=2, save_steps=1)
    train(cfg2, echo=lambda s: None)
    saved = tmp_path / "sft" / "checkpoint-1" / "trainer_state.json"
    state = json.loads(saved.read_text())
    assert state["global_step"] == 1
    # mark the saved state: a trainer that continues from it carries the mark on, a fresh one cannot
    state["log_history"][0]["loss"] = 123.0
    saved.write_text(json.dumps(state))
    train(replace(cfg2, sft_steps=2), resume=True, echo=lambda s: None)
    steps = json.loads((tmp_path / "figures.json").read_text())["sft_steps"]
    assert steps == {"resumed_from": 1, "global_step": 2}
    state = json.loads((tmp_path / "sft" / "checkpoint-2" / "trainer_state.json").read_text())
    losses = [(h["step"], h["loss"]) for h in state["log_history"] if "loss" in h]
    assert state["global_step"] == 2 and losses[0] == (1, 123.0) and [s for s, _ in losses] == [1, 2]


def test_unknown_preset_and_missing_checkpoint_are_named(tmp_path):
    with pytest.raises(ValueError, match="unknown preset 'huge'"):
        preset("huge")
    cfg = preset("qwen3-vl-8b", output_dir=str(tmp_path), model_path=str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="no --model-path checkpoint at .*nowhere"):
        init_checkpoint(cfg, None)
    # a trained stage's folder without its weights' config: one line, not a hub lookup
    from training.train import load_trained

    (tmp_path / "sft" / "final").mkdir(parents=True)
    with pytest.raises(
        FileNotFoundError, match=r"no model checkpoint at .*sft/final \(a folder with config.json\)"
    ):
        load_trained(tmp_path / "sft" / "final", cfg)


def test_edit_targets_train_and_their_rewards_apply_the_edit(tmp_path, renderer):
    from training.rewards import reward_functions
    from worldmodel.edit import apply

    train_ds = load_corpus()["train"].select(range(6))
    examples = to_examples(train_ds, True, 300, target="edit", renderer=renderer)
    edited = [e for e in examples if e["edits_html"]]
    assert edited and all("numbered n=" in e["prompt"][1]["content"][1]["text"] for e in edited)
    # the prompt names the element each tap acts on, and shows it
    taps = [e for e in edited if json.loads(e["action"])["type"] == "tap"]
    for e in taps:
        text = e["prompt"][1]["content"][1]["text"]
        n = re.search(r"Action target: n=(\d+) <", text).group(1)
        assert f' n="{n}"' in text.split("stylesheet lines):", 1)[1]
    assert taps
    e = edited[0]
    target = e["completion"][0]["content"][0]["text"]
    row = train_ds[examples.index(e)]
    assert apply(row["screen_html"], target)  # the target is an edit of the shown screen
    sem, act, fmt = reward_functions(renderer)
    cols = {
        k: [e[k]] * 3 for k in ("next_screen", "screen", "action", "width", "height", "scale", "edits_html")
    }
    half = target.splitlines()[0] + "\njump 7"  # one good line, one malformed
    completions = [target, "jump 7", "", half]  # the true edit, a malformed one, the empty edit (copy)
    cols = {k: v + v[:1] for k, v in cols.items()}
    f = fmt(None, completions, **cols)
    s = sem(None, completions, **cols)
    assert f[0] == 1.0 and f[1] == 0.0 and s[1] == -1.0 and s[0] >= s[2]
    assert 0 < f[3] < 1.0 and s[3] == -1.0  # partial format credit, but a malformed edit renders nothing
    cfg = _cfg(tmp_path, sft_steps=1, grpo_steps=1, max_train_examples=2, target="edit", with_html=True)
    # a small model trains only on the edits it can write
    short_cfg = preset("tiny", target="edit", max_edit_chars=60)
    short = sft_examples(short_cfg, training_examples(short_cfg, train_ds))
    lengths = [len(e["completion"][0]["content"][0]["text"]) for e in examples]
    assert len(short) == sum(n <= 60 for n in lengths) < len(examples)
    final = train(cfg, echo=lambda s: None)
    assert (final / "config.json").is_file()
    assert json.loads((tmp_path / "config.json").read_text())["target"] == "edit"


def test_typing_copies_type_other_words_in_action_and_edit(renderer):
    from training.train import grpo_examples

    ds = load_corpus()["train"]
    typed = ds.select([i for i, a in enumerate(ds["action_type"]) if a == "type"][:3])
    examples = to_examples(typed, True, 800, target="edit", renderer=renderer, typing_copies=2)
    copies = [e for e in examples if e["augmented"]]
    assert copies and len(examples) > len(typed)
    for e in copies:
        word = json.loads(e["action"])["text"]
        edit = e["completion"][0]["content"][0]["text"]
        assert re.search(r'^attr \d+ value ".*' + re.escape(word) + '"$', edit, re.M)
        assert f"Type '{word}'" in e["prompt"][1]["content"][1]["text"]
    assert grpo_examples(examples) == [e for e in examples if not e["augmented"]]
    # a transition's examples (its recorded one first) share one image, what each one's action draws
    screens, screen = iter(from_row(r).screen for r in typed), None
    for e in examples:
        screen = screen if e["augmented"] else next(screens)
        assert e["images"][0].tobytes() == draw_action(screen.image, Action.from_json(e["action"])).tobytes()
    assert len({id(e["images"][0]) for e in examples}) == len(typed)


def test_shift_copies_move_every_number_by_the_hidden_elements(renderer):
    ds = load_corpus()["train"]
    rows = ds.select([i for i, a in enumerate(ds["action_type"]) if a == "tap"][:4])
    examples = to_examples(rows, True, 800, target="edit", renderer=renderer, shift_copies=2)
    assert len(examples) == 3 * len(rows)
    for k in range(len(rows)):
        orig, *copies = examples[3 * k : 3 * k + 3]
        edit = orig["completion"][0]["content"][0]["text"]
        n0 = re.search(r"Action target: n=(\d+)", orig["prompt"][1]["content"][1]["text"])
        for c in copies:
            # pixel-true: same screenshot, so GRPO may score it (not `augmented`)
            assert not c["augmented"] and c["images"][0].tobytes() == orig["images"][0].tobytes()
            shift = c["edits_html"].count("<span hidden></span>")
            assert 1 <= shift and c["edits_html"].replace("<span hidden></span>", "") == orig["edits_html"]
            moved = c["completion"][0]["content"][0]["text"]
            # the same edit, its element numbers (not stylesheet lines) moved by `shift`
            want = re.sub(
                r"^(text|attr|unattr|class|replace|remove|before|after|prepend|append) (\d+)",
                lambda m, s=shift: f"{m[1]} {int(m[2]) + s if int(m[2]) else 0}",
                edit,
                flags=re.M,
            )
            assert moved == want
            if n0:
                n = re.search(r"Action target: n=(\d+)", c["prompt"][1]["content"][1]["text"])[1]
                assert int(n) == int(n0[1]) + shift


def _hint(example) -> str | None:
    text = example["prompt"][1]["content"][1]["text"]
    note = next((n for n in HINT_NOTES.values() if n in text), None)
    if note is None:
        return None
    return text.split(note + "\n", 1)[1].split("\nOutput only the edit", 1)[0]


def _edit_of(example) -> str:
    return diff(example["edits_html"], example["next_html"])


def test_hints_come_from_another_app_and_move_with_their_copies(renderer):
    ds = load_corpus()["train"]
    taps = [i for i, a in enumerate(ds["action_type"]) if a == "tap"]
    notes = [i for i in taps if ds[i]["app"] == "phone-notes"][:5]
    contacts = [i for i in taps if ds[i]["app"] == "phone-contacts"][:5]
    # one app alone: nothing else to take a hint from, so every prompt says so
    alone = to_examples(ds.select(notes[:3]), True, 800, target="edit", renderer=renderer, hints=True)
    assert [_hint(e) for e in alone] == [NO_HINT] * 3
    # two apps that share a phone shell: each finds the other's edits
    both = to_examples(
        ds.select(notes + contacts), True, 800, target="edit", renderer=renderer, shift_copies=1, hints=True
    )
    hints = [_hint(e) for e in both[::2]]
    assert None not in hints and sum(h != NO_HINT for h in hints) >= 2
    # where the hint comes nearer the next screen than keeping the screen, the target is to follow it
    targets = [e["completion"][0]["content"][0]["text"] for e in both]
    assert FOLLOW in targets and set(targets) != {FOLLOW}
    for e, target in zip(both, targets):
        cur, nxt = e["edits_html"], e["next_html"]
        if target == FOLLOW:
            assert e["hint"] and _hint(e) in e["hint"]
            got = apply(cur, e["hint"])
            assert got == apply(cur, _edit_of(e)) or text_f1(got, nxt) > text_f1(cur, nxt)
        else:
            assert apply(cur, target) == apply(cur, _edit_of(e))  # the true edit
    for orig, moved in zip(both[::2], both[1::2]):
        k = moved["edits_html"].count("<span hidden></span>")
        h = _hint(orig)
        want = h if h == NO_HINT else _shift_edit(h, k)
        assert _hint(moved) == want
    # without hints, no hint section
    plain = to_examples(ds.select(notes[:1]), True, 800, target="edit", renderer=renderer)
    assert _hint(plain[0]) is None


def test_a_hinted_checkpoint_says_so_and_its_backend_shows_hints(tmp_path, renderer):
    from worldmodel.types import Query

    cfg = _cfg(
        tmp_path,
        preset="small",
        target="edit",
        with_html=True,
        hints=True,
        hint_source="retrieval",
        sft_steps=1,
        grpo_steps=0,
    )
    cfg.max_train_examples = 6
    final = train(cfg, echo=lambda s: None)
    card = CheckpointCard.read(final)
    assert (card.target, card.with_html, card.html_chars, card.hints, card.after) == (
        "edit",
        True,
        300,
        True,
        "",
    )
    # the card records the completion budget measured from the edits, as config.json does
    budget = json.loads((tmp_path / "config.json").read_text())["max_completion_length"]
    assert card.completion_budget == budget and card.preset == "small"
    backend = TransformersBackend(final, device="cpu", max_new_tokens=4)
    backend.use_renderer(renderer)
    assert backend.hints and backend.html_chars == 300
    t = next(iter_transitions(load_corpus()["test"].select([0])))
    q = Query(t.screen, t.action, t.goal)
    assert HINT_NOTE in backend._prompts([q], "edit", [h.text for h in backend._hints([q])])[0][0]
    unhinted = TransformersBackend(final, device="cpu", hints=False)
    assert HINT_NOTE not in unhinted._prompts([q], "edit")[0][0]
    # a follow line stands for the hint the prompt showed; with none it is no change
    assert (
        expand_follow('attr 3 value "a"\nfollow', 'text 1 "x"\nremove 4')
        == 'attr 3 value "a"\ntext 1 "x"\nremove 4'
    )
    assert expand_follow("follow", "") == "" and expand_follow("follow", None) == ""
    # a hint longer than a prompt shows is cut at a line, never inside one
    assert cut_hint('text 1 "a"\ntext 2 "bb"\ntext 3 "ccc"', 26) == 'text 1 "a"\ntext 2 "bb"'


def test_after_sim_the_target_is_the_apps_reaction_and_the_checkpoint_runs_after_the_sim(tmp_path, renderer):
    """Trained after the sim, a checkbox tap's target is empty (the browser checked it), a MiniWoB
    task's end cover is still the target, the prompt says the action was carried out, and the
    saved checkpoint loads as sim+checkpoint."""
    from worldmodel import WorldModel
    from worldmodel.prompt import APPLIED_NOTE
    from worldmodel.types import Completion

    ds = load_corpus()["train"]
    rows = [i for i, a in enumerate(ds["app"]) if a == "miniwob-click-checkboxes"][:6]
    sub = ds.select(rows)
    plain = to_examples(sub, True, 1500, 0, "edit", renderer)
    after = to_examples(sub, True, 1500, 0, "edit", renderer, after="sim")
    ticks = [k for k, e in enumerate(plain) if 'checked ""' in _edit_of(e)]
    assert ticks and all(_edit_of(after[k]) == "" for k in ticks)
    assert all(after[k]["edits_html"] != plain[k]["edits_html"] for k in ticks)  # the sim's screen
    covers = [k for k, e in enumerate(plain) if "sync-task-cover" in _edit_of(e)]
    assert covers and all("sync-task-cover" in _edit_of(after[k]) for k in covers)
    # The two runs' hover and focus markers are not the app's reaction: where the sim and the
    # recording left them on other elements (use-spinner's end), the target is the cover alone.
    val = load_corpus()["validation"]
    spin = val.select([i for i, a in enumerate(val["app"]) if a == "miniwob-use-spinner"])
    ends = [
        e["completion"][0]["content"][0]["text"]
        for e in to_examples(spin, True, 1500, 0, "edit", renderer, after="sim")
    ]
    ends = [e for e in ends if "sync-task-cover" in e]
    state = re.compile(r"^(class \d+( [+-]wm-[\w-]+)+|unattr \d+ class)$")
    assert ends and not [line for e in ends for line in e.splitlines() if state.match(line)]
    assert all(APPLIED_NOTE in e["prompt"][1]["content"][1]["text"] for e in after)
    assert not any(APPLIED_NOTE in e["prompt"][1]["content"][1]["text"] for e in plain)
    with pytest.raises(ValueError, match="after"):
        to_examples(sub, True, 1500, 0, "edit", renderer, after="retrieval")

    cfg = _cfg(
        tmp_path,
        preset="small",
        target="edit",
        with_html=True,
        after="sim",
        sft_steps=1,
        grpo_steps=0,
        calibrate_gate=True,
    )
    cfg.max_train_examples = 4
    final = train(cfg, echo=lambda s: None)
    raw = json.loads((final / "worldmodel.json").read_text())
    assert raw["after"] == "sim" and "min_confidence" in raw  # calibrated on the validation split
    gate = json.loads((tmp_path / "figures.json").read_text())["gate"]
    assert gate["transitions"] == len(load_corpus()["validation"]) and gate["kept"] <= gate["edits"]
    assert gate["gain_gated"] >= gate["gain_ungated"]  # the gate is chosen so: never worse on validation
    t = next(iter_transitions(load_corpus()["test"].select([0])))
    with WorldModel.load(f"hf:{final}", renderer=renderer, max_new_tokens=4) as wm:
        assert wm.name == f"sim+hf:{final}" and len(wm.stages) == 2
        assert wm.predict(t.screen, t.action, mode="edit").ok
    # after sim+memory it runs once, on what memory made of the sim's screen (no second sim)
    with WorldModel.load(f"sim+memory+hf:{final}", renderer=renderer, max_new_tokens=4) as wm:
        assert wm.name == f"sim+memory+hf:{final}" and len(wm.stages) == 3
    # a gate no edit reaches keeps the sim's screen; the confidence is reported
    with WorldModel.load(f"hf:{final}", renderer=renderer, max_new_tokens=8, min_confidence=0.0) as wm:
        p = wm.predict(t.screen, t.action, mode="edit")
        gated = wm.stages[-1]._gated(Completion('text 1 "x"', confidence=-1.0))
    with WorldModel.load("sim", renderer=renderer) as sim:
        assert p.ok and p.html == sim.predict(t.screen, t.action, mode="edit").html
    assert p.confidence is not None and p.confidence < 0
    assert gated.text == "" and "below the gate 0.00" in gated.note and gated.confidence == -1.0


def test_a_checkpoint_trained_on_memorys_answers_is_calibrated_as_on_known_and_unknown_apps(
    tmp_path, renderer
):
    from corpus.store import save_corpus
    from worldmodel import WorldModel

    # a small corpus: four training rows, two episodes of one validation app
    dd = load_corpus()
    trained = list(iter_transitions(dd["train"].select(range(4))))
    val = dd["validation"]
    eps = sorted({e for a, e in zip(val["app"], val["episode_id"]) if a == "miniwob-use-spinner"})[:2]
    held = list(iter_transitions(val.select([i for i, e in enumerate(val["episode_id"]) if e in eps])))
    splits = {t.app: "train" for t in trained} | {t.app: "validation" for t in held}
    save_corpus(trained + held, tmp_path / "corpus", splits)
    cfg = _cfg(
        tmp_path / "out",
        corpus=str(tmp_path / "corpus"),
        preset="small",
        target="edit",
        with_html=True,
        hints=True,
        hint_source="memory",
        after="sim",
        sft_steps=1,
        grpo_steps=0,
        calibrate_gate=True,
    )
    final = train(cfg, echo=lambda s: None)
    card = CheckpointCard.read(final)
    assert card.hint_source == "memory" and card.hints and card.min_confidence is not None
    assert card.unknown_hint  # its prompts told "memory knew nothing" apart (training/data.py)
    assert card.own_app_note  # and said memory's hints are the app's own recordings
    gate = json.loads((tmp_path / "out" / "figures.json").read_text())["gate"]
    # asked twice on the validation split: with memory of the app's other episode, and with none
    assert gate["conditions"] == 2 and gate["transitions"] == len(held)
    assert gate["gain_gated"] >= gate["gain_ungated"]
    # in sim+memory+PATH the memory stage becomes the checkpoint's hints' source, not a stage of its own
    with WorldModel.load(f"sim+memory+hf:{final}", renderer=renderer, max_new_tokens=4) as wm:
        assert wm.name == f"sim+memory+hf:{final}" and len(wm.stages) == 2


def test_the_gate_keeps_the_edits_that_the_threshold_pays_for():
    from training.calibrate import KEEP_NONE, choose_gate

    # gains over keeping the screen: +0.5, -0.8, (no edit), +0.2
    gate, gated, ungated = choose_gate([-0.1, -0.5, None, -0.05], [1.5, 0.2, 1.0, 1.2], [1.0] * 4)
    # halfway between the last edit kept (-0.1) and the first left out (-0.5)
    assert gate == pytest.approx(-0.3) and gated == pytest.approx(0.7) and ungated == pytest.approx(-0.1)
    # an edit that changes nothing (-0.2) does not move the gate up to it
    gate, gated, _ = choose_gate([-0.1, -0.2, -0.5], [1.5, 1.0, 0.2], [1.0] * 3)
    assert gate == pytest.approx(-0.3) and gated == pytest.approx(0.5)
    assert choose_gate([-0.3, -0.2], [1.2, 1.1], [1.0, 1.0])[0] is None  # every edit pays: no gate
    assert choose_gate([-0.3, -0.2], [0.5, 0.9], [1.0, 1.0])[0] == KEEP_NONE  # none does


def test_wm_eval_runs_an_after_sim_edit_checkpoint_as_predict_next_does(tmp_path, renderer):
    """A checkpoint trained --after sim --target edit: `wm eval` loads it as sim+checkpoint, asks it
    for edits with the HTML budget its card recorded, and scores it as predict_next runs it."""
    from typer.testing import CliRunner

    from render.metrics import fidelity
    from wmcli import app as cli
    from worldmodel import WorldModel, predict_next

    cfg = _cfg(
        tmp_path, target="edit", with_html=True, after="sim", sft_steps=1, grpo_steps=0, max_train_examples=2
    )
    final = train(cfg, echo=lambda s: None)
    card = CheckpointCard.read(final)
    assert (card.target, card.after, card.html_chars, card.preset) == ("edit", "sim", 300, "tiny")
    out = tmp_path / "eval"
    args = [
        "eval",
        "-m",
        str(final),
        "--split",
        "test",
        "--limit",
        "3",
        "-o",
        str(out),
        "--max-new-tokens",
        "16",
    ]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    fig = json.loads((out / "figures.json").read_text())["backends"][str(final)]
    # the sim ran first, edits were asked for, and the prompts had the card's budget, not a default
    assert fig["model"] == f"sim+hf:{final}" and fig["mode"] == "edit"
    assert fig["card"]["html_chars"] == 300 and fig["card"]["after"] == "sim"
    ts = list(iter_transitions(load_corpus()["test"].select(range(3))))
    with WorldModel.load(str(final), renderer=renderer, max_new_tokens=16) as wm:
        assert [b.name for b in wm.stages][0] == "sim" and wm.stages[-1].html_chars == 300
        preds = [predict_next(t.screen, t.action, t.goal, model=wm) for t in ts]
    assert all(p.edit is not None for p in preds)  # the card's mode: edit
    ssim = [fidelity(p.image, t.next_screen.array)["ssim"] if p.ok else 0.0 for p, t in zip(preds, ts)]
    assert fig["ssim"] == pytest.approx(sum(ssim) / len(ssim), abs=1e-6)


def test_dynamic_sampling_leaves_a_group_that_scored_all_alike_out_of_the_update(tiny, tmp_path):
    from trl import GRPOConfig

    from training.train import dynamic_sampling_trainer

    cfg, path, examples = tiny
    # two prompts per step: one whose samples all score alike, one whose samples differ
    rows = [{**examples[0], "flat": True}, {**examples[1], "flat": False}]
    rows = [{k: v for k, v in e.items() if k != "completion"} for e in rows]

    def reward(prompts, completions, flat, **kw):
        return [1.0 if f else float(i % 2) for i, f in enumerate(flat)]

    seen = []

    class Watched(dynamic_sampling_trainer()):
        def _generate_and_score_completions(self, inputs):
            out = super()._generate_and_score_completions(inputs)
            seen.append(
                (list(inputs), out["completion_mask"].sum(dim=1).tolist(), out["advantages"].tolist())
            )
            return out

    from datasets import Dataset

    model, processor = _load(path, cfg)
    args = GRPOConfig(
        output_dir=str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=8,
        learning_rate=1e-3,
        remove_unused_columns=False,
        use_cpu=True,
        bf16=False,
        report_to=[],
        save_strategy="no",
        shuffle_dataset=False,
    )
    trainer = Watched(
        model=model,
        reward_funcs=[reward],
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=processor,
    )
    trainer.train()
    assert seen
    for inputs, kept, adv in seen:
        for row, n, a in zip(inputs, kept, adv):
            if row["flat"]:
                assert n == 0 and a == 0.0  # left out: no token of it counts
            else:
                assert n > 0 and a != 0.0
    logged = [h["dynamic/flat_groups"] for h in trainer.state.log_history if "dynamic/flat_groups" in h]
    assert logged and all(v == pytest.approx(0.5) for v in logged)


def test_prepass_keeps_the_prompts_whose_samples_disagree(tiny, renderer):
    from dataclasses import replace

    from training.train import disagreeing_prompts

    cfg, path, examples = tiny
    model, processor = _load(path, cfg)
    hot = replace(cfg, prepass_prompts=3, prepass_samples=3, temperature=1.5, max_completion_length=12)
    kept, figs = disagreeing_prompts(hot, model, processor, examples, renderer, echo=lambda s: None)
    assert figs["drawn"] == 3 and 0 <= figs["kept"] <= 3
    assert all(any(k is e for e in examples) for k in kept)
    # near-greedy sampling: every sample alike, so nothing disagrees and every drawn prompt stays
    cold = replace(hot, temperature=1e-4)
    kept, figs = disagreeing_prompts(cold, model, processor, examples, renderer, echo=lambda s: None)
    assert figs["kept"] == 0 and len(kept) == 3 and figs["flat_share"] == 1.0
