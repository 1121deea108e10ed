"""`wm train`: SFT cold start, then render-aware GRPO, on trl's trainers.

The same code runs the tiny CPU default and a real checkpoint on GPUs:
device, dtype and model path are configuration, and several processes (GPUs, or
`accelerate launch --cpu --num_processes N` on a CPU) come from `accelerate launch -m wmcli
train ...`, which trl's trainers pick up. Every process samples, renders (its own Chromium) and
scores its own share of GRPO's completions; only the main process writes the checkpoint, its
card and the run's figures, and each process records what it scored in `ranks/rank<N>.jsonl`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from render.proctree import chromium_browsers
from worldmodel.card import CheckpointCard
from worldmodel.dataset import load_corpus, row_action
from worldmodel.device import on_cpu, resolve_device, resolve_dtype
from worldmodel.files import write_whole

from .config import TrainConfig
from .data import grpo_dataset, sft_dataset, to_examples
from .rewards import reward_functions, with_render_batch


def _cpu(cfg: TrainConfig) -> bool:
    return on_cpu(cfg.device)


def _common_args(cfg: TrainConfig) -> dict:
    cpu = _cpu(cfg)
    return dict(
        use_cpu=cpu,
        bf16=(cfg.dtype == "bfloat16" and not cpu),
        fp16=False,
        seed=cfg.seed,
        logging_steps=cfg.logging_steps,
        save_steps=cfg.save_steps,
        save_total_limit=2,
        report_to=[],
        dataloader_num_workers=0,
        gradient_checkpointing=cfg.gradient_checkpointing,
        disable_tqdm=False,
    )


class Processes:
    """This process' place among the training processes `accelerate launch` started (one, and
    main, without it). `main_first()` lets the main process write something (the tiny model)
    before the others read it; `wait()` holds every process until all reach it."""

    def __init__(self, cfg: TrainConfig):
        self.state = None
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:
            from accelerate import PartialState

            # the state trl's trainers take up later (TrainingArguments: use_cpu -> cpu=True)
            self.state = PartialState(cpu=_cpu(cfg))
        self.index = self.state.process_index if self.state else 0
        self.count = self.state.num_processes if self.state else 1
        self.main = self.index == 0

    @staticmethod
    def cpu_launch_alone() -> bool:
        """Whether `accelerate launch --cpu` started this process for several (it sets the
        rendezvous address) but, as accelerate 1.16 does without mpirun, only this one."""
        env = os.environ
        ranked = ("RANK", "WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")
        return (
            env.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true", "yes")
            and "MASTER_ADDR" in env
            and not any(k in env for k in ranked)
        )

    def main_first(self):
        import contextlib

        return self.state.main_process_first() if self.state else contextlib.nullcontext()

    def wait(self) -> None:
        if self.state:
            self.state.wait_for_everyone()

    @property
    def deepspeed(self) -> bool:
        return bool(self.state) and str(self.state.distributed_type).endswith("DEEPSPEED")


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:12]


class RankLog:
    """One JSON line per GRPO batch in `folder/rank<N>.jsonl`, written by process N alone: the
    digests of the completions it generated, and of those its reward functions scored, with how
    many its renderer rendered, its Chromium's pid and the rewards it computed. Evidence that
    each process renders and scores its own completions (tests/test_multiprocess.py)."""

    def __init__(self, folder: Path, index: int, batches=None):
        self.path = Path(folder) / f"rank{index}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("")
        self.index = index
        self.batches = batches  # the rewards' RenderBatches: how many documents it rendered

    def write(self, **event) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps({"rank": self.index, "pid": os.getpid(), **event}) + "\n")

    def generated(self, step: int, completion_ids) -> None:
        self.write(
            event="generated", step=step, ids=[_digest(str(list(map(int, c)))) for c in completion_ids]
        )

    def scored(self, step: int, completions, completion_ids, rewards) -> None:
        from .rewards import completion_text

        self.write(
            event="scored",
            step=step,
            ids=[_digest(str(list(map(int, c)))) for c in completion_ids],
            texts=[_digest(completion_text(c)) for c in completions],
            rendered=getattr(self.batches, "rendered", None),
            chromium=chromium_browsers(),
            rewards=rewards,
        )


def init_checkpoint(cfg: TrainConfig, train_ds) -> Path:
    """The model SFT starts from: a local checkpoint, or (tiny preset) a tiny model built here."""
    if cfg.model_path:
        from worldmodel.offline import require_checkpoint

        require_checkpoint(cfg.model_path, "--model-path checkpoint")
        return Path(cfg.model_path)
    if cfg.preset not in ("tiny", "small"):
        raise ValueError(f"preset {cfg.preset!r} needs --model-path to a local checkpoint")
    from worldmodel.tiny import build_tiny

    out = Path(cfg.output_dir) / "init"
    if (out / "config.json").is_file():
        return out
    texts = [r["next_html"] for r in train_ds] + [r["goal"] + " " + row_action(r).to_json() for r in train_ds]
    from worldmodel.edit import diff
    from worldmodel.prompt import CONTRACT, EDIT_CONTRACT, SYSTEM

    texts += [SYSTEM, CONTRACT, EDIT_CONTRACT] * 20
    if cfg.target == "edit":
        texts += [
            diff(r["screen_html"], r["next_html"]) for r in train_ds if r["screen_html"] and r["next_html"]
        ]
    return build_tiny(out, texts, cfg.tiny_hidden, cfg.tiny_layers, cfg.tiny_vocab, cfg.seed)


def _load(path: Path, cfg: TrainConfig):
    from transformers import AutoModelForImageTextToText

    from worldmodel.offline import local_only, require_checkpoint
    from worldmodel.processor import load_processor

    require_checkpoint(path)
    local_only(cfg.hub_kernels)  # no hub kernels, hub client offline, unless opted in
    dtype = resolve_dtype(cfg.dtype, resolve_device(cfg.device))
    model = AutoModelForImageTextToText.from_pretrained(path, dtype=dtype)
    return model, load_processor(path)


def _last_checkpoint(d: Path) -> str | None:
    from transformers.trainer_utils import get_last_checkpoint

    return get_last_checkpoint(str(d)) if d.is_dir() else None


def _resumed_step(d: Path, resume: bool) -> int:
    """The global step a stage resumes from: its last checkpoint's, 0 when it starts afresh."""
    last = _last_checkpoint(d) if resume else None
    if last is None:
        return 0
    return int(json.loads((Path(last) / "trainer_state.json").read_text())["global_step"])


