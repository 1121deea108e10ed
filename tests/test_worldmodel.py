"""predict_next through every backend, with the real renderer and a real (tiny) VLM."""

import base64
import io
import json

import numpy as np
import pytest
from conftest import chat_server
from PIL import Image
from typer.testing import CliRunner

from corpus.store import iter_transitions, load_corpus
from wmcli import app as cli
from worldmodel import Action, Screen, SpecError, WorldModel, clear_cache, predict_next
from worldmodel.backends.hf import TransformersBackend
from worldmodel.backends.retrieval import RetrievalBackend
from worldmodel.extract import extract_html, root_size
from worldmodel.prompt import build_messages, draw_action
from worldmodel.tiny import build_tiny
from worldmodel.types import Query


def _blank(w=200, h=400):
    return Image.new("RGB", (w, h), "white")


def _red_centroid(img):
    a = np.asarray(img).astype(int)
    mask = (a[:, :, 0] > 200) & (a[:, :, 1] < 120) & (a[:, :, 2] < 120)
    ys, xs = np.nonzero(mask)
    return xs.mean(), ys.mean(), mask.sum()


@pytest.mark.parametrize(
    "kind, direction, finger",
    [
        ("swipe", "up", "up"),
        ("swipe", "left", "left"),
        ("scroll", "down", "up"),
        ("scroll", "up", "down"),
        ("scroll", "right", "left"),
    ],
)
def test_arrow_points_the_way_the_finger_moves(kind, direction, finger):
    img = draw_action(_blank(), Action(kind, x=100, y=200, direction=direction))
    cx, cy, n = _red_centroid(img)
    assert n > 50
    dx, dy = cx - 100, cy - 200
    expect = {"up": dy < -10, "down": dy > 10, "left": dx < -10, "right": dx > 10}
    assert expect[finger], (kind, direction, dx, dy)


def test_tap_is_a_translucent_circle_at_the_point():
    base = Image.new("RGB", (200, 400), (0, 0, 255))
    img = draw_action(base, Action("tap", x=50, y=60))
    px = img.getpixel((50, 60))
    assert px[0] > 100 and px[2] > 50  # red over blue, blue still showing through
    assert img.getpixel((150, 300)) == (0, 0, 255)


def test_prompt_carries_action_goal_and_html():
    s = Screen(_blank(), html="<p>current</p>")
    msgs, image = build_messages(s, Action("type", x=1, y=2, text="hi"), goal="say hi")
    text = msgs[1]["content"][1]["text"]
    assert "Type 'hi'" in text and '"text": "hi"' in text and "say hi" in text and "<p>current</p>" in text
    assert "200px by 400px" in text and image.size == (200, 400)


def test_extract_html_from_fenced_truncated_chatter():
    html, repaired = extract_html(
        'Sure! Here it is:\n```html\n<html><body><div id="screen" style="width:10px;height:20px"><p>Hi'
    )
    assert repaired and html.startswith("<!DOCTYPE html>") and "</p></div></body></html>" in html
    assert root_size(html) == (10, 20)
    clean, rep2 = extract_html("<!DOCTYPE html><html><body><p>x</p></body></html>")
    assert not rep2 and "<p>x</p>" in clean
    empty, rep3 = extract_html("just words <3")
    assert rep3 and root_size(empty) is None and "just words &lt;3" in empty
    no_js, _ = extract_html("<html><body><script>alert(1)</script><p>a</p></body></html>")
    assert "script" not in no_js


@pytest.fixture(scope="module")
def test_transitions():
    return list(iter_transitions(load_corpus()["test"].select(range(6))))


def test_copy_backend_renders_the_current_screen(test_transitions, renderer):
    t = test_transitions[0]
    p = predict_next(t.screen, t.action, model="copy", renderer=renderer)
    from render.metrics import ssim

    assert p.ok and ssim(p.image, t.screen.array) > 0.95
    bare = Screen(t.screen.image)  # no HTML: the screenshot itself is embedded
    p2 = predict_next(bare, t.action, model="copy", renderer=renderer)
    assert ssim(p2.image, t.screen.array) > 0.95


