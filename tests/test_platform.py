"""The platform a real run meets: checkpoints written here load where torchvision imports, nothing
is fetched from a hub (kernels, configs) while training or predicting, and the hf backend's
batched generation keeps each query's answer whatever order it generates them in."""

import json
import os
import shutil
import subprocess
import sys
import types

import pytest

import wmcli
from corpus.store import iter_transitions, load_corpus
from worldmodel import WorldModel
from worldmodel.processor import ImageOnlyQwenVLProcessor, holds_video_processor, load_processor
from worldmodel.tiny import build_tiny


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A tiny checkpoint as build_tiny writes it."""
    texts = [t.next_screen.html for t in iter_transitions(load_corpus()["train"].select(range(12)))]
    return build_tiny(tmp_path_factory.mktemp("ckpt") / "tiny", texts, hidden=64, layers=1, vocab_size=800)


@pytest.fixture
def torchvision_machine(monkeypatch):
    """The loading code's view of an ordinary GPU install: `import torchvision` works and
    transformers says torchvision is available. (PyPI's torchvision does not import beside this
    CPU torch, so a stand-in module takes its place for these checks; nothing calls into it.)"""
    import transformers.utils as tu
    import transformers.utils.import_utils as iu

    stub = types.ModuleType("torchvision")
    stub.__version__ = "0.26.0"
    monkeypatch.setitem(sys.modules, "torchvision", stub)
    monkeypatch.setattr(iu, "is_torchvision_available", lambda: True)
    monkeypatch.setattr(tu, "is_torchvision_available", lambda: True)


def test_a_checkpoint_written_here_gets_its_image_only_processor_where_torchvision_imports(
    checkpoint, torchvision_machine
):
    import torchvision  # noqa: F401 - the simulated machine: it imports

    assert not holds_video_processor(checkpoint)
    p = load_processor(checkpoint)
    assert isinstance(p, ImageOnlyQwenVLProcessor) and p.tokenizer.chat_template


def test_which_processor_is_decided_by_what_the_checkpoint_holds(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "video_preprocessor_config.json").write_text("{}")
    assert holds_video_processor(tmp_path / "a")  # a stock Qwen3-VL checkpoint
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "processor_config.json").write_text(
        json.dumps({"processor_class": "Qwen3VLProcessor", "image_processor": {}, "video_processor": {}})
    )
    assert holds_video_processor(tmp_path / "b")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "processor_config.json").write_text(
        json.dumps({"processor_class": "ImageOnlyQwenVLProcessor", "image_processor": {}})
    )
    assert not holds_video_processor(tmp_path / "c")


def test_wm_train_from_a_checkpoint_and_hf_prediction_work_where_torchvision_imports(
    checkpoint, torchvision_machine, tmp_path, renderer, capsys
):
    out = tmp_path / "run"
    rc = wmcli.main(
        ["train", "--model-path", str(checkpoint), "--output-dir", str(out), "--device", "cpu",
         "--sft-steps", "1", "--grpo-steps", "1", "--num-generations", "2",
         "--max-completion-length", "12", "--max-train-examples", "2"]
    )  # fmt: skip
    assert rc == 0, capsys.readouterr().err[-2000:]
    final = out / "final"
    # the checkpoint holds every processor file it needs, and no video processor
    assert {"processor_config.json", "tokenizer.json", "tokenizer_config.json"} <= {f.name for f in final.iterdir()}
    assert json.loads((final / "processor_config.json").read_text())["processor_class"] == "ImageOnlyQwenVLProcessor"
    assert not holds_video_processor(final)
    t = next(iter_transitions(load_corpus()["test"].select([0])))
    with WorldModel.load(f"hf:{final}", renderer, device="cpu", max_new_tokens=8) as wm:
        assert isinstance(wm.stages[-1].processor, ImageOnlyQwenVLProcessor)
        p = wm.predict(t.screen, t.action, t.goal)
    assert p.ok
