"""Code2World's own evaluation: SigLIP and DINO similarity from local checkpoints, and the judge's
four scores from an OpenAI-compatible endpoint (on loopback), through `evaluate` and `wm eval`."""

import json
import re

import numpy as np
import pytest
from conftest import chat_server
from PIL import Image
from typer.testing import CliRunner

from corpus.store import iter_transitions, load_corpus
from wmcli import app as cli
from worldmodel.embed import EmbeddingError, ImageEmbedder
from worldmodel.evaluate import evaluate, side_by_side
from worldmodel.judge import JUDGE_PROMPT, SCORES, Judge, parse_scores


def _tiny_siglip(out):
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel

    small = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2)
    cfg = SiglipConfig(
        text_config=dict(small, vocab_size=100, bos_token_id=1, eos_token_id=2, pad_token_id=0),
        vision_config=dict(small, image_size=32, patch_size=8),
    )
    SiglipModel(cfg).save_pretrained(out)
    SiglipImageProcessor(size={"height": 32, "width": 32}).save_pretrained(out)
    return out


def _tiny_dino(out):
    from transformers import BitImageProcessor, Dinov2Config, Dinov2Model

    cfg = Dinov2Config(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2)
    cfg.image_size, cfg.patch_size = 32, 8
    Dinov2Model(cfg).save_pretrained(out)
    BitImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def encoders(tmp_path_factory):
    root = tmp_path_factory.mktemp("enc")
    return {"siglip": _tiny_siglip(root / "siglip"), "dino": _tiny_dino(root / "dino")}


@pytest.fixture(scope="module")
def three():
    """Two taps and one other action of the test split."""
    ts = list(iter_transitions(load_corpus()["test"]))
    return [t for t in ts if t.action.type == "tap"][:2] + [t for t in ts if t.action.type != "tap"][:1]


def test_embedding_similarity_is_one_for_the_same_screen_and_less_for_another(encoders):
    white = Image.new("RGB", (90, 160), "white")
    noise = Image.fromarray((np.random.RandomState(0).rand(160, 90, 3) * 255).astype("uint8"))
    for kind, path in encoders.items():
        e = ImageEmbedder(path, device="cpu", batch=2)
        same, other, again = e.similarity([white, noise, noise], [white, white, noise])
        assert same == pytest.approx(1.0, abs=1e-4) and again == pytest.approx(1.0, abs=1e-4), kind
        assert other < 0.999, kind
        with pytest.raises(ValueError):
            e.similarity([white], [])


def test_a_folder_without_a_checkpoint_is_named(tmp_path):
    with pytest.raises(EmbeddingError, match=str(tmp_path)):
        ImageEmbedder(tmp_path, device="cpu")


@pytest.mark.parametrize(
    "answer, want",
    [
        ('Sure.\n```json\n{"S_ad": 8, "S_id": 7, "S_ele": 6.5, "S_lay": 9}\n```', (8, 7, 6.5, 9)),
        ("S_ad: 9\nS_id - 4\nElement alignment: 3\nThe layout is fine.", (9, 4, 3, None)),
        ('{"action_adherence": 5, "layout_integrity": 14}', (5, None, None, 10)),
        ("I'm sorry, I can't evaluate these images.", (None, None, None, None)),
        ('{"S_ad": "seven", "S_id": null} S_ele=2', (None, None, 2, None)),
    ],
)
def test_the_judges_answer_is_read_through_chatter_gaps_and_refusals(answer, want):
    assert tuple(parse_scores(answer)[k] for k in SCORES) == want


def _reply(body):
    """A judge that reads the action from the prompt: taps score high, anything else it refuses."""
    text = body["messages"][0]["content"][-1]["text"]
    assert len(body["messages"][0]["content"]) == 4 and body["model"] == "judge-vlm"
    if re.search(r"Action: tap", text, re.IGNORECASE):
        return 'Here you go: {"S_ad": 9, "S_id": 8, "S_ele": 7, "S_lay": 6} Hope it helps.'
    return "I cannot judge this."


def test_evaluate_adds_code2worlds_scores_and_the_judge_asks_once(encoders, three, renderer, tmp_path):
    embedders = {k: ImageEmbedder(p, device="cpu") for k, p in encoders.items()}
    taps = sum(t.action.type == "tap" for t in three)
    with chat_server(_reply) as (url, seen):
        judge = Judge(f"{url}#judge-vlm", cache=tmp_path / "cache.jsonl")
        fig = evaluate({"copy": "copy"}, three, renderer, lpips=None, embedders=embedders, judge=judge)
        assert len(seen) == 3 and judge.asked == 3
        b = fig["backends"]["copy"]
        for k in ("siglip", "dino"):
            assert 0.0 < b[k] <= 1.0 + 1e-6 and 0.0 < fig["copy_baseline"][k] <= 1.0 + 1e-6
        assert b["judge_answered"] == pytest.approx(taps / 3)
        assert taps == 2 and (b["judge_S_ad"], b["judge_S_lay"]) == (90.0, 60.0)  # x10; refusal left out
        again = Judge(f"{url}#judge-vlm", cache=tmp_path / "cache.jsonl")
        fig2 = evaluate({"copy": "copy"}, three, renderer, lpips=None, judge=again)
        assert again.asked == 0 and len(seen) == 3  # every answer, the refusal too, comes from the cache
        assert fig2["backends"]["copy"]["judge_S_ad"] == b["judge_S_ad"]
    table = side_by_side({"test": fig})
    assert "SigLIP" in table and "S_ele" in table
    assert "S_ad (action adherence)" in JUDGE_PROMPT and "0 (worst) to 10 (best)" in JUDGE_PROMPT


def test_a_failed_render_scores_zero_without_asking(three, tmp_path):
    with chat_server(_reply) as (url, seen):
        j = Judge(f"openai:{url}#judge-vlm")
        assert j.score_many([(three[0], None)]) == [{k: 0.0 for k in SCORES}] and not seen


def test_wm_eval_reports_siglip_dino_and_the_judge(encoders, tmp_path):
    with chat_server(lambda body: '{"S_ad": 5, "S_id": 5, "S_ele": 5, "S_lay": 5}') as (url, seen):
        args = ["eval", "-m", "copy", "--split", "test", "--limit", "2", "-o", str(tmp_path / "ev")]
        args += ["--siglip", str(encoders["siglip"]), "--dino", str(encoders["dino"]), "--device", "cpu"]
        args += ["--judge", f"{url}#judge-vlm", "--judge-cache", str(tmp_path / "jc.jsonl")]
        res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    fig = json.loads((tmp_path / "ev" / "figures.json").read_text())
    b = fig["backends"]["copy"]
    assert b["judge_S_ele"] == 50.0 and b["siglip"] > 0 and b["dino"] > 0 and len(seen) == 2
    assert "SigLIP" in (tmp_path / "ev" / "report.html").read_text()
    bad = CliRunner().invoke(cli, ["eval", "-m", "copy", "--limit", "1", "--judge", "ftp://x#m"])
    assert bad.exit_code != 0 and "--judge" in bad.output
