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
    (tmp_path / "d").mkdir()  # an older Qwen2.5-VL checkpoint names its stock processor
    (tmp_path / "d" / "preprocessor_config.json").write_text(
        json.dumps({"processor_class": "Qwen2_5_VLProcessor"})
    )
    assert holds_video_processor(tmp_path / "d")


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
    assert {"processor_config.json", "tokenizer.json", "tokenizer_config.json"} <= {
        f.name for f in final.iterdir()
    }
    assert (
        json.loads((final / "processor_config.json").read_text())["processor_class"]
        == "ImageOnlyQwenVLProcessor"
    )
    assert not holds_video_processor(final)
    t = next(iter_transitions(load_corpus()["test"].select([0])))
    with WorldModel.load(f"hf:{final}", renderer, device="cpu", max_new_tokens=8) as wm:
        assert isinstance(wm.stages[-1].processor, ImageOnlyQwenVLProcessor)
        p = wm.predict(t.screen, t.action, t.goal)
    assert p.ok


_OFFLINE_RUN = """
import json, os, sys
from training.config import preset
from training.train import train
cfg = preset("tiny", output_dir=sys.argv[1], model_path=sys.argv[2], device="cpu", sft_steps=1, grpo_steps=0,
             max_train_examples=2, max_length=1024, max_prompt_html_chars=300, sft_batch_size=1,
             save_steps=1000, calibrate_gate=False)
final = train(cfg, echo=lambda s: None)
from worldmodel import WorldModel, iter_transitions, load_corpus
import huggingface_hub.constants as hub
t = next(iter_transitions(load_corpus()["test"].select([0])))
with WorldModel.load(f"hf:{final}", device="cpu", max_new_tokens=8) as wm:
    p = wm.predict(t.screen, t.action, t.goal)
    kernels = wm.stages[-1].model.use_kernels
print(json.dumps({"ok": p.ok, "use_kernels": kernels, "kernels_env": os.environ.get("USE_HUB_KERNELS"),
                  "hub_offline": hub.HF_HUB_OFFLINE}))
"""


@pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0, reason="needs unshare -n as root")
def test_training_and_prediction_run_with_the_network_cut(checkpoint, tmp_path):
    script = tmp_path / "run.py"
    script.write_text(_OFFLINE_RUN)
    # the child starts with none of the hub variables set: the code itself must turn them off
    env = {k: v for k, v in os.environ.items() if k not in ("USE_HUB_KERNELS", "HF_HUB_OFFLINE",
           "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")}  # fmt: skip
    if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode:
        pytest.skip("cannot make a private network namespace here")
    cmd = [
        "unshare",
        "-n",
        "sh",
        "-c",
        f"ip link set lo up; {sys.executable} {script} {tmp_path / 'run'} {checkpoint}",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=os.getcwd(), env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"ok": True, "use_kernels": False, "kernels_env": "NO", "hub_offline": True}


def test_hub_kernels_are_off_unless_asked_for(monkeypatch):
    import huggingface_hub.constants as hub

    from worldmodel import offline

    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", hub.HF_HUB_OFFLINE)  # restored after the test
    for k in ("USE_HUB_KERNELS", *offline.OFFLINE_ENV):
        monkeypatch.delenv(k, raising=False)
    offline.local_only()
    assert not offline.hub_kernels_on() and os.environ["HF_HUB_OFFLINE"] == "1"
    offline.local_only(hub_kernels=True)  # the explicit opt-in
    assert offline.hub_kernels_on() and os.environ["HF_HUB_OFFLINE"] == "0"
    assert hub.HF_HUB_OFFLINE is False


def test_batches_go_by_prompt_length_and_answers_come_back_in_order(checkpoint):
    from PIL import Image

    from worldmodel import Action, Query, Screen
    from worldmodel.backends.hf import TransformersBackend

    b = TransformersBackend(checkpoint, device="cpu", max_new_tokens=10, batch_size=2, with_html=True)
    widths = []
    real = b.model.generate

    def seen(**kw):
        widths.append(kw["input_ids"].shape[1])
        return real(**kw)

    b.model.generate = seen
    sizes = [9, 1, 5, 3, 7]  # the current HTML's length varies; the queries come unsorted
    qs = [
        Query(
            Screen(Image.new("RGB", (120, 90), "white"), html="<p>item</p>" * n),
            Action("tap", x=n, y=2),
            "go",
        )
        for n in sizes
    ]
    prompts = b._prompts(qs, "document")
    texts, conf = b._batched(prompts)
    assert widths == sorted(widths) and len(widths) == 3  # shortest prompts first, two per batch
    alone = [b._batched([p]) for p in prompts]
    assert texts == [t[0][0] for t in alone]  # each answer is its own query's
    assert conf == pytest.approx([c[1][0] for c in alone], abs=1e-4)
    b.cache = "static"  # a static KV cache decodes the same tokens
    assert b._batched(prompts)[0] == texts
    sampled, sconf = b._batched(prompts, samples=2)
    assert len(sampled) == len(sconf) == 2 * len(prompts)


def test_the_real_checkpoint_preset_trains_on_edits_after_the_sim_with_hints(checkpoint, tmp_path):
    from training.config import preset
    from training.train import train

    doc, edit = preset("qwen3-vl-8b"), preset("qwen3-vl-8b-edit")
    assert doc.target == "document" and (edit.target, edit.after, edit.hints, edit.with_html) == (
        "edit",
        "sim",
        True,
        True,
    )
    assert (edit.model_path, edit.dtype, edit.gradient_checkpointing) == (None, "bfloat16", True)
    cfg = preset(
        "qwen3-vl-8b-edit",
        model_path=str(checkpoint),
        output_dir=str(tmp_path),
        device="cpu",
        dtype="float32",
        sft_steps=1,
        grpo_steps=0,
        max_train_examples=3,
        max_length=1024,
        max_prompt_html_chars=300,
        calibrate_gate=False,
        typing_copies=0,
        shift_copies=0,
    )
    final = train(cfg, echo=lambda s: None)
    opts = json.loads((final / "worldmodel.json").read_text())
    assert opts["after"] == "sim" and opts["hints"] and opts["with_html"]