def run_sft(
    cfg: TrainConfig,
    model,
    processor,
    examples,
    steps: int,
    out: Path,
    resume: bool = False,
    callbacks=None,
    **overrides,
):
    """SFT on `examples` for `steps` steps; `callbacks` and `overrides` (SFTConfig fields, e.g. a
    constant learning-rate schedule) go to trl as they are."""
    from trl import SFTConfig, SFTTrainer

    args = SFTConfig(
        **{
            **dict(
                output_dir=str(out),
                max_steps=steps,
                per_device_train_batch_size=cfg.sft_batch_size,
                learning_rate=cfg.sft_lr,
                lr_scheduler_type="cosine",
                warmup_steps=min(10, steps // 10),
                max_length=cfg.max_length,
                completion_only_loss=True,
                **_common_args(cfg),
            ),
            **overrides,
        }
    )
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=sft_dataset(examples),
        processing_class=processor,
        callbacks=callbacks,
    )
    result = trainer.train(resume_from_checkpoint=_last_checkpoint(out) if resume else None)
    return trainer, result


def vllm_args(cfg: TrainConfig) -> dict:
    """GRPOConfig's vLLM fields when cfg.use_vllm; a clear error where vLLM cannot run."""
    if not cfg.use_vllm:
        return {}
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        raise ValueError("--use-vllm needs vLLM installed (pip install vllm) on a CUDA machine")
    if _cpu(cfg):
        raise ValueError("--use-vllm generates on GPUs; this run is on the CPU")
    out = dict(
        use_vllm=True, vllm_mode=cfg.vllm_mode, vllm_tensor_parallel_size=cfg.vllm_tensor_parallel_size
    )
    if cfg.vllm_mode == "colocate":
        out["vllm_gpu_memory_utilization"] = cfg.vllm_gpu_memory_utilization
    elif cfg.vllm_server_base_url:
        out["vllm_server_base_url"] = cfg.vllm_server_base_url
    return out


