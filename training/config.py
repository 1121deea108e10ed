"""Training configuration: one dataclass, presets named for their size."""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field, replace

from worldmodel.card import HINT_SOURCES
from worldmodel.prompt import MAX_HTML_CHARS


def _opt(default, help: str | None = None, **cli):
    """A field and its command-line option (wmcli/options.py generates `wm train`'s flags from these
    fields: `help`, and `flag`/`choices` where the flag is not `--field-name`)."""
    return field(default=default, metadata={"help": help, **cli})


@dataclass
class RewardWeights:
    """How much each reward counts in GRPO's sum (trl's reward_weights)."""

    semantic: float = _opt(1.0, "weight of R_sem", flag="--w-sem")
    action: float = _opt(0.5, "weight of R_act", flag="--w-act")
    format: float = _opt(0.25, "weight of R_format", flag="--w-format")
    # R_text: the render's visible words against the real next screen's (0 leaves it out)
    text: float = _opt(0.0, "weight of R_text (visible words against the real next screen)", flag="--w-text")
    # inside R_sem: SSIM's share; the rest goes to 1 - LPIPS when LPIPS weights are available
    ssim_share: float = _opt(1.0, "SSIM's share of R_sem; the rest is 1-LPIPS (needs weights)")
    # which structural score R_sem uses: "ssim" (full resolution) or "blur_ssim" (shift-tolerant)
    sem_metric: str = _opt(
        "ssim", "R_sem's structural score (blur_ssim: shift-tolerant)", choices=("ssim", "blur_ssim")
    )


