"""`wm train` and `wm corpus build` flags come from their config dataclasses (wmcli/options.py).

A field added to TrainConfig or BuildConfig is a flag without touching the CLI; what the flags
give reaches the config the pipeline runs, and what is not given keeps the preset's value.
"""

import dataclasses

import pytest
import typer.main

import wmcli
from corpus.build import BUNDLED_MINIWOB, BuildConfig
from corpus.configs import AndroidImportConfig, DroidBotImportConfig, RecordConfig
from corpus.heldout import HeldOutConfig
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


# What each corpus command takes besides its config: the target, where it goes, how it spreads.
_OWN = {
    "build": {"out", "compact", "id_test", "num_proc", "shard"},
    "record": {"target", "out", "num_proc", "shard"},
    "import-android": {"path", "out", "num_proc", "shard"},
    "import-droidbot": {"folder", "out", "num_proc", "shard"},
    "add-id-test": {"path", "out", "num_proc", "shard"},
}
_CONFIGS = {
    "build": BuildConfig,
    "record": RecordConfig,
    "import-android": AndroidImportConfig,
    "import-droidbot": DroidBotImportConfig,
    "add-id-test": HeldOutConfig,
}


@pytest.mark.parametrize("command", sorted(_CONFIGS))
def test_corpus_flags_are_their_configs_fields(command):
    """A hand-written option cannot creep back: a corpus command's flags, less its own few, are
    exactly its config's fields, each with the field's default."""
    flags = _flags("corpus", command)
    cls = _CONFIGS[command]
    assert set(flags) - _OWN[command] == {f.name for f in dataclasses.fields(cls)}
    cmd = typer.main.get_command(wmcli.app).commands["corpus"].commands[command]
    for p in cmd.params:
        f = next((f for f in dataclasses.fields(cls) if f.name == p.name), None)
        if f is not None and not isinstance(f.default, tuple):
            assert p.default == f.default, p.name


def test_corpus_flag_names_and_aliases_stay():
    record = _flags("corpus", "record")
    assert record["held_out"] == ["--hold-out"] and record["compact"] == ["--compact", "--no-compact"]
    assert record["append"] == ["--append", "--no-append"] and record["name"] == ["--name"]
    for command in ("import-android", "import-droidbot"):
        flags = _flags("corpus", command)
        assert flags["floor"] == ["--floor", "--threshold"] and flags["max_off"] == ["--max-off"]
        assert flags["id_test_share"] == ["--id-test-share"] and flags["licence"] == ["--licence"]
    assert _flags("corpus", "import-droidbot")["app"] == ["--app"]
    assert _flags("corpus", "import-android")["coder"] == ["--coder"]
    assert _flags("corpus", "add-id-test")["miniwob_tasks"] == ["--tasks"]


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


def test_corpus_flags_reach_their_configs(monkeypatch):
    import corpus.pipelines

    got = {}
    for fn in ("record_app", "import_android_corpus", "import_droidbot_corpus", "add_id_test"):
        monkeypatch.setattr(corpus.pipelines, fn, lambda *a, _fn=fn, **k: got.update({_fn: a[2]}))
    args = ["corpus", "record", "app", "-o", "x", "--hold-out", "1", "--no-compact", "--episodes", "4"]
    assert wmcli.main(args) == 0
    assert got["record_app"] == RecordConfig(episodes=4, compact=False, held_out=1)
    assert wmcli.main(["corpus", "import-android", "a.tfrecord", "-o", "x", "--threshold", "0.7"]) == 0
    assert got["import_android_corpus"] == AndroidImportConfig(floor=0.7)
    assert wmcli.main(["corpus", "import-droidbot", "db", "-o", "x", "--app", "f", "--floor", "0.5"]) == 0
    assert got["import_droidbot_corpus"] == DroidBotImportConfig(floor=0.5, app="f")
    assert wmcli.main(["corpus", "add-id-test", "-o", "x", "--tasks", "", "--phone-apps", "notes"]) == 0
    assert got["add_id_test"] == HeldOutConfig(phone_apps=("notes",), miniwob_tasks=())
