"""A local transformers VLM (Qwen-VL family) loaded from a path; device and dtype are configuration.

A batch of queries is one `generate` call: prompts are left-padded so every row's new tokens
start at the same column. A checkpoint trained here says in its `worldmodel.json` how its
prompts looked (current HTML shown or not, its budget, hints), so loading it needs no options
to match them.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..device import resolve_device, resolve_dtype
from ..edit import extract_edit, try_apply
from ..focus import action_targets
from ..prompt import MAX_HTML_CHARS, build_messages, expand_follow
from ..transplant import reaction
from ..types import Completion, Query

DEFAULT_MAX_NEW_TOKENS = 2048
# Written next to a trained checkpoint: the prompt options it was trained with.
PROMPT_FILE = "worldmodel.json"
RETRY_TEMPERATURE = 0.7  # sampling the further tries of an edit that did not apply


def _reactions(queries: list[Query], edits: list[str]) -> list[str]:
    """After the sim (`applied`), the app's reaction alone: lines that only move the browser's
    hover and focus markers are left out, as they are from the targets such a model learns."""
    return [reaction(e, q.screen.html or "") if q.applied else e for q, e in zip(queries, edits)]


def _followed(completions: list[str], hints: list[str] | None) -> list[str]:
    """Each completion with its `follow` lines replaced by its prompt's hint (worldmodel/prompt.py)."""
    if hints is None:
        return completions
    return [expand_follow(c, h) for c, h in zip(completions, hints)]


def _applies(q: Query, completion: str) -> bool:
    return try_apply(q.screen.html or "", extract_edit(completion))[1] is None


