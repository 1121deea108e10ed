"""`wm train` and `wm corpus build` flags come from their config dataclasses (wmcli/options.py).

A field added to TrainConfig or BuildConfig is a flag without touching the CLI; what the flags
give reaches the config the pipeline runs, and what is not given keeps the preset's value.
"""

import dataclasses

import pytest
import typer.main

import wmcli
from corpus.build import BUNDLED_MINIWOB, BuildConfig
from training.config import RewardWeights, TrainConfig


def _flags(*path):
    cmd = typer.main.get_command(wmcli.app)
    for p in path:
        cmd = cmd.commands[p]
    return {p.name: p.opts + p.secondary_opts for p in cmd.params}


def test_every_config_field_is_a_flag():
    train = _flags("train")
    for f in dataclasses.fields(TrainConfig):
        if f.name != "rewards":
            assert f.name in train, f.name
    for f in dataclasses.fields(RewardWeights):
        assert f"rewards_{f.name}" in train, f.name
    assert train["rewards_semantic"] == ["--w-sem"] and train["with_html"] == ["--with-html", "--no-html"]
    build = _flags("corpus", "build")
    assert {f.name for f in dataclasses.fields(BuildConfig)} <= set(build)
    assert build["miniwob_tasks"] == ["--tasks"]


@pytest.fixture
def captured(monkeypatch):
    import corpus.pipelines
    import training.train

    got = {}
    monkeypatch.setattr(
        training.train, "train", lambda cfg, resume, echo: got.update(cfg=cfg, resume=resume) or "r"
    )
    monkeypatch.setattr(
        corpus.pipelines,
        "build_corpus",
        lambda out, cfg, compact, id_test, log, num_proc=1, shard=None: got.update(cfg=cfg, id_test=id_test),
    )
    return got


def test_train_flags_reach_the_config_and_the_rest_keeps_the_preset(captured):
    args = ["train", "--preset", "small", "--w-sem", "2", "--no-hints", "--sft-steps", "3", "--beta", "0.5"]
    assert wmcli.main(args + ["--sem-metric", "blur_ssim", "--resume"]) == 0
    cfg = captured["cfg"]
    assert (cfg.preset, cfg.output_dir, cfg.after, cfg.hints, cfg.sft_steps, cfg.beta) == (
        "small",
        "runs/small",
        "sim",
        False,
        3,
        0.5,
    )
    assert cfg.rewards == RewardWeights(semantic=2.0, text=1.0, sem_metric="blur_ssim") and captured["resume"]
    assert wmcli.main(["train"]) == 0 and captured["cfg"] == TrainConfig()


def test_a_choice_outside_the_fields_choices_is_a_usage_error(captured, capsys):
    assert wmcli.main(["train", "--sem-metric", "ssimx"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--sem-metric" in err[0] and "ssimx" in err[0]


def test_build_lists_are_comma_separated_and_empty_means_what_the_field_says(captured):
    assert wmcli.main(["corpus", "build", "-o", "x", "--tasks", "", "--third-party", "", "--seed", "4"]) == 0
    cfg = captured["cfg"]
    assert cfg.miniwob_tasks == BUNDLED_MINIWOB and cfg.third_party == () and cfg.seed == 4
    assert wmcli.main(["corpus", "build", "-o", "x", "--tasks", "a,b", "--phone-episodes", "0"]) == 0
    assert captured["cfg"] == BuildConfig(phone_episodes=0, miniwob_tasks=("a", "b"))