def grpo_rewards(cfg: TrainConfig, renderer=None) -> tuple[list, list[float]]:
    """The reward functions GRPO sums and each one's weight (by its name, so which rewards take
    part is decided in one place)."""
    w = cfg.rewards
    funcs = reward_functions(renderer, w.ssim_share, w.sem_metric, text=bool(w.text))
    weight = {"r_sem": w.semantic, "r_act": w.action, "r_format": w.format, "r_text": w.text}
    return funcs, [weight[f.__name__] for f in funcs]


def run_grpo(
    cfg: TrainConfig,
    model,
    processor,
    examples,
    steps: int,
    out: Path,
    resume: bool = False,
    renderer=None,
    callbacks=None,
    rank_log: Path | None = None,
    **overrides,
):
    """GRPO on `examples` for `steps` steps, with dynamic sampling when cfg.dynamic_sampling;
    `callbacks` and `overrides` (GRPOConfig fields) go to trl as they are. With `rank_log` (a
    folder), each process records there what it generated and scored (RankLog)."""
    from trl import GRPOConfig

    funcs, weights = grpo_rewards(cfg, renderer)
    args = GRPOConfig(
        **{
            **dict(
                output_dir=str(out),
                max_steps=steps,
                per_device_train_batch_size=cfg.num_generations,
                num_generations=cfg.num_generations,
                max_completion_length=cfg.max_completion_length,
                learning_rate=cfg.grpo_lr,
                temperature=cfg.temperature,
                beta=cfg.beta,
                reward_weights=weights,
                remove_unused_columns=False,
                log_completions=False,
                **vllm_args(cfg),
                **_common_args(cfg),
            ),
            **overrides,
        }
    )
    trainer_class = dynamic_sampling_trainer() if cfg.dynamic_sampling else _grpo_trainer()
    trainer = trainer_class(
        model=model,
        reward_funcs=funcs,
        args=args,
        train_dataset=grpo_dataset(examples),
        processing_class=processor,
        callbacks=callbacks,
    )
    trainer.render_batches = funcs[0].batches  # each step's batch, built once for every reward
    if rank_log is not None:
        trainer.rank_log = RankLog(rank_log, trainer.accelerator.process_index, funcs[0].batches)
    result = trainer.train(resume_from_checkpoint=_last_checkpoint(out) if resume else None)
    return trainer, result


_LOGGED = None


def _grpo_trainer():
    """trl's GRPOTrainer that builds each step's RenderBatch once (with its `render_batches`)
    and hands it to every reward (training/rewards.py), and records each batch this process
    generated and scored in its `rank_log` (a RankLog) when it has one."""
    global _LOGGED
    if _LOGGED is not None:
        return _LOGGED
    from trl import GRPOTrainer

    class RankLoggedGRPOTrainer(GRPOTrainer):
        rank_log: RankLog | None = None
        render_batches = None

        def _generate(self, prompts):
            out = super()._generate(prompts)
            if self.rank_log is not None and isinstance(out, tuple) and len(out) > 1:
                self.rank_log.generated(self.state.global_step, out[1])
            return out

        def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
            inputs = with_render_batch(self.render_batches, inputs, completions)
            got = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
            if self.rank_log is not None:
                # gathered in process order: this process' rows are its own rewards
                n, i = len(prompts), self.accelerator.process_index
                rows = [
                    [None if v != v else round(v, 4) for v in r] for r in got[i * n : (i + 1) * n].tolist()
                ]
                self.rank_log.scored(self.state.global_step, completions, completion_ids_list, rows)
            return got

    _LOGGED = RankLoggedGRPOTrainer
    return _LOGGED