def test_retrieval_backend_returns_a_recorded_next_screen(renderer):
    from render.metrics import ssim, text_f1

    backend = RetrievalBackend.from_corpus()
    t = next(iter_transitions(load_corpus()["train"].select([5])))
    p = predict_next(t.screen, t.action, model=backend, renderer=renderer)  # a training query finds itself
    assert p.ok and text_f1(p.html, t.next_screen.html) == 1.0
    assert ssim(p.image, t.next_screen.array) > 0.95


@pytest.fixture(scope="module")
def tiny_ckpt(tmp_path_factory):
    texts = [t.next_screen.html for t in iter_transitions(load_corpus()["train"].select(range(20)))]
    return build_tiny(tmp_path_factory.mktemp("tiny"), texts, hidden=64, layers=1, vocab_size=800)


def test_tiny_vlm_runs_through_the_transformers_backend(tiny_ckpt, test_transitions, renderer):
    backend = TransformersBackend(tiny_ckpt, device="cpu", dtype="float32", max_new_tokens=24)
    t = test_transitions[1]
    p = predict_next(t.screen, t.action, t.goal, model=backend, renderer=renderer)
    assert p.completion != "" or p.repaired
    assert p.ok and p.image.size == t.screen.size  # random weights, but a renderable, right-size page
    assert p.timings["generate_s"] > 0


def test_edit_tries_keep_an_edit_that_applies_or_the_screen(tiny_ckpt, test_transitions, renderer):
    from worldmodel.edit import extract_edit, try_apply

    # random weights write edits that rarely apply: each query ends with one that applies in
    # full or with no change (and a note), never with a broken edit carried out in part
    backend = TransformersBackend(tiny_ckpt, device="cpu", max_new_tokens=16, edit_tries=3, focus=True)
    backend.use_renderer(renderer)
    ts = [t for t in test_transitions[:4] if t.screen.html]
    outs = backend.complete_edits([Query(t.screen, t.action, t.goal) for t in ts])
    assert len(outs) == len(ts)
    for t, c in zip(ts, outs):
        assert try_apply(t.screen.html, extract_edit(c.text))[1] is None
        assert c.text or "none of 3 edits applied" in c.note
    with pytest.raises(ValueError, match="edit_tries"):
        TransformersBackend(tiny_ckpt, device="cpu", edit_tries=0)


def test_hf_backend_takes_a_card_and_a_generation_config(tiny_ckpt):
    from worldmodel.backends.hf import GenerationConfig
    from worldmodel.card import CheckpointCard

    card = CheckpointCard(target="edit", html_chars=321, hints=False)
    gen = GenerationConfig(device="cpu", max_new_tokens=5, batch_size=3)
    b = TransformersBackend(tiny_ckpt, card, gen)
    assert (b.target, b.html_chars, b.max_new_tokens, b.batch_size) == ("edit", 321, 5, 3)
    # a keyword option overrides one value of either; None keeps it; the card it runs with says so
    b = TransformersBackend(
        tiny_ckpt, card, gen, model=b.model, processor=b.processor, html_chars=99, batch_size=None
    )
    assert b.card.html_chars == 99 and b.batch_size == 3 and b.card.target == "edit"
    b.batch_size = 2  # a benchmark sweeps it
    assert b.generation.batch_size == 2
    with pytest.raises(TypeError, match="no option"):
        TransformersBackend(tiny_ckpt, bogus=1)
    with pytest.raises(ValueError, match="cache"):
        GenerationConfig(cache="nope")


def test_missing_checkpoint_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no model checkpoint"):
        TransformersBackend(tmp_path / "none")
    with pytest.raises(SpecError, match="unknown model 'bogus'"):
        WorldModel.load("bogus")


def test_openai_compatible_endpoint(test_transitions, renderer):
    def reply(body):
        content = body["messages"][1]["content"]
        url = next(c for c in content if c["type"] == "image_url")["image_url"]["url"]
        img = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
        text = next(c for c in content if c["type"] == "text")["text"]
        action = text.split("Action: ", 1)[1].split("\n", 1)[0]
        return f"```html\n<html><body><div id='screen'><p>{img.size[0]}x{img.size[1]} {action}</p></div></body></html>\n```"

    t = test_transitions[2]
    with chat_server(reply) as (url, seen):
        p = predict_next(t.screen, t.action, t.goal, model=f"openai:{url}#wm-test", renderer=renderer)
    path, body = seen[0]
    assert path == "/v1/chat/completions" and body["model"] == "wm-test"
    w, h = t.screen.size
    assert f"{w}x{h} {t.action.describe()}" in p.html and p.ok


