"""Training configuration: one dataclass, presets named for their size."""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field, replace

from worldmodel.prompt import MAX_HTML_CHARS


@dataclass
class RewardWeights:
    """How much each reward counts in GRPO's sum (trl's reward_weights)."""

    semantic: float = 1.0
    action: float = 0.5
    format: float = 0.25
    # R_text: the render's visible words against the real next screen's (0 leaves it out)
    text: float = 0.0
    # inside R_sem: SSIM's share; the rest goes to 1 - LPIPS when LPIPS weights are available
    ssim_share: float = 1.0
    # which structural score R_sem uses: "ssim" (full resolution) or "blur_ssim" (shift-tolerant)
    sem_metric: str = "ssim"


@dataclass
class TrainConfig:
    preset: str = "tiny"
    model_path: str | None = None  # a local checkpoint; None builds the tiny model (tiny preset only)
    corpus: str | None = None  # None = bundled corpus
    output_dir: str = "runs/tiny"
    device: str = "cpu"  # cpu, cuda, auto; multi-GPU comes from `accelerate launch`
    dtype: str = "float32"
    seed: int = 0
    # data
    # Offer the current screen's HTML in the prompt. Off for tiny: on a CPU the prompt would
    # cost more tokens than the target the model can afford to learn.
    with_html: bool = False
    max_prompt_html_chars: int = MAX_HTML_CHARS
    # What the model learns to write: "document" (the whole next screen, Code2World's target) or
    # "edit" (worldmodel/edit.py: what changes, over the numbered current HTML, which the prompt
    # then always shows). GRPO's completion budget in edit mode is sized from the measured edits.
    target: str = "document"
    max_train_examples: int = 0  # 0 = all
    # Edit targets only: train on transitions whose edit is at most this many characters (0 = all).
    # A small model cannot write a whole new screen; on those its loss would be spent on what it
    # cannot learn instead of the short, common changes it can.
    max_edit_chars: int = 0
    # Edit targets only: SFT also sees each typing transition this many times with other words
    # typed (training/data.py), so the model copies what the action types.
    typing_copies: int = 0
    # Edit targets only: SFT also sees each example this many times with the element numbers
    # shifted by hidden elements first in the body (training/data.py), so the model reads numbers
    # off the screen instead of remembering a training app's.
    shift_copies: int = 0
    # Edit targets only: each prompt also shows the nearest recorded transition's edit,
    # re-addressed onto the current screen (training: from another app; prediction: from the
    # bundled corpus' training split, recorded in the checkpoint's worldmodel.json).
    hints: bool = False
    # Edit targets only: "sim" trains the model on the app's reaction alone. Its current screen is
    # what the browser's own physics (the `sim` backend) made of the recorded one, and the
    # checkpoint then always runs after the sim (`sim+PATH`).
    after: str = ""
    # Edit targets only: after training, choose the gate below which the model's own edits are
    # left out (its mean log-probability per token), on the validation split (training/calibrate.py).
    calibrate_gate: bool = True
    # stage 1: SFT
    sft_steps: int = 120
    sft_lr: float = 1e-3
    sft_batch_size: int = 2
    max_length: int = 2048
    # stage 2: GRPO
    grpo_steps: int = 10
    grpo_lr: float = 2e-4
    num_generations: int = 4
    max_completion_length: int = 256
    temperature: float = 1.0
    beta: float = 0.0
    # Dynamic sampling (DAPO): a group whose completions all score alike has no advantage to
    # learn from; its tokens are left out of the update (and of the loss' token count) instead of
    # diluting the groups that do. The share of such groups is logged (dynamic/flat_groups).
    dynamic_sampling: bool = True
    # A pre-pass before GRPO: sample this many completions for each of up to `prepass_prompts`
    # training prompts with the SFT model, and keep for GRPO only the prompts whose samples'
    # rewards differ (0 = GRPO samples on every prompt). Where SFT's samples all agree, a group
    # scores alike and teaches nothing.
    prepass_prompts: int = 0
    prepass_samples: int = 4
    # Generation through trl's vLLM integration (GPU only, needs `pip install vllm`):
    # "colocate" runs vLLM inside the training processes, "server" talks to `trl vllm-serve`.
    use_vllm: bool = False
    vllm_mode: str = "colocate"
    vllm_server_base_url: str | None = None
    vllm_gpu_memory_utilization: float = 0.3
    vllm_tensor_parallel_size: int = 1
    rewards: RewardWeights = field(default_factory=RewardWeights)
    # tiny model shape (tiny preset only)
    tiny_hidden: int = 128
    tiny_layers: int = 2
    tiny_vocab: int = 4000
    gradient_checkpointing: bool = False
    logging_steps: int = 1
    save_steps: int = 50

    def to_dict(self) -> dict:
        return asdict(self)