_DYNAMIC = None


def dynamic_sampling_trainer():
    """trl's GRPOTrainer with DAPO's dynamic sampling: a group whose rewards are all equal (every
    advantage 0) is left out of the update. trl 1.16 has no such option (its
    `frac_reward_zero_std` only logs the share), so its tokens are masked out after scoring and
    the loss' token count is taken again without them; with beta > 0 their KL term would
    otherwise still pull, and with the default `dapo` loss their tokens dilute the rest. The
    share of groups left out is logged as `dynamic/flat_groups`."""
    global _DYNAMIC
    if _DYNAMIC is not None:
        return _DYNAMIC

    class DynamicSamplingGRPOTrainer(_grpo_trainer()):
        def _generate_and_score_completions(self, inputs):
            out = super()._generate_and_score_completions(inputs)
            adv, mask = out["advantages"], out["completion_mask"]
            g = self.num_generations
            if adv.dim() != 1 or adv.numel() % g:  # a group split across processes: leave as is
                return out
            flat = (adv.view(-1, g).abs() <= FLAT_ADVANTAGE).all(dim=1)
            mode = "train" if self.model.training else "eval"
            self._metrics[mode]["dynamic/flat_groups"].append(flat.float().mean().item())
            if flat.any():
                keep = (~flat).repeat_interleave(g).to(mask.dtype).unsqueeze(1)
                out["completion_mask"] = mask * keep
                if "num_items_in_batch" in out:
                    out["num_items_in_batch"] = self.accelerator.gather(out["completion_mask"].sum()).sum()
            return out

    _DYNAMIC = DynamicSamplingGRPOTrainer
    return _DYNAMIC


# An advantage this close to 0 counts as none (trl divides by the group's std + 1e-4).
FLAT_ADVANTAGE = 1e-6


def disagreeing_prompts(
    cfg: TrainConfig, model, processor, examples: list[dict], renderer=None, echo=print, procs=None
) -> tuple[list[dict], dict]:
    """The prompts (of up to cfg.prepass_prompts drawn with cfg.seed) where cfg.prepass_samples
    completions sampled from `model` at cfg.temperature score differently under GRPO's weighted
    rewards: a cheap pre-pass, no gradients, that picks what GRPO can learn from. Returns them
    (all prompts drawn, when none disagrees) and the pre-pass' figures. With several `procs`
    (Processes), each samples and scores its share of the prompts, and all keep the same ones."""
    import random

    pool = list(examples)
    random.Random(cfg.seed).shuffle(pool)
    pool = pool[: cfg.prepass_prompts] if cfg.prepass_prompts else pool
    if procs is not None and procs.count > 1:
        from accelerate.utils import gather_object

        mine, figs = _disagreeing(cfg, model, processor, pool[procs.index :: procs.count], renderer)
        flags = gather_object([(procs.index + k * procs.count, ok) for k, ok in enumerate(mine)])
        keep = {i for i, ok in flags if ok}
        kept = [e for i, e in enumerate(pool) if i in keep]
    else:
        mine, figs = _disagreeing(cfg, model, processor, pool, renderer)
        kept = [e for e, ok in zip(pool, mine) if ok]
    figs = {
        "drawn": len(pool),
        "kept": len(kept),
        "samples": figs["samples"],
        "flat_share": 1 - len(kept) / max(1, len(pool)),
    }
    echo(
        f"pre-pass: {len(kept)} of {len(pool)} prompts have samples that disagree"
        f" ({figs['samples']} samples each at temperature {cfg.temperature})"
    )
    return (kept or pool), figs