@dataclass
class TrainConfig:
    preset: str = _opt("tiny", "tiny | small | qwen3-vl-8b | qwen3-vl-8b-edit")
    model_path: str | None = _opt(None, "local checkpoint folder to start from (tiny builds one if omitted)")
    corpus: str | None = _opt(None, "corpus folder (default: the bundled corpus)")
    output_dir: str = _opt("runs/tiny", "where checkpoints go (default: runs/<preset>)")
    device: str = _opt("cpu", "cpu | cuda | auto")  # multi-GPU comes from `accelerate launch`
    dtype: str = _opt("float32", "float32 | bfloat16 | float16 | auto")
    seed: int = 0
    # data
    # Offer the current screen's HTML in the prompt. Off for tiny: on a CPU the prompt would
    # cost more tokens than the target the model can afford to learn.
    with_html: bool = _opt(False, "show the current HTML in the prompt", flag="--with-html/--no-html")
    max_prompt_html_chars: int = _opt(MAX_HTML_CHARS, "truncate the prompt's current HTML to this length")
    # What the model learns to write: "document" (the whole next screen, Code2World's target) or
    # "edit" (worldmodel/edit.py: what changes, over the numbered current HTML, which the prompt
    # then always shows). GRPO's completion budget in edit mode is sized from the measured edits.
    target: str = _opt("document", "document | edit: what the model learns to write")
    max_train_examples: int = _opt(0, "use the first N training transitions (0 = all)")
    # Edit targets only: train on transitions whose edit is at most this many characters (0 = all).
    # A small model cannot write a whole new screen; on those its loss would be spent on what it
    # cannot learn instead of the short, common changes it can.
    max_edit_chars: int = _opt(0, "edit targets: train on edits up to N characters (0 = all)")
    # Edit targets only: SFT also sees each typing transition this many times with other words
    # typed (training/data.py), so the model copies what the action types.
    typing_copies: int = _opt(0, "edit targets: SFT copies of each typing example with other words typed")
    # Edit targets only: SFT also sees each example this many times with the element numbers
    # shifted by hidden elements first in the body (training/data.py), so the model reads numbers
    # off the screen instead of remembering a training app's.
    shift_copies: int = _opt(0, "edit targets: SFT copies of each example with its element numbers shifted")
    # Edit targets only: each prompt also shows the nearest recorded transition's edit,
    # re-addressed onto the current screen (training: from another app; prediction: from the
    # bundled corpus' training split, recorded in the checkpoint's worldmodel.json).
    hints: bool = _opt(
        False, "edit targets: show the nearest recorded edit in each prompt", flag="--hints/--no-hints"
    )
    # Edit targets only, with hints: where they come from. "retrieval": the nearest transition of
    # another app (leave-one-app-out, as on an app never seen); "memory": what same-app memory
    # answers from the app's other episodes, so the checkpoint learns when memory's answer is
    # right, and runs as `sim+memory+PATH` with memory's answer as its hint (worldmodel/card.py).
    hint_source: str = _opt(
        "retrieval",
        "edit targets, with hints: retrieval (another app's) or memory (this app's)",
        choices=HINT_SOURCES,
    )
    # Edit targets only: "sim" trains the model on the app's reaction alone. Its current screen is
    # what the browser's own physics (the `sim` backend) made of the recorded one, and the
    # checkpoint then always runs after the sim (`sim+PATH`).
    after: str = _opt("", "edit targets: 'sim' learns the app's reaction after the browser's own physics")
    # Edit targets only: after training, choose the gate below which the model's own edits are
    # left out (its mean log-probability per token), on the validation split (training/calibrate.py).
    calibrate_gate: bool = _opt(
        True,
        "edit targets: choose on the validation split the confidence below which edits are left out",
        flag="--calibrate-gate/--no-calibrate-gate",
    )
    # After training, fit the revisit head (training/revisit.py, `wm train-revisit`) on the
    # corpus' train split into the checkpoint: which earlier screen of the episode is the next one.
    revisit_head: bool = _opt(
        False,
        "after training, fit the revisit head (the episode's earlier screen that is the next one) into the checkpoint",
        flag="--revisit-head/--no-revisit-head",
    )
    # stage 1: SFT
    sft_steps: int = 120
    sft_lr: float = _opt(1e-3, "SFT learning rate")
    sft_batch_size: int = 2
    max_length: int = 2048
    # stage 2: GRPO
    grpo_steps: int = 10
    grpo_lr: float = _opt(2e-4, "GRPO learning rate")
    num_generations: int = _opt(4, "completions rendered per prompt in GRPO")
    max_completion_length: int = 256
    temperature: float = 1.0
    beta: float = _opt(0.0, "GRPO's KL weight (keeps the model near the SFT one)")
    # Dynamic sampling (DAPO): a group whose completions all score alike has no advantage to
    # learn from; its tokens are left out of the update (and of the loss' token count) instead of
    # diluting the groups that do. The share of such groups is logged (dynamic/flat_groups).
    dynamic_sampling: bool = _opt(True, "leave groups whose rewards are all equal out of the GRPO update")
    # A pre-pass before GRPO: sample this many completions for each of up to `prepass_prompts`
    # training prompts with the SFT model, and keep for GRPO only the prompts whose samples'
    # rewards differ (0 = GRPO samples on every prompt). Where SFT's samples all agree, a group
    # scores alike and teaches nothing.
    prepass_prompts: int = _opt(
        0, "GRPO only on prompts whose SFT samples disagree: how many to try (0: all)"
    )
    prepass_samples: int = _opt(4, "samples per prompt in that pre-pass")
    # Generation through trl's vLLM integration (GPU only, needs `pip install vllm`):
    # "colocate" runs vLLM inside the training processes, "server" talks to `trl vllm-serve`.
    use_vllm: bool = _opt(False, "GRPO generation through trl's vLLM (GPU)", flag="--use-vllm/--no-vllm")
    vllm_mode: str = _opt("colocate", "colocate | server (with `trl vllm-serve`)")
    vllm_server_base_url: str | None = _opt(None, "server mode: e.g. http://10.0.0.5:8000")
    vllm_gpu_memory_utilization: float = 0.3
    vllm_tensor_parallel_size: int = 1
    rewards: RewardWeights = field(default_factory=RewardWeights)
    # tiny model shape (tiny preset only)
    tiny_hidden: int = 128
    tiny_layers: int = 2
    tiny_vocab: int = 4000
    gradient_checkpointing: bool = False
    # transformers' hub kernels (fetched from the hub at run time): off unless asked for
    # (worldmodel/offline.py); the hub client stays offline otherwise
    hub_kernels: bool = _opt(
        False,
        "let transformers fetch hub kernels (off: nothing downloaded)",
        flag="--hub-kernels/--no-hub-kernels",
    )
    logging_steps: int = 1
    save_steps: int = 50

    def to_dict(self) -> dict:
        return asdict(self)


