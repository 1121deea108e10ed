"""The GPU check: the project's own pipeline on one GPU, offline, in under 8 minutes.

    python benchmarks/gpu_check.py            # one GPU: a 607M-parameter Qwen3-VL built here
    python benchmarks/gpu_check.py --small    # the CPU: the tiny model, a few minutes

It downloads nothing (the model is built from a config with a tokenizer trained on the bundled
corpus, random weights; hub kernels are off and the hub client offline, worldmodel/offline.py) and:
  1. builds the model (`worldmodel.tiny.build_tiny(hidden=2048, layers=16)`; --small: 128 x 2);
  2. runs `wm train`'s pipeline (`training.train.train`) with the real-checkpoint preset
     (`qwen3-vl-8b`, `--model-path` the model built in 1) for a few SFT and GRPO steps: GRPO's
     rewards are rendered where Chromium is installed; where it is not, it says so and still steps
     (every completion then scores 0);
  3. loads the trained checkpoint as `WorldModel.load("hf:...")` and times `predict_many`
     (generation, then one render batch) one by one and in batches of 8 and 32, with each
     generating path: the hf backend's own with its growing (`dynamic`) KV cache, then with a
     `static` one (transformers compiles its decode step on CUDA; the first call of each batch
     shape pays the compilation and is left out), then the former path as the baseline (caller
     order, per-step scores kept with `output_scores`, the log-probabilities computed after; one
     by one and a batch of 32). A path that fails (e.g. compilation) is reported and skipped;
  4. prints new tokens/s (and the ratio of each batch size to one by one), training steps/s and
     peak GPU memory.

Targets on one H200 for the 607M model (issue #26): >= 150 new tokens/s one by one and >= 2,000
for a batch of 32. Tolerant of older stacks (torch 2.11, transformers 5.17): nothing here needs
more than `generate` and the trainers the project already uses. It needs trl and datasets (the
training stack); where they are missing, install the wheels carried along first
(`pip install --no-index --find-links WHEELS trl datasets`). Chromium is optional.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from worldmodel import offline  # noqa: E402 - first: hub kernels off, hub offline

offline.local_only()


def say(msg: str) -> None:
    print(msg, flush=True)


def chromium_ok() -> tuple[bool, str]:
    """Whether a page renders here (GRPO's rewards need it)."""
    try:
        from render import Renderer, Viewport

        with Renderer(pool_size=1, timeout_s=20) as r:
            r.render("<p>ok</p>", Viewport(64, 64))
        return True, "Chromium renders"
    except Exception as e:  # noqa: BLE001 - any failure means no renders here
        return False, " ".join(str(e).split())[:160]


def peak_gb(cuda: bool) -> str:
    import torch

    return f"{torch.cuda.max_memory_allocated() / 2**30:.2f} GB" if cuda else "n/a (CPU)"


class Counted:
    """Wraps a model's `generate` to time each call (device-synchronised) and count the new
    tokens it wrote (padding of finished rows left out)."""

    def __init__(self, model, pad_id: int | None):
        self.model, self.pad, self.real = model, pad_id, model.generate
        self.seconds = self.cpu_seconds = 0.0
        self.tokens = 0
        self.calls = 0
        model.generate = self

    def reset(self) -> None:
        self.seconds, self.cpu_seconds, self.tokens, self.calls = 0.0, 0.0, 0, 0

    def __call__(self, **kw):
        import torch

        sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
        sync()
        t, c = time.perf_counter(), time.process_time()
        out = self.real(**kw)
        sync()
        self.seconds += time.perf_counter() - t
        # this process' CPU time (all its threads): on a shared CPU, steadier than the wall clock
        self.cpu_seconds += time.process_time() - c
        seq = out.sequences if hasattr(out, "sequences") else out
        new = seq[:, kw["input_ids"].shape[1] :]
        self.tokens += int((new != self.pad).sum()) if self.pad is not None else new.numel()
        self.calls += 1
        return out


def former_generate(backend, prompts, samples: int = 0):
    """The hf backend's generation as it was before issue #26 (the baseline): batches in caller
    order, every step's scores kept (`output_scores`) and the log-probabilities computed after."""
    import torch

    texts, confs = [], []
    for i in range(0, len(prompts), backend.batch_size):
        chunk = prompts[i : i + backend.batch_size]
        inputs = backend.processor(
            text=[t for t, _ in chunk], images=[im for _, im in chunk], padding=True, return_tensors="pt"
        ).to(backend.device)
        pad = backend.processor.tokenizer.pad_token_id
        with torch.no_grad():
            got = backend.model.generate(
                **inputs,
                max_new_tokens=backend.max_new_tokens,
                do_sample=False,
                pad_token_id=pad,
                output_scores=True,
                return_dict_in_generate=True,
            )
            logp = backend.model.compute_transition_scores(got.sequences, got.scores, normalize_logits=True)
        new = got.sequences[:, inputs["input_ids"].shape[1] :]
        real = new != pad
        confs += ((logp * real).sum(1) / real.sum(1).clamp(min=1)).tolist()
        texts += backend.processor.tokenizer.batch_decode(new, skip_special_tokens=True)
    return texts, confs


def time_generation(wm, queries, batch_sizes, one_by_one: int, warm: bool) -> dict:
    """New tokens/s and predictions/s of `predict_many` for each batch size (1: one query per call)."""
    backend = wm.stages[-1]
    counted = backend.model.generate
    out = {}
    for bs in batch_sizes:
        qs = queries[:one_by_one] if bs == 1 else queries
        backend.batch_size = bs
        if warm:  # the first call of this batch shape (static cache: compiles) is left out
            wm.predict_many(qs[:bs])
        counted.reset()
        t = time.perf_counter()
        n = 0
        for i in range(0, len(qs), bs):
            n += len(wm.predict_many(qs[i : i + bs]))
        wall = time.perf_counter() - t
        out[bs] = dict(
            queries=n,
            new_tokens=counted.tokens,
            tokens_per_answer=counted.tokens / max(1, n),
            gen_s=counted.seconds,
            new_tok_s=counted.tokens / max(counted.seconds, 1e-9),
            new_tok_cpu_s=counted.tokens / max(counted.cpu_seconds, 1e-9),
            pred_s=n / wall,
        )
    return out


def report(name: str, figs: dict) -> None:
    base = figs.get(1, {}).get("new_tok_s")
    for bs, f in figs.items():
        ratio = f" ({f['new_tok_s'] / base:.1f}x one by one)" if base and bs != 1 else ""
        label = "one by one" if bs == 1 else f"batch of {bs}"
        say(
            f"  {name:9s} {label:11s} {f['new_tok_s']:9.1f} new tokens/s{ratio:22s}"
            f" {f['pred_s']:6.2f} predictions/s, {f['new_tok_cpu_s']:7.1f} new tokens per CPU-second"
            f"  ({f['queries']} queries,"
            f" {f['tokens_per_answer']:.0f} new tokens each, generate {f['gen_s']:.1f}s)"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="the tiny model on the CPU (a few minutes)")
    ap.add_argument("--device", default=None, help="default: cuda (cpu with --small)")
    ap.add_argument("--hidden", type=int, default=None, help="model width (default 2048; --small 128)")
    ap.add_argument("--layers", type=int, default=None, help="model depth (default 16; --small 2)")
    ap.add_argument("--sft-steps", type=int, default=None)
    ap.add_argument("--grpo-steps", type=int, default=None)
    ap.add_argument("--new-tokens", type=int, default=None, help="new tokens per answer (256; --small 32)")
    ap.add_argument("--queries", type=int, default=32, help="test-split queries for the batched timings")
    ap.add_argument("--one-by-one", type=int, default=4, help="queries timed one by one")
    ap.add_argument(
        "--caches", default="dynamic,static,former", help="generating paths to time, in this order"
    )
    ap.add_argument("--out", default=None, help="keep the run here (default: a temporary folder)")
    a = ap.parse_args()

    import torch
    import transformers

    small = a.small
    device = a.device or ("cpu" if small else "cuda")
    cuda = device.startswith("cuda")
    if cuda and not torch.cuda.is_available():
        raise SystemExit("error: no CUDA GPU here: run with --small for the CPU check")
    hidden = a.hidden or (128 if small else 2048)
    layers = a.layers or (2 if small else 16)
    sft_steps = a.sft_steps if a.sft_steps is not None else (2 if small else 30)
    grpo_steps = a.grpo_steps if a.grpo_steps is not None else (1 if small else 4)
    new_tokens = a.new_tokens or (32 if small else 256)
    caches = [c for c in a.caches.split(",") if c]
    try:
        import trl

        trl_version = trl.__version__
    except ImportError:
        trl_version = "missing"
    gpu = torch.cuda.get_device_name(0) if cuda else platform.processor() or "cpu"
    say(
        f"gpu_check: {'--small, ' if small else ''}{device} ({gpu}); torch {torch.__version__},"
        f" transformers {transformers.__version__}, trl {trl_version};"
        f" USE_HUB_KERNELS={os.environ.get('USE_HUB_KERNELS')} HF_HUB_OFFLINE={os.environ.get('HF_HUB_OFFLINE')}"
    )
    if trl_version == "missing":
        raise SystemExit("error: trl is not installed: pip install the carried wheels (trl, datasets) first")

    from training.config import preset
    from training.train import train
    from worldmodel import Query, WorldModel, iter_transitions, load_corpus
    from worldmodel.tiny import build_tiny

    rendered, why = chromium_ok()
    say(
        f"renders: {why}"
        if rendered
        else f"renders: none here ({why}); GRPO rewards score 0, the steps still run"
    )
    if not rendered:
        os.environ["WM_CHROMIUM"] = "/nonexistent/chromium"  # every render fails at once, in its slot

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(a.out or tmp)
        root.mkdir(parents=True, exist_ok=True)
        dd = load_corpus()
        train_ds = dd["train"]
        texts = [r["next_html"] for r in train_ds] + [r["goal"] for r in train_ds]
        t = time.perf_counter()
        model_dir = build_tiny(root / "model", texts, hidden=hidden, layers=layers)
        from safetensors import safe_open

        with safe_open(str(model_dir / "model.safetensors"), "pt") as f:
            n_params = sum(int(torch.tensor(f.get_slice(k).get_shape()).prod()) for k in f.keys())
        say(
            f"model: Qwen3-VL {hidden} wide, {layers} layers, {n_params / 1e6:.0f}M parameters, built in {time.perf_counter() - t:.1f}s"
        )

        # 2. wm train with the real-checkpoint preset
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        cfg = preset(
            "qwen3-vl-8b",
            model_path=str(model_dir),
            output_dir=str(root / "run"),
            device=device,
            dtype="bfloat16" if cuda else "float32",
            sft_steps=sft_steps,
            grpo_steps=grpo_steps,
            num_generations=4,
            max_completion_length=64 if small else 128,
            max_length=2048,
            max_train_examples=16,
            save_steps=10_000,
            calibrate_gate=False,
        )
        t = time.perf_counter()
        final = train(cfg, echo=lambda s: say(f"  train: {s}"))
        train_s = time.perf_counter() - t
        figs = json.loads((root / "run" / "figures.json").read_text())
        say(
            f"train: {sft_steps} SFT + {grpo_steps} GRPO steps in {train_s:.0f}s;"
            f" SFT {figs.get('sft_steps_per_s') or 0:.2f} steps/s, GRPO {figs.get('grpo_steps_per_s') or 0:.3f} steps/s"
            f" ({cfg.num_generations} completions of up to {cfg.max_completion_length} tokens per prompt);"
            f" peak GPU memory {peak_gb(cuda)}"
        )
        del figs
        import gc

        gc.collect()
        if cuda:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()

        # 3. generation
        ts = list(iter_transitions(dd["test"]))
        queries = [
            Query(x.screen, x.action, x.goal) for x in (ts * (a.queries // max(1, len(ts)) + 1))[: a.queries]
        ]
        sizes = [1, 8, 32] if a.queries >= 32 else [1, 8]
        results = {}
        with WorldModel.load(f"hf:{final}", device=device, max_new_tokens=new_tokens) as wm:
            backend = wm.stages[-1]
            Counted(backend.model, backend.processor.tokenizer.pad_token_id)
            own = backend._batched  # noqa: SLF001 - the backend's generating path, swapped below for the baseline
            for n, cache in enumerate(caches):
                if cache == "former":
                    backend._batched = lambda prompts, samples=0: former_generate(backend, prompts, samples)
                else:
                    backend._batched, backend.cache = own, cache
                # the baseline skips batches of 8 (time); the first path and a static cache warm up
                use = [1, sizes[-1]] if cache == "former" else sizes
                try:
                    results[cache] = time_generation(
                        wm, queries, use, a.one_by_one, warm=n == 0 or cache == "static"
                    )
                except Exception as e:  # noqa: BLE001 - one path failing (e.g. compilation) keeps the others
                    say(f"  {cache:9s} failed: {type(e).__name__}: {' '.join(str(e).split())[:300]}")
                    continue
                report(cache, results[cache])
            backend._batched = own
        say(f"generation: peak GPU memory {peak_gb(cuda)}")
        best = max(
            (c for c in results if c != "former"),
            key=lambda c: results[c][sizes[-1]]["new_tok_s"],
            default=None,
        )
        if best:
            one, many = results[best][1]["new_tok_s"], results[best][sizes[-1]]["new_tok_s"]
            base = results.get("former", {}).get(sizes[-1], {}).get("new_tok_s")
            vs = f"; the former path: {base:.1f} (this path {many / base:.2f}x it)" if base else ""
            cpu = results[best][sizes[-1]]["new_tok_cpu_s"]
            base_cpu = results.get("former", {}).get(sizes[-1], {}).get("new_tok_cpu_s")
            if base_cpu:
                vs += f"; per CPU-second {cpu:.1f} against {base_cpu:.1f} ({cpu / base_cpu:.2f}x)"
            say(
                f"summary ({best} cache): {one:.1f} new tokens/s one by one, {many:.1f} in a batch of"
                f" {sizes[-1]} ({many / one:.1f}x){vs}"
            )
            if not small:
                ok = one >= 150 and many >= 2000
                say(
                    f"targets (>= 150 one by one, >= 2000 batch of 32 on one H200): {'met' if ok else 'NOT met'}"
                )


if __name__ == "__main__":
    main()