def _disagreeing(cfg: TrainConfig, model, processor, pool: list[dict], renderer) -> tuple[list[bool], dict]:
    """For each prompt of `pool`, whether its samples' weighted rewards differ."""
    funcs, weights = grpo_rewards(cfg, renderer)
    k = max(2, cfg.prepass_samples)
    tok = processor.tokenizer
    side, tok.padding_side = tok.padding_side, "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    kept: list[bool] = []
    step = max(1, 8 // k)
    try:
        for s in range(0, len(pool), step):
            chunk = pool[s : s + step]
            texts = [
                processor.apply_chat_template(e["prompt"], add_generation_prompt=True, tokenize=False)
                for e in chunk
            ]
            inputs = processor(
                text=texts, images=[e["images"][0] for e in chunk], padding=True, return_tensors="pt"
            ).to(device)
            with torch.no_grad():
                got = model.generate(
                    **inputs,
                    do_sample=True,
                    temperature=cfg.temperature,
                    num_return_sequences=k,
                    max_new_tokens=cfg.max_completion_length,
                    pad_token_id=tok.pad_token_id,
                )
            completions = tok.batch_decode(got[:, inputs["input_ids"].shape[1] :], skip_special_tokens=True)
            # as the trainer hands them: the rows with one batch rendered for every reward
            rows = with_render_batch(funcs[0].batches, [e for e in chunk for _ in range(k)], completions)
            cols = {c: [r[c] for r in rows] for c in rows[0] if c not in ("prompt", "completion")}
            total = np.zeros(len(completions))
            for f, w in zip(funcs, weights):
                v = f(None, completions, **cols)
                total += w * np.array([0.0 if x is None else x for x in v], dtype=float)
            for j in range(len(chunk)):
                kept.append(float(total[j * k : (j + 1) * k].std()) > FLAT_REWARD)
    finally:
        tok.padding_side = side
        model.train(was_training)
    return kept, {"samples": k}


# Rewards whose standard deviation within a group is at most this count as all alike.
FLAT_REWARD = 1e-6


def time_budget(seconds: float):
    """A trainer callback that ends training at the first step boundary after `seconds` of wall
    clock from when training began: two arms given the same budget had the same compute on the
    same machine (benchmarks/rl_vs_sft.py compares SFT and GRPO that way)."""
    import time

    from transformers import TrainerCallback

    class TimeBudget(TrainerCallback):
        def __init__(self):
            self.start = None

        def on_train_begin(self, args, state, control, **kw):
            self.start = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            if time.perf_counter() - self.start >= seconds:
                control.should_training_stop = True
            return control

    return TimeBudget()


def grpo_figures(log_history: list[dict]) -> dict:
    """The first and last logged reward, the share of groups that scored all alike, and the KL to
    the reference model at the first step (with beta > 0; about 0 when the reference is the
    model GRPO starts from, as it should be)."""
    rewards = [h for h in log_history if "reward" in h]
    flat = [h["frac_reward_zero_std"] for h in log_history if "frac_reward_zero_std" in h]
    kl = [h["kl"] for h in log_history if "kl" in h]
    return {
        "grpo_reward_first": rewards[0]["reward"] if rewards else None,
        "grpo_reward_last": rewards[-1]["reward"] if rewards else None,
        "grpo_flat_groups": float(np.mean(flat)) if flat else None,
        "grpo_kl_first": kl[0] if kl else None,
    }


# GRPO's completion budget in edit mode: this quantile of the training edits' token lengths.
EDIT_BUDGET_QUANTILE = 0.75
MIN_COMPLETION_TOKENS = 32


def completion_budget(examples, tokenizer, cfg: TrainConfig) -> int:
    """Tokens enough for most training edits (EDIT_BUDGET_QUANTILE of them), within the preset's cap."""
    lengths = [len(tokenizer(_target(e))["input_ids"]) + 1 for e in examples if e["edits_html"]]
    if not lengths:
        return cfg.max_completion_length
    want = int(np.quantile(lengths, EDIT_BUDGET_QUANTILE))
    return max(MIN_COMPLETION_TOKENS, min(cfg.max_completion_length, want))


def training_examples(cfg: TrainConfig, train_ds) -> list[dict]:
    """Training examples; edit prompts need a render of each current screen to find the target."""
    if cfg.target != "edit":
        return to_examples(train_ds, cfg.with_html, cfg.max_prompt_html_chars, cfg.max_train_examples)
    from render import Renderer

    with Renderer() as renderer:
        examples = to_examples(
            train_ds,
            cfg.with_html,
            cfg.max_prompt_html_chars,
            cfg.max_train_examples,
            "edit",
            renderer,
            cfg.typing_copies,
            cfg.seed,
            cfg.shift_copies,
            cfg.hints,
            cfg.after,
            cfg.hint_source,
        )
    return examples


def sft_examples(cfg: TrainConfig, examples: list[dict]) -> list[dict]:
    """What SFT imitates: with max_edit_chars, only edits that short. GRPO keeps every prompt:
    where the model has not seen the answer its samples differ, and the rendered pixels can
    tell it what to do there (on the prompts SFT memorised, more groups score all alike and give
    no signal: 9 of 48 GRPO steps against 2 of 48, benchmarks/RESULTS.md)."""
    if cfg.target != "edit" or not cfg.max_edit_chars:
        return examples
    return [e for e in examples if len(_target(e)) <= cfg.max_edit_chars]


def grpo_examples(examples: list[dict]) -> list[dict]:
    """The prompts GRPO samples on: every recorded one and its shifted copies (typing copies have
    no true pixels)."""
    return [e for e in examples if not e.get("augmented")]


def _target(example: dict) -> str:
    return example["completion"][0]["content"][0]["text"]


def checkpoint_card(cfg: TrainConfig) -> CheckpointCard:
    """What a checkpoint trained with `cfg` writes and how its prompts looked (worldmodel/card.py),
    so loading it asks it the same way. `cfg.max_completion_length` is the budget training
    sampled to (in edit mode, measured from the training edits before this is called)."""
    edit = cfg.target == "edit"
    memory = cfg.hints and edit and cfg.hint_source == "memory"
    return CheckpointCard(
        target=cfg.target,
        with_html=cfg.with_html,
        html_chars=cfg.max_prompt_html_chars,
        hints=cfg.hints and edit,
        # hints at prediction time come from the corpus training took them from
        hint_corpus=str(Path(cfg.corpus).resolve()) if (cfg.hints and edit and cfg.corpus) else None,
        hint_source=cfg.hint_source,
        # memory's hints tell "memory knew nothing" from "no change" (training/data.py), and are
        # said to be the app's own recordings
        unknown_hint=memory,
        own_app_note=memory,
        after=cfg.after if edit else "",
        completion_budget=cfg.max_completion_length,
        preset=cfg.preset,
        base_model=cfg.model_path or "",
    )


def _save(trainer, processor, path: Path, cfg: TrainConfig) -> Path:
    """Every process calls this (a sharded model is gathered to save it); only the one trl's
    trainer names to save (the main process) writes."""
    trainer.save_model(str(path))
    if trainer.args.should_save:
        processor.save_pretrained(str(path))
        processor.tokenizer.save_pretrained(str(path))
        checkpoint_card(cfg).write(path)
    return path


def _calibrate(final: Path, validation, echo: Callable[[str], None], train=None) -> dict:
    """Choose the checkpoint's edit gate on the validation split and record it with its prompt
    options (training/calibrate.py). A checkpoint hinted by memory is asked twice: with memory
    of the validation apps' other episodes (a new visit to an app memory knows) and with memory
    of the `train` split only (the validation apps never recorded)."""
    from render import Renderer
    from worldmodel.backends.memory import MemoryBackend
    from worldmodel.dataset import iter_transitions

    from .calibrate import calibrate_gate

    card = CheckpointCard.of(final)
    held = list(iter_transitions(validation))
    memories = ()
    if card.hints and card.hint_source == "memory" and train is not None:
        # as on a new visit to an app memory knows, and as on an app it has no recordings of
        memories = (MemoryBackend(held), MemoryBackend(list(iter_transitions(train))))
    with Renderer() as renderer:
        gate, figs = calibrate_gate(final, held, renderer, memories)
    card.updated(min_confidence=gate).write(final)
    echo(
        f"edit gate: {'none' if gate is None else f'{gate:.3f}'} (validation: {figs['kept']} of"
        f" {figs['edits']} edits kept; gain over keeping the screen {figs['gain_gated']:+.4f},"
        f" ungated {figs['gain_ungated']:+.4f})"
    )
    return {"min_confidence": gate, **figs}


CPU_LAUNCH_NOTE = (
    "note: `accelerate launch --cpu` starts one process (accelerate spawns CPU processes only"
    " through mpirun); for N processes on a machine without GPUs: accelerate launch --multi_gpu"
    " --num_processes N -m wmcli train ... (they train on the CPU, over gloo)"
)


def train(cfg: TrainConfig, resume: bool = False, echo: Callable[[str], None] = print) -> Path:
    """Run both stages; returns the final checkpoint folder (loadable by predict_next and wm eval).

    Under `accelerate launch` every process runs this: each trains on its share of the batches
    and renders and scores its own GRPO completions with its own Chromium; the main process
    alone builds the tiny model, writes the checkpoints, their cards and the figures, and says
    what happens (`echo`); each process ends with one line of what it scored."""
    torch.manual_seed(cfg.seed)
    procs = Processes(cfg)
    say = echo if procs.main else (lambda s: None)
    if procs.cpu_launch_alone():
        echo(CPU_LAUNCH_NOTE)
    out = Path(cfg.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    dd = load_corpus(cfg.corpus)
    cfg, start, model, processor, examples = _prepare(cfg, dd["train"], procs, out, say)
    figures: dict = {}
    trainer = scored = None
    if cfg.sft_steps > 0:
        trainer, model, processor, figs = _sft_stage(cfg, model, processor, examples, out, resume, procs, say)
        figures.update(figs)
    if cfg.grpo_steps > 0:
        trainer, figs = _grpo_stage(cfg, model, processor, examples, out, resume, procs, say)
        figures.update(figs)
        scored = trainer.rank_log
    final = _save(trainer, processor, out / "final", cfg) if (cfg.sft_steps or cfg.grpo_steps) else start
    if scored is not None:
        echo(_scored_line(scored, procs))
    if not procs.main:
        return final
    if cfg.target == "edit" and cfg.calibrate_gate and "validation" in dd and final != start:
        figures["gate"] = _calibrate(final, dd["validation"], echo, dd.get("train"))
    if cfg.revisit_head and final != start:
        from .revisit import train_revisit

        figures["revisit"] = json.loads(train_revisit(final, cfg.corpus, echo).read_text())["trained_on"]
    write_whole(out / "figures.json", json.dumps(figures, indent=2))
    echo(f"saved {final}: {json.dumps(figures)}")
    return final


def _prepare(cfg: TrainConfig, train_ds, procs: Processes, out: Path, say):
    """(cfg with the completion budget measured, the model SFT starts from, the model and its
    processor, the training examples); the run's configuration written, what it holds said."""
    examples = training_examples(cfg, train_ds)
    imitate = sft_examples(cfg, examples)
    say(
        f"corpus: {len(train_ds)} training transitions from {len(set(train_ds['app']))} apps,"
        f" {cfg.target} targets ({len(imitate)} SFT examples, {len(grpo_examples(examples))} GRPO prompts)"
    )
    with procs.main_first():  # the main process builds the tiny model, the others then load it
        start = init_checkpoint(cfg, train_ds)
    model, processor = _load(start, cfg)
    if cfg.target == "edit":
        cfg = replace(cfg, max_completion_length=completion_budget(imitate, processor.tokenizer, cfg))
        say(f"edit targets: GRPO completions up to {cfg.max_completion_length} tokens")
    # the run's configuration as it trains: with the measured completion budget, not the preset's
    if procs.main:
        write_whole(out / "config.json", json.dumps(cfg.to_dict(), indent=2))
    say(f"model: {start} ({sum(p.numel() for p in model.parameters()) / 1e6:.2f}M parameters)")
    if procs.count > 1:
        say(f"{procs.count} processes: each renders and scores its own completions (ranks/rank<N>.jsonl)")
    return cfg, start, model, processor, examples


def _sft_stage(cfg: TrainConfig, model, processor, examples, out: Path, resume: bool, procs: Processes, say):
    """Stage 1 on the examples SFT imitates: (its trainer, None when GRPO follows; the model and
    processor GRPO goes on with, loaded from out/sft/final where SFT saved it; its figures)."""
    say(f"stage 1: SFT for {cfg.sft_steps} steps")
    start_step = _resumed_step(out / "sft", resume)
    imitate = sft_examples(cfg, examples)
    trainer, result = run_sft(cfg, model, processor, imitate, cfg.sft_steps, out / "sft", resume)
    figures = {
        "sft_loss": result.training_loss,
        "sft_steps_per_s": result.metrics.get("train_steps_per_second"),
        "sft_steps": {"resumed_from": start_step, "global_step": trainer.state.global_step},
    }
    _save(trainer, processor, out / "sft" / "final", cfg)
    if cfg.grpo_steps > 0:
        # GRPO goes on from the saved SFT checkpoint, not the model in memory: trl builds its
        # KL reference from the policy's `config._name_or_path`, which for the model SFT trained
        # in memory still names where SFT started (the tiny preset's random init, or the base
        # checkpoint), so the KL term pulled GRPO towards that instead of the SFT model. (A
        # ZeRO-3 engine's partitioned model does not go into a second trainer either.) The SFT
        # trainer, its model and optimizer state go first: on a GPU they would sit beside GRPO's.
        procs.wait()
        del trainer, model
        _release_memory()
        model, processor = _load(out / "sft" / "final", cfg)
        return None, model, processor, figures
    return trainer, trainer.model, processor, figures


def _release_memory() -> None:
    """Collect what is no longer referenced, and hand the GPU's cached blocks back."""
    import gc

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _grpo_stage(cfg: TrainConfig, model, processor, examples, out: Path, resume: bool, procs: Processes, say):
    """Stage 2 on GRPO's prompts (those the pre-pass keeps, when it runs), each process with its
    own Chromium: (its trainer, its figures)."""
    from render import Renderer

    say(f"stage 2: GRPO for {cfg.grpo_steps} steps, {cfg.num_generations} renders per prompt")
    start_step = _resumed_step(out / "grpo", resume)
    prompts = grpo_examples(examples)
    figures: dict = {}
    with Renderer() as renderer:  # this process' own Chromium
        if cfg.prepass_prompts:
            prompts, figures["prepass"] = disagreeing_prompts(
                cfg, model, processor, prompts, renderer, echo=say, procs=procs
            )
        trainer, result = run_grpo(
            cfg,
            model,
            processor,
            prompts,
            cfg.grpo_steps,
            out / "grpo",
            resume,
            renderer,
            rank_log=out / "ranks",
        )
    figures["grpo_steps"] = {"resumed_from": start_step, "global_step": trainer.state.global_step}
    figures.update(grpo_figures(trainer.state.log_history))
    figures["grpo_steps_per_s"] = result.metrics.get("train_steps_per_second")
    return trainer, figures


def _scored_line(scored: RankLog, procs: Processes) -> str:
    """What this process scored in GRPO, and with which Chromium."""
    lines = [json.loads(x) for x in scored.path.read_text().splitlines()]
    done = [x for x in lines if x["event"] == "scored"]
    browsers = sorted({p for x in done for p in x["chromium"]})
    return (
        f"process {procs.index} of {procs.count} (pid {os.getpid()}): scored"
        f" {sum(len(x['ids']) for x in done)} completions in {len(done)} batches, rendered"
        + (f" by its own Chromium (pid {browsers})" if browsers else " none (nothing to render)")
    )


# Public names for what benchmarks (rl_vs_sft.py) call: loading a trained model and saving one.
load_trained = _load
save_checkpoint = _save
