"""In-app splits for phone traces: `--id-test-share` holds out part of each training app's
recordings as id-test, and `wm eval --split auto` then scores in-app beside unseen apps."""

import dataclasses
import json
import re

import pytest
from phone_fixtures import droidbot_folder
from PIL import Image
from typer.testing import CliRunner

from corpus.phone import import_droidbot
from corpus.store import held_out, hold_out_share, load_corpus, save_corpus
from wmcli import app as cli
from worldmodel.dataset import ID_TEST
from worldmodel.types import Action, Screen, Transition


def _t(app, episode, step):
    s = Screen(Image.new("RGB", (36, 64), "white"), html="<p>x</p>")
    return Transition(s, Action("back"), s, "", app, episode, step, {})


def test_whole_episodes_are_held_out_and_a_lone_run_gives_its_last_steps():
    many = [_t("a", f"e{e}", k) for e in range(5) for k in range(3)]
    lone = [_t("b", "run", k) for k in range(10)]
    other = [_t("c", f"e{e}", 0) for e in range(4)]
    n = hold_out_share(many + lone + other, {"a": "train", "b": "train", "c": "test"}, 0.4)
    held = [t for t in many + lone + other if held_out(t)]
    assert n == len(held) == 2 * 3 + 4
    episodes = {t.episode_id for t in held if t.app == "a"}
    assert len(episodes) == 2 and all(held_out(t) for t in many if t.episode_id in episodes)
    assert sorted(t.step for t in held if t.app == "b") == [6, 7, 8, 9]  # the run's tail
    assert not any(t.app == "c" for t in held)  # a test app is unseen whole already
    one = [_t("d", "e0", 0), _t("d", "e0", 1)]
    assert hold_out_share(one[:1], {"d": "train"}, 0.5) == 0  # a lone step stays for training
    with pytest.raises(ValueError, match="share"):
        hold_out_share(one, {"d": "train"}, 1.0)


def test_import_droidbot_holds_out_the_runs_tail_and_trains_on_the_rest(tmp_path):
    droidbot_folder(tmp_path / "db")
    res = CliRunner().invoke(
        cli,
        [
            "corpus",
            "import-droidbot",
            str(tmp_path / "db"),
            "-o",
            str(tmp_path / "c"),
            "--id-test-share",
            "0.3",
        ],
    )
    assert res.exit_code == 0, res.output
    dd = load_corpus(tmp_path / "c")
    assert set(dd) == {"train", ID_TEST} and len(dd[ID_TEST]) == 1 and len(dd["train"]) == 2
    assert dd[ID_TEST][0]["step"] == max(r["step"] for s in dd.values() for r in s)
    bad = CliRunner().invoke(
        cli,
        [
            "corpus",
            "import-droidbot",
            str(tmp_path / "db"),
            "-o",
            str(tmp_path / "x"),
            "--id-test-share",
            "2",
        ],
    )
    assert bad.exit_code == 2 and "--id-test-share" in bad.output


def test_wm_eval_auto_prints_in_app_beside_unseen_apps_for_a_phone_corpus(tmp_path, renderer):
    droidbot_folder(tmp_path / "db")
    kept = import_droidbot(tmp_path / "db", progress=False, renderer=renderer).kept
    three = [
        dataclasses.replace(t, app=f"org.example.app{a}", meta=dict(t.meta)) for a in range(3) for t in kept
    ]
    save_corpus(three, tmp_path / "c", id_test_share=0.3)
    dd = load_corpus(tmp_path / "c")
    assert {"train", "test", ID_TEST} <= set(dd)
    res = CliRunner().invoke(
        cli,
        [
            "eval",
            "--corpus",
            str(tmp_path / "c"),
            "-m",
            "copy",
            "-m",
            "sim+memory",
            "-o",
            str(tmp_path / "ev"),
        ],
    )
    assert res.exit_code == 0, res.output
    out = re.sub(r"\s+", " ", res.output)
    assert "in-app (id-test)" in out and "unseen apps (test)" in out
    fig = json.loads((tmp_path / "ev" / "figures.json").read_text())
    assert set(fig) == {ID_TEST, "test"} and fig[ID_TEST]["n"] == 1