PRESETS: dict[str, TrainConfig] = {
    "tiny": TrainConfig(),
    # A bigger model built here, on edit targets: about 26-29 minutes on 2 CPU cores. Edits up to
    # 1600 characters take in the phone apps' page changes (400 left out 118 of their 160). Each
    # prompt shows the nearest recorded edit of another app, and the model learns when to write
    # `follow` (take it) instead of its own edit: from scratch it cannot copy a hint out, and its
    # own page changes go by where a tap lands. It learns only the app's reaction after the sim
    # (the browser's own physics), and its edits below the confidence gate chosen on the
    # validation split are left out: on apps nobody here wrote its own edits were a net loss,
    # the sim alone is not (benchmarks/RESULTS.md, eighth and ninth rounds). GRPO stays near the SFT model
    # (beta, a small learning rate) and is also rewarded on the words the render shows: without
    # both it drifted to one memorised edit on most unseen screens (benchmarks/RESULTS.md).
    "small": TrainConfig(
        preset="small",
        output_dir="runs/small",
        target="edit",
        with_html=True,
        max_prompt_html_chars=1500,
        max_edit_chars=1600,
        typing_copies=4,
        shift_copies=2,
        hints=True,
        after="sim",
        sft_steps=1400,
        grpo_steps=64,
        grpo_lr=5e-5,
        beta=0.04,
        # more samples and a hotter sampler, on prompts where SFT's samples disagree: with 4 at
        # 1.0 on every prompt, 73% of the groups scored all alike (benchmarks/RESULTS.md)
        num_generations=8,
        temperature=1.3,
        prepass_prompts=160,
        rewards=RewardWeights(text=1.0),
        tiny_hidden=256,
        tiny_layers=4,
        tiny_vocab=6000,
    ),
    # A real checkpoint from a local folder, e.g. --model-path /models/Qwen3-VL-8B-Instruct, on GPUs.
    "qwen3-vl-8b": TrainConfig(
        preset="qwen3-vl-8b",
        output_dir="runs/qwen3-vl-8b",
        device="auto",
        dtype="bfloat16",
        sft_steps=2000,
        sft_lr=1e-5,
        sft_batch_size=1,
        max_length=8192,
        grpo_steps=500,
        grpo_lr=1e-6,
        num_generations=8,
        max_completion_length=4096,
        beta=0.0,
        gradient_checkpointing=True,
        save_steps=200,
        max_prompt_html_chars=12000,
        vllm_mode="colocate",  # turn on with --use-vllm where vLLM is installed
    ),
}


def preset(name: str, **overrides) -> TrainConfig:
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}: choose one of {', '.join(PRESETS)}")
    unknown = set(overrides) - set(TrainConfig.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown training option(s): {', '.join(sorted(unknown))}")
    if overrides.get("target") not in (None, "document", "edit"):
        raise ValueError(f"target {overrides['target']!r} is not document or edit")
    if overrides.get("after") not in (None, "", "sim"):
        raise ValueError(f"after {overrides['after']!r} is not sim (or empty)")
    if overrides.get("vllm_mode") not in (None, "colocate", "server"):
        raise ValueError(f"vllm_mode {overrides['vllm_mode']!r} is not colocate or server")
    # a deep copy: changing the returned config (its reward weights too) never changes the preset
    return replace(copy.deepcopy(PRESETS[name]), **{k: v for k, v in overrides.items() if v is not None})