class TransformersBackend:
    def __init__(
        self,
        path: str | Path,
        device: str = "auto",
        dtype: str = "auto",
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        temperature: float = 0.0,
        with_html: bool | None = None,
        batch_size: int = 8,
        html_chars: int | None = None,
        focus: bool = True,
        edit_tries: int = 1,
        hints: bool | None = None,
        hint_corpus: str | None = None,
        hint_source: str = "retrieval",
        min_confidence: float | None = None,
        model=None,
        processor=None,
    ):
        from transformers import AutoModelForImageTextToText

        from ..processor import load_processor

        p = Path(path)
        if model is None and not (p / "config.json").is_file():
            raise FileNotFoundError(
                f"no model checkpoint at {p} (expected config.json): models load from local paths only"
            )
        if batch_size < 1 or max_new_tokens < 1 or edit_tries < 1:
            raise ValueError("batch_size, max_new_tokens and edit_tries must be >= 1")
        self.name = f"hf:{p.name}"
        self.device = resolve_device(device)
        torch_dtype = resolve_dtype(dtype, self.device)
        self.model = model or AutoModelForImageTextToText.from_pretrained(p, dtype=torch_dtype).to(
            self.device
        )
        self.model.eval()
        self.processor = processor or load_processor(p)
        self.processor.tokenizer.padding_side = "left"
        if self.processor.tokenizer.pad_token is None:
            self.processor.tokenizer.pad_token = self.processor.tokenizer.eos_token
        self.max_new_tokens, self.temperature = max_new_tokens, temperature
        self.batch_size = batch_size
        trained = _prompt_options(p)
        # document prompts show the current HTML unless the model was trained without it
        self.with_html = trained.get("with_html", True) if with_html is None else with_html
        # as long as the model saw in training
        self.html_chars = html_chars or trained.get("html_chars", MAX_HTML_CHARS)
        # edit prompts show the nearest recorded transition's edit, re-addressed onto the screen,
        # from the training split of `hint_corpus` (None: the bundled corpus), as in training
        self.hints = trained.get("hints", False) if hints is None else hints
        self.hint_corpus = hint_corpus
        # "retrieval": the nearest transition of any app (as in training); "memory": the same
        # app's own recorded reaction, or no hint (the in-app setting: memory.py)
        if hint_source not in ("retrieval", "memory"):
            raise ValueError(f"hint_source {hint_source!r} is not retrieval or memory")
        self.hint_source = hint_source
        self._index = None
        # "sim": trained on the app's reaction to what the browser's physics made of the screen,
        # so a WorldModel runs the sim stage before it (`sim+PATH`)
        self.after = trained.get("after", "")
        # an edit whose mean log-probability per token is below this is not carried out (the
        # screen is kept): None takes the gate the checkpoint was calibrated with, if any
        gate = trained.get("min_confidence") if min_confidence is None else min_confidence
        self.min_confidence = None if gate is None else float(gate)
        # edit prompts name the element the action acts on (worldmodel/focus.py), found from a
        # render of the current screen: the WorldModel lends its renderer
        self.focus = focus
        # edits to try per query (the first as configured, the rest sampled) until one applies
        # in full; with more than one, a query none of whose edits applies keeps its screen
        self.edit_tries = edit_tries
        self._renderer = None

    def use_renderer(self, renderer) -> None:
        if self._renderer is None:
            self._renderer = renderer

    # the keyword options a spec can be loaded with (WorldModel.load(spec, **options))
    OPTIONS = (
        "device",
        "dtype",
        "max_new_tokens",
        "temperature",
        "with_html",
        "batch_size",
        "html_chars",
        "focus",
        "edit_tries",
        "hints",
        "hint_corpus",
        "hint_source",
        "min_confidence",
    )

    @classmethod
    def from_spec(cls, spec, **options) -> TransformersBackend:
        return cls(spec.arg, **options)

    def complete(self, queries: list[Query]) -> list[str]:
        return self._batched(self._prompts(queries, "document"))[0]

    def complete_edits(self, queries: list[Query]) -> list[str]:
        """One edit of each query's current screen (the edit-mode prompt contract).

        With `edit_tries` > 1, a query whose edit does not apply in full gets up to
        `edit_tries - 1` sampled ones and keeps the first that does; if none does, its screen is
        kept as it is (a broken edit carried out in part costs more, where it is wrong, than no
        change). Measured against voting on lines in benchmarks/RESULTS.md."""
        hints = self._hints(queries) if self.hints else None
        prompts = self._prompts(queries, "edit", hints)
        texts, confidences = self._batched(prompts)
        texts = _reactions(queries, _followed(texts, hints))
        out = [self._gated(Completion(c, "", conf)) for c, conf in zip(texts, confidences)]
        if self.edit_tries < 2:
            return out
        bad = [i for i, (q, c) in enumerate(zip(queries, out)) if not _applies(q, c)]
        if not bad:
            return out
        k = self.edit_tries - 1
        tries = self._batched([prompts[i] for i in bad], k)[0]  # the same prompts, sampled
        tries = _reactions(
            [queries[i] for i in bad for _ in range(k)],
            _followed(tries, hints and [hints[i] for i in bad for _ in range(k)]),
        )
        for n, i in enumerate(bad):
            good = [c for c in tries[n * k : (n + 1) * k] if _applies(queries[i], c)]
            out[i] = (
                good[0]
                if good
                else Completion("", f"none of {self.edit_tries} edits applied in full: the screen is kept")
            )
        return out

    def _gated(self, completion: Completion) -> Completion:
        """The edit, or none (the screen kept) where the model is less sure of it than the gate."""
        conf = completion.confidence
        if (
            self.min_confidence is None
            or conf is None
            or conf >= self.min_confidence
            or not completion.strip()
        ):
            return completion
        return Completion(
            "",
            f"edit left out: mean log-probability {conf:.2f} per token, below the gate {self.min_confidence:.2f}",
            conf,
        )

    def _prompts(
        self, queries: list[Query], mode: str, hints: list[str] | None = None
    ) -> list[tuple[str, object]]:
        """(chat text, image) per query; edit prompts name the element each action acts on, and
        show `hints` where given."""
        focus = mode == "edit" and self.focus
        targets = action_targets(self._renderer, queries) if focus else [None] * len(queries)
        hints = hints if hints is not None and mode == "edit" else [None] * len(queries)
        out = []
        for q, target, hint in zip(queries, targets, hints):
            messages, image = build_messages(
                q.screen,
                q.action,
                q.goal,
                self.with_html,
                self.html_chars,
                mode,
                q.applied,
                focus,
                target,
                hint,
            )
            text = self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            out.append((text, image))
        return out

    def _hints(self, queries: list[Query]) -> list[str]:
        """The retrieval transplant of each query (worldmodel/transplant.py), or the same app's
        recorded reaction (`hint_source="memory"`); "" where none carries over."""
        if self._index is None:
            from .memory import MemoryBackend
            from .retrieval import RetrievalBackend

            src = MemoryBackend if self.hint_source == "memory" else RetrievalBackend
            self._index = src.from_corpus(self.hint_corpus)
            if self._renderer is not None:
                self._index.use_renderer(self._renderer)
        return [str(h) for h in self._index.complete_edits(queries)]

    def _batched(self, prompts: list[tuple[str, object]], samples: int = 0) -> tuple[list[str], list[float]]:
        """Completions in prompt order (with `samples`, that many sampled ones per prompt), and
        each one's mean log-probability per generated token."""
        out: list[str] = []
        confidences: list[float] = []
        step = max(1, self.batch_size // max(1, samples))
        for i in range(0, len(prompts), step):
            texts, conf = self._generate(prompts[i : i + step], samples)
            out += texts
            confidences += conf
        return out, confidences

    def _generate(self, prompts: list[tuple[str, object]], samples: int = 0) -> tuple[list[str], list[float]]:
        import torch

        texts = [t for t, _ in prompts]
        images = [i for _, i in prompts]
        inputs = self.processor(text=texts, images=images, padding=True, return_tensors="pt").to(self.device)
        gen = dict(
            max_new_tokens=self.max_new_tokens,
            do_sample=self.temperature > 0,
            pad_token_id=self.processor.tokenizer.pad_token_id,
        )
        if self.temperature > 0:
            gen["temperature"] = self.temperature
        if samples:
            gen.update(do_sample=True, num_return_sequences=samples)
            gen["temperature"] = max(self.temperature, RETRY_TEMPERATURE)
        with torch.no_grad():
            got = self.model.generate(**inputs, **gen, output_scores=True, return_dict_in_generate=True)
            logp = self.model.compute_transition_scores(got.sequences, got.scores, normalize_logits=True)
        new = got.sequences[:, inputs["input_ids"].shape[1] :]
        real = new != self.processor.tokenizer.pad_token_id
        conf = ((logp * real).sum(1) / real.sum(1).clamp(min=1)).tolist()
        return self.processor.tokenizer.batch_decode(new, skip_special_tokens=True), conf


def _prompt_options(path: Path) -> dict:
    """The prompt options a checkpoint was trained with ({} when it does not say)."""
    f = path / PROMPT_FILE
    if not f.is_file():
        return {}
    try:
        opts = json.loads(f.read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{f} is not readable JSON: {e}") from e
    return opts if isinstance(opts, dict) else {}