def test_wm_predict_writes_html_and_png(tmp_path, test_transitions):
    t = test_transitions[0]
    t.screen.image.save(tmp_path / "s.png")
    res = CliRunner().invoke(
        cli,
        [
            "predict",
            "--screen",
            str(tmp_path / "s.png"),
            "--action",
            t.action.to_json(),
            "-o",
            str(tmp_path / "next.html"),
            "--model",
            "copy",
        ],
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "next.html").read_text().startswith("<!DOCTYPE html>")
    assert Image.open(tmp_path / "next.png").size == t.screen.size
    bad = CliRunner().invoke(
        cli,
        [
            "predict",
            "--screen",
            str(tmp_path / "s.png"),
            "--action",
            '{"type": "fly"}',
            "-o",
            str(tmp_path / "x.html"),
        ],
    )
    assert bad.exit_code != 0 and "fly" in bad.output


def test_wm_eval_reports_every_figure(tmp_path):
    res = CliRunner().invoke(
        cli, ["eval", "-m", "copy", "-m", "retrieval", "--split", "test", "--limit", "6", "-o", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    fig = json.loads((tmp_path / "figures.json").read_text())
    for name in ("copy", "retrieval"):
        b = fig["backends"][name]
        assert 0 <= b["ssim"] <= 1 and b["render_failure_rate"] == 0.0
        assert b["text_f1"] is not None and b["element_f1"] is not None and b["latency_s"] > 0
        assert "copy_correlation" in b and str(b["lpips"]).startswith("unavailable")
    assert fig["backends"]["copy"]["ssim"] == pytest.approx(fig["copy_baseline"]["ssim"], abs=0.02)
    _check_report_in_chromium(tmp_path / "report.html", ["copy", "retrieval"], 6)


def test_evaluate_per_app_figures_weigh_back_to_the_whole(renderer):
    from worldmodel import WorldModel
    from worldmodel.evaluate import evaluate

    test = list(iter_transitions(load_corpus(None)["test"]))
    apps = sorted({t.app for t in test})[:2]
    ts = [t for a in apps for t in [x for x in test if x.app == a][:3]]  # three of each
    models = {
        "copy": WorldModel.load("copy", renderer=renderer),
        "sim": WorldModel.load("sim", renderer=renderer),
    }
    kept: dict = {}
    fig = evaluate(models, ts, renderer, lpips=None, modes={"copy": "document", "sim": "edit"}, keep=kept)
    # what a caller reads off the same run: each transition's prediction and score, in order
    for name in models:
        assert len(kept[name]) == len(ts) and all(p.ok for p, _ in kept[name])
        mean = sum(sc["ssim"] for _, sc in kept[name]) / len(ts)
        assert fig["backends"][name]["ssim"] == pytest.approx(mean)
    per_app = fig["per_app"]
    for name in models:  # in the transitions' order: the first three are the first app's
        first = sum(sc["ssim"] for _, sc in kept[name][:3]) / 3
        assert per_app[apps[0]]["backends"][name]["ssim"] == pytest.approx(first)
    assert list(per_app) == apps and sum(v["n"] for v in per_app.values()) == len(ts)
    for name in models:
        for k, whole in (("ssim", "ssim"), ("text_f1", "text_f1"), ("gain", "gain_over_copy")):
            weighed = sum(v["n"] * v["backends"][name][k] for v in per_app.values()) / len(ts)
            assert fig["backends"][name][whole] == pytest.approx(weighed)
    # the rewards' own scores (render.metrics), in range, the copy at the copy's zero
    for name in models:
        for k in ("sem_gain", "content_gain", "change_gain"):
            v = fig["backends"][name][k]
            assert v is None or -1.0 <= v <= 1.0
    assert fig["backends"]["copy"]["content_gain"] == pytest.approx(0.0, abs=0.05)


def _check_report_in_chromium(report, names, n):
    """Open the report as a person would and read what it shows."""
    from playwright.sync_api import sync_playwright

    from render.sandbox import CHROMIUM_ARGS, chromium_path

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = b.new_page()
        page.goto(report.as_uri())
        summary = page.locator("#summary tr").all_inner_texts()
        assert summary[1].startswith("screenshot copy baseline") and len(summary) == 2 + len(names)
        assert any(r.startswith("copy") for r in summary) and any(r.startswith("retrieval") for r in summary)
        assert page.locator("#bars rect.bar").count() >= len(names)  # gain per backend and app
        assert page.locator("svg.scatter").count() == len(names)
        assert page.locator("svg.scatter circle.dot").count() == n * len(names)
        rows = page.locator("#rows > tr")
        assert rows.count() == n
        # every picture loaded: the action drawn on the current screen, the real next, renders, heat maps
        broken = page.evaluate(
            "Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).length"
        )
        assert broken == 0 and page.locator("img[alt='difference heat map']").count() == n * len(names)
        # sorting by a backend's gain puts the rows in that order
        page.select_option("#sort", index=2)
        gains = [
            float(x)
            for x in page.eval_on_selector_all("#rows > tr", "rs => rs.map(r => r.dataset.gainRetrieval)")
        ]
        assert gains == sorted(gains)
        # filtering by app hides the others
        app = page.locator("#app option").nth(1).inner_text()
        page.select_option("#app", label=app)
        shown = page.eval_on_selector_all(
            "#rows > tr", "rs => rs.filter(r => r.style.display !== 'none').map(r => r.dataset.app)"
        )
        assert shown and set(shown) == {app}
        b.close()


def test_check_backend_passes_every_shipped_backend(tiny_ckpt, renderer):
    from worldmodel import check_backend

    specs = ["copy", "sim", "retrieval", f"hf:{tiny_ckpt}"]
    with chat_server(lambda body: "<html><body><p>next</p></body></html>") as (url, _):
        for spec in [*specs, f"openai:{url}#wm-test"]:
            with WorldModel.load(spec, renderer=renderer, only_known_options=True, max_new_tokens=4) as wm:
                for b in wm.stages:
                    check_backend(b, renderer)


def test_check_backend_names_what_a_broken_backend_gets_wrong():
    from worldmodel import Backend, BackendContractError, check_backend

    class NoName(Backend):
        edits = True  # but no complete_edits of its own

        def complete(self, queries):
            return ["<p>x</p>"]

    with pytest.raises(BackendContractError) as e:
        check_backend(NoName())
    msg = str(e.value)
    assert "NoName" in msg and "name is empty" in msg and "edits is True but complete_edits" in msg

    class OneAnswer(Backend):
        name = "one"
        OPTIONS = ("speed",)

        def complete(self, queries):
            return [b"<p>x</p>"]  # one answer, and bytes, whatever it is asked

    with pytest.raises(BackendContractError) as e:
        check_backend(OneAnswer())
    assert "its constructor takes no option(s) speed" in str(e.value)
    OneAnswer.OPTIONS = ()
    with pytest.raises(BackendContractError) as e:
        check_backend(OneAnswer())
    msg = str(e.value)
    assert "complete returned 1 completions for 2 queries" in msg and "completion 0 is bytes" in msg

    class Duck:
        name = "duck"

        def complete(self, queries):
            return ["" for _ in queries]

    with pytest.raises(BackendContractError, match="is not a worldmodel.Backend.*lacks OPTIONS"):
        check_backend(Duck())
    with pytest.raises(TypeError, match="subclass worldmodel.Backend"):
        WorldModel(Duck())


def test_the_checkpoint_card_round_trips_and_old_cards_still_load(tmp_path, tiny_ckpt):
    import shutil

    from worldmodel import CardError, CheckpointCard

    card = CheckpointCard(
        target="edit",
        html_chars=1500,
        hints=True,
        hint_source="memory",
        after="sim",
        min_confidence=-0.4,
        completion_budget=40,
    )
    card.write(tmp_path)
    assert CheckpointCard.read(tmp_path) == card and [p.name for p in tmp_path.iterdir()] == [
        "worldmodel.json"
    ]
    assert (
        CheckpointCard.read(tmp_path / "nowhere") is None
        and CheckpointCard.of(tmp_path / "nowhere").target == "document"
    )
    # the five keys training wrote before the card: an edit checkpoint said so only by its edit-only keys
    old = tmp_path / "old"
    old.mkdir()
    (old / "worldmodel.json").write_text(
        json.dumps(
            {"with_html": True, "html_chars": 1500, "hints": True, "after": "sim", "min_confidence": -0.4}
        )
    )
    assert CheckpointCard.read(old) == CheckpointCard(
        target="edit", html_chars=1500, hints=True, after="sim", min_confidence=-0.4
    )
    (old / "worldmodel.json").write_text(
        json.dumps({"with_html": False, "html_chars": 6000, "hints": False, "after": ""})
    )
    assert CheckpointCard.read(old) == CheckpointCard(target="document", with_html=False, html_chars=6000)
    for bad, why in [
        ({"target": "poem"}, "target 'poem'"),
        ({"version": 2, "html_chars": "lots"}, "html_chars 'lots'"),
        ({"version": 2, "gate": 1}, "unknown card field"),
        ({"version": 2, "hints": True, "hint_source": "friends"}, "hint_source 'friends'"),
        ({"version": 99}, "newer"),
    ]:
        (old / "worldmodel.json").write_text(json.dumps(bad))
        with pytest.raises(CardError, match=f"worldmodel.json.*{why}"):
            CheckpointCard.read(old)
    (old / "worldmodel.json").write_text("{not json")
    with pytest.raises(CardError, match="not readable JSON"):
        CheckpointCard.read(old)
    # an old after-sim checkpoint loads as sim+checkpoint, asked for edits with its budget
    ckpt = tmp_path / "ckpt"
    shutil.copytree(tiny_ckpt, ckpt)
    (ckpt / "worldmodel.json").write_text(
        json.dumps(
            {"with_html": True, "html_chars": 700, "hints": False, "after": "sim", "min_confidence": None}
        )
    )
    with WorldModel.load(f"hf:{ckpt}", max_new_tokens=4) as wm:
        assert wm.name == f"sim+hf:{ckpt}" and wm.mode == "edit" and wm.stages[-1].html_chars == 700
    with WorldModel.load(f"hf:{ckpt}", max_new_tokens=4, html_chars=900) as wm:
        assert wm.stages[-1].html_chars == 900 and wm.stages[-1].card.html_chars == 900  # an option wins


def test_the_default_model_gives_an_unseen_app_another_apps_screen_only_where_one_program_made_both(
    test_transitions, renderer
):
    """With no model named, predict_next runs DEFAULT_MODEL (sim+memory): on a test app no
    recording resembles, memory knows nothing and the sim's screen stands; on a test app built
    on a recorded app's shell (phone-settings: the phone's tabs phone-notes recorded) memory
    answers from that app's recording and says so; on a training screen it knows, the recorded
    next screen comes back."""
    from render.metrics import text_f1
    from worldmodel.spec import DEFAULT_MODEL

    clear_cache()
    test = load_corpus()["test"]
    t = next(iter_transitions(test.select([test["app"].index("medium-editor")])))
    p = predict_next(t.screen, t.action, t.goal, renderer=renderer)
    sim = predict_next(t.screen, t.action, t.goal, model="sim", renderer=renderer)
    assert DEFAULT_MODEL == "sim+memory" and p.ok
    assert p.html == sim.html  # no recording resembles this app's screen: the sim's answer, untouched
    assert "no recordings of app 'medium-editor'" in p.note, p.note
    shell = next(t for t in test_transitions if t.app == "phone-settings")
    p = predict_next(shell.screen, shell.action, shell.goal, renderer=renderer)
    assert "(app 'phone-" in p.note, p.note
    seen = next(iter_transitions(load_corpus()["train"].select([5])))
    known = predict_next(seen.screen, seen.action, seen.goal, renderer=renderer)
    assert text_f1(known.html, seen.next_screen.html) > 0.95
    with WorldModel.load(renderer=renderer) as wm:
        assert wm.name == DEFAULT_MODEL
    clear_cache()
