"""The public face: WorldModel, the spec grammar, batching in both generating backends, presets."""

import pytest
from conftest import chat_server
from PIL import Image

from training.config import preset
from worldmodel import (
    Action,
    Query,
    Screen,
    SpecError,
    WorldModel,
    clear_cache,
    parse_spec,
    predict_next,
)
from worldmodel.backends import Backend
from worldmodel.backends.copy import CopyBackend
from worldmodel.backends.hf import TransformersBackend
from worldmodel.chat import ChatClient, ChatError
from worldmodel.predict import _cache
from worldmodel.tiny import build_tiny

HTML = "<body style='margin:0'><div id=screen style='width:120px;height:90px;background:#fff'><p>{}</p></div></body>"


def _screen(text="now", colour="white"):
    return Screen(Image.new("RGB", (120, 90), colour), html=HTML.format(text))


@pytest.mark.parametrize(
    "text,stages",
    [
        ("copy", [("copy", "", "")]),
        ("retrieval", [("retrieval", "", "")]),
        ("retrieval:/data/c", [("retrieval", "/data/c", "")]),
        ("hf:runs/x", [("hf", "runs/x", "")]),
        ("openai:http://h:1/v1#m", [("openai", "http://h:1/v1", "m")]),
        ("http://h:1/v1#m", [("openai", "http://h:1/v1", "m")]),
        ("copy+hf:runs/x", [("copy", "", ""), ("hf", "runs/x", "")]),
    ],
)
def test_spec_grammar_parses_once_into_a_typed_spec(text, stages):
    spec = parse_spec(text)
    assert [(s.kind, s.arg, s.model) for s in spec.stages] == stages
    assert parse_spec(str(spec)) == spec


@pytest.mark.parametrize("bad", ["nosuch:thing", "", "copy+", "openai:ftp://x", "hf:"])
def test_bad_specs_say_what_is_wrong(bad):
    with pytest.raises(SpecError, match="model"):
        parse_spec(bad)


def test_world_model_predicts_rolls_out_and_closes(renderer):
    with WorldModel.load("copy", renderer=renderer) as wm:
        p = wm.predict(_screen(), Action("tap", x=5, y=5))
        assert p.ok and p.image.size == (120, 90) and "now" in p.html
        steps = wm.rollout(_screen("a"), [Action("wait"), Action("tap", x=3, y=3), Action("back")])
        assert len(steps) == 3 and all(s.ok for s in steps)
        many = wm.rollout_many([_screen("a"), _screen("b")], [[Action("wait")], [Action("wait")] * 2])
        assert [len(r) for r in many] == [1, 2] and "b" in many[1][1].html


def test_composed_stages_pass_the_screen_along(renderer):
    class Stamp(Backend):
        name = "stamp"

        def complete(self, queries):
            return [q.screen.html.replace("</p>", " +stamped</p>") for q in queries]

    wm = WorldModel([CopyBackend(), Stamp()], renderer)
    p = wm.predict(_screen("x"), Action("wait"))
    assert "x +stamped" in p.html and any(b.text == "x +stamped" for b in p.boxes)


def test_unknown_options_are_refused():
    with pytest.raises(ValueError, match="takes no option"):
        WorldModel.load("copy", device="cuda")


def test_predict_next_cache_is_small_and_clearable(renderer):
    clear_cache()
    for spec in ("copy", "copy+copy", "copy+copy+copy"):
        predict_next(_screen(), Action("wait"), model=spec, renderer=renderer)
    assert len(_cache) == 2
    clear_cache()
    assert len(_cache) == 0


def test_presets_are_deep_copies():
    a = preset("tiny")
    a.rewards.semantic = 9
    assert preset("tiny").rewards.semantic != 9


def test_openai_backend_sends_a_batch_concurrently(renderer):
    with chat_server(lambda body: HTML.format("next"), delay_s=0.2) as (url, seen):
        with WorldModel.load(f"openai:{url}#wm", renderer=renderer) as wm:
            preds = wm.predict_many([Query(_screen(str(i)), Action("wait")) for i in range(8)])
    assert len(seen) == 8 and seen.peak >= 4
    assert all(p.ok and "next" in p.html for p in preds)


def test_chat_client_retries_429_and_5xx_then_names_the_failure():
    with chat_server(lambda body: "fine", statuses=[429, 503]) as (url, seen):
        c = ChatClient(url, "m", retries=3, backoff_s=0.01)
        assert c.complete([{"role": "user", "content": "hi"}]) == "fine" and len(seen) == 3
    with chat_server(lambda body: "fine", statuses=[500] * 10) as (url, seen):
        c = ChatClient(url, "m", retries=2, backoff_s=0.01)
        with pytest.raises(ChatError, match="failed after 3 tries: HTTP 500"):
            c.complete([{"role": "user", "content": "hi"}])
    with chat_server(lambda body: "fine", statuses=[401]) as (url, seen):
        with pytest.raises(ChatError, match="HTTP 401"):
            ChatClient(url, "m", backoff_s=0.01).complete([{"role": "user", "content": "hi"}])
        assert len(seen) == 1  # a client error is not retried


def test_hf_backend_generates_a_batch_in_one_call(tmp_path):
    path = build_tiny(
        tmp_path / "m", ["<div id=screen>hello world</div>"] * 40 + ["tap it"] * 20, vocab_size=400
    )
    b = TransformersBackend(path, device="cpu", max_new_tokens=12, batch_size=8)
    calls = []
    real = b.model.generate

    def counted(**kw):
        calls.append(kw["input_ids"].shape[0])
        return real(**kw)

    b.model.generate = counted
    colours = ["white", "red", "blue", "green", "black"]
    qs = [
        Query(
            Screen(Image.new("RGB", (120, 90), c), html=f"<p>{i}</p>" * (i + 1)),
            Action("tap", x=i, y=2),
            "go " * i,
        )
        for i, c in enumerate(colours)
    ]
    batched = [c.text for c in b.complete(qs)]
    assert calls == [5]
    one_by_one = [b.complete([q])[0].text for q in qs]
    assert batched == one_by_one  # left padding leaves greedy decoding unchanged