PRESETS: dict[str, TrainConfig] = {
    "tiny": TrainConfig(),
    # A bigger model built here, on edit targets: about 26-29 minutes on 2 CPU cores. Edits up to
    # 1600 characters take in the phone apps' page changes (400 left out 118 of their 160). Each
    # prompt shows what same-app memory answers from the app's other episodes, and the model
    # learns when to write `follow` (take it), when nothing (memory is wrong and the screen before
    # it right), and what to write where memory knows nothing: from scratch it cannot copy a hint
    # out, and its own page changes go by where a tap lands (#37: trained on what `sim+memory`
    # gets wrong; with another app's hints it followed too rarely in-app). It learns only the app's reaction after the sim
    # (the browser's own physics), and its edits below the confidence gate chosen on the
    # validation split are left out: on apps nobody here wrote its own edits were a net loss,
    # the sim alone is not (benchmarks/RESULTS.md, eighth and ninth rounds). GRPO stays near the SFT model
    # (beta, a small learning rate) and is also rewarded on the words the render shows: without
    # both it drifted to one memorised edit on most unseen screens (benchmarks/RESULTS.md; that
    # finding predates 2026-12-07, when `wm train`'s KL reference was still the random init, not
    # the SFT model: the learning rate, not beta, held it then).
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
        hint_source="memory",
        after="sim",
        revisit_head=True,
        sft_steps=1400,
        grpo_steps=64,
        grpo_lr=5e-5,
        beta=0.04,
        # more samples, on prompts where SFT's samples disagree: with 4 on every prompt, 73% of
        # the groups scored all alike (benchmarks/RESULTS.md). The sampler stays at 1.0: at 1.3 a
        # weakly trained model's samples were all malformed edits, which score alike too.
        num_generations=8,
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
        revisit_head=True,
    ),
}
# The same real checkpoint on the recipe that beats `copy` here (the `small` preset's, issue #26):
# edit targets over the numbered current HTML, learned after the sim (the browser's own physics
# carries the action out first, the model writes only the app's reaction), each prompt showing
# the nearest recorded edit as a hint it may `follow`, words rewarded in GRPO, a KL term keeping it
# near the SFT model, and the confidence gate chosen on the validation split. A pretrained coder
# can write long edits, so no edit is left out of SFT (GRPO's budget still comes from the edits'
# token lengths); typing and shifted copies stay, fewer, since a pretrained model reads better.
PRESETS["qwen3-vl-8b-edit"] = replace(
    PRESETS["qwen3-vl-8b"],
    preset="qwen3-vl-8b-edit",
    output_dir="runs/qwen3-vl-8b-edit",
    target="edit",
    with_html=True,
    typing_copies=2,
    shift_copies=1,
    hints=True,
    after="sim",
    beta=0.04,
    rewards=RewardWeights(text=1.0),
)


def preset(name: str, **overrides) -> TrainConfig:
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}: choose one of {', '.join(PRESETS)}")
    unknown = set(overrides) - set(TrainConfig.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown training option(s): {', '.join(sorted(unknown))}")
    if overrides.get("target") not in (None, "document", "edit"):
        raise ValueError(f"target {overrides['target']!r} is not document or edit")
    if overrides.get("hint_source") not in (None, *HINT_SOURCES):
        raise ValueError(f"hint_source {overrides['hint_source']!r} is not one of {', '.join(HINT_SOURCES)}")
    if overrides.get("after") not in (None, "", "sim"):
        raise ValueError(f"after {overrides['after']!r} is not sim (or empty)")
    if overrides.get("vllm_mode") not in (None, "colocate", "server"):
        raise ValueError(f"vllm_mode {overrides['vllm_mode']!r} is not colocate or server")
    # a deep copy: changing the returned config (its reward weights too) never changes the preset
    return replace(copy.deepcopy(PRESETS[name]), **{k: v for k, v in overrides.items() if v is not None})


def config_from(options: dict) -> TrainConfig:
    """A TrainConfig from a preset and the options given (`wm train`'s flags, keyed by field
    name; `rewards` a dict of RewardWeights fields): what is not given keeps the preset's value."""
    options = dict(options)
    rewards = options.pop("rewards", None) or {}
    unknown = set(rewards) - set(RewardWeights.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown reward option(s): {', '.join(sorted(unknown))}")
    cfg = preset(options.pop("preset", "tiny"), **options)
    cfg.rewards = replace(cfg.rewards, **{k: v for k, v in rewards.items() if v is not None})
    return cfg
