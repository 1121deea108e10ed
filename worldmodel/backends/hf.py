"""A local transformers VLM (Qwen-VL family) loaded from a path; device and dtype are configuration.

A batch of queries is one `generate` call: prompts are left-padded so every row's new tokens
start at the same column, and queries are batched in order of prompt length (answers come back in
the caller's order) so a batch pads little. Generation keeps its work on the device: SDPA
attention, bf16 on a GPU, optionally a static KV cache (`cache="static"`: transformers then
compiles the decode step on CUDA), and each answer's mean log-probability per token (the edit
gate's confidence) summed on the device as tokens are chosen, read back once per batch. Nothing
comes from a hub: hub kernels stay off unless `hub_kernels=True` (worldmodel/offline.py).

A checkpoint trained here carries its card (worldmodel/card.py): what it writes, how its prompts
looked (current HTML shown or not, its budget, hints), whether it runs after the sim and its edit
gate, so loading it needs no options to match them; an option given overrides the card's value.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path

from ..card import CheckpointCard
from ..device import resolve_device, resolve_dtype
from ..edit import extract_edit, try_apply
from ..focus import action_targets
from ..prompt import FOLLOW, build_messages, expand_follow
from ..transplant import reaction
from ..types import Completion, Query
from .base import Backend

DEFAULT_MAX_NEW_TOKENS = 2048
# the KV caches generate can use: transformers' growing one, or one allocated once (compilable)
CACHES = ("dynamic", "static")
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


# What a hinted model's note says it chose, and what stood where its choice was left out
# (benchmarks/inapp_bench.py tallies them)
NOTES = {
    "followed": "followed the hint",
    "overruled": "no change: the hint left out",
    "own edit": "its own edit, not the hint",
    "own edit, no hint": "its own edit, no hint",
    "no change, no hint": "no change, no hint",
    "memory stands": "memory's answer stands",
    "screen kept": "the screen is kept",
}
_KEPT = ("", NOTES["screen kept"])


def _decision(raw: str, hint: str) -> str:
    """What a hinted model chose, in a prediction's note: the hint, no change, or its own edit."""
    lines = [line.strip() for line in raw.splitlines() if line.strip()]
    if not hint.strip():
        return NOTES["own edit, no hint"] if lines else NOTES["no change, no hint"]
    if lines == [FOLLOW]:
        return NOTES["followed"]
    return NOTES["own edit"] if lines else NOTES["overruled"]


def _applies(q: Query, completion: Completion) -> bool:
    return try_apply(q.screen.html or "", extract_edit(completion.text))[1] is None


@dataclass(frozen=True)
class GenerationConfig:
    """How the hf backend runs and samples: everything about it that is not the checkpoint's card."""

    # where it runs and in what precision ("auto": a GPU when there is one, bf16 on it)
    device: str = "auto"
    dtype: str = "auto"
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    temperature: float = 0.0
    # queries per generate call
    batch_size: int = 8
    # edit prompts name the element the action acts on (worldmodel/focus.py), found from a
    # render of the current screen: the WorldModel lends its renderer
    focus: bool = True
    # edits to try per query (the first as configured, the rest sampled) until one applies in
    # full; with more than one, a query none of whose edits applies keeps its screen
    edit_tries: int = 1
    attn_implementation: str = "sdpa"
    # "static": a KV cache allocated once per generate call (compiled decode step on CUDA)
    cache: str = "dynamic"
    # hub kernels stay off (and the hub offline) unless asked for (worldmodel/offline.py)
    hub_kernels: bool = False

    def __post_init__(self):
        if self.batch_size < 1 or self.max_new_tokens < 1 or self.edit_tries < 1:
            raise ValueError("batch_size, max_new_tokens and edit_tries must be >= 1")
        if self.cache not in CACHES:
            raise ValueError(f"cache {self.cache!r} is not one of {', '.join(CACHES)}")


# the options that stand in for the checkpoint card's values: the card it runs with
CARD_OPTIONS = ("with_html", "html_chars", "hints", "hint_corpus", "hint_source", "min_confidence")
GENERATION_OPTIONS = tuple(f.name for f in fields(GenerationConfig))


def _split_options(options: dict) -> tuple[dict, dict]:
    """Keyword options as (card changes, generation changes); one left None is not given."""
    unknown = set(options) - set(CARD_OPTIONS) - set(GENERATION_OPTIONS)
    if unknown:
        raise TypeError(f"TransformersBackend takes no option(s) {', '.join(sorted(unknown))}")
    given = {k: v for k, v in options.items() if v is not None}
    return (
        {k: v for k, v in given.items() if k in CARD_OPTIONS},
        {k: v for k, v in given.items() if k in GENERATION_OPTIONS},
    )


def _run_card(card: CheckpointCard, changes: dict) -> CheckpointCard:
    """The card a checkpoint runs with: its own, with the options given in place of its values."""
    if changes.get("hint_corpus") is not None:  # a Path given: the card holds its text
        changes = {**changes, "hint_corpus": str(changes["hint_corpus"])}
    card = card.updated(**changes)
    gate = card.min_confidence
    return card if gate is None else card.updated(min_confidence=float(gate))


class _FromCard:
    """A backend attribute read from the card it runs with (on the class: a plain card's value)."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        return getattr(CheckpointCard if obj is None else obj.card, self.name)


class _FromGeneration:
    """A backend attribute read from (and set into) its generation config."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        return getattr(GenerationConfig if obj is None else obj.generation, self.name)

    def __set__(self, obj, value):
        obj.generation = replace(obj.generation, **{self.name: value})


class TransformersBackend(Backend):
    """A local checkpoint at `path`, asked as its card says (`card`: read from `path` when not
    given) and run as `generation` says. Keyword `options` (those in OPTIONS) override single
    values of either: the card's (with_html, html_chars, hints, hint_corpus, min_confidence) or
    the generation config's; one left None keeps the card's or the default value."""

    edits = True

    # what it writes when a caller names no mode, whether it runs after the sim (`sim+PATH`),
    # document prompts' current HTML and its budget, hints from `hint_corpus` (None: the bundled
    # corpus) found by `hint_source` (any app's nearest transition, or this app's own memory),
    # and the edit gate: an edit whose mean log-probability per token is below it is not
    # carried out (the screen is kept, or with memory's hints memory's answer stands)
    target = _FromCard()
    after = _FromCard()
    with_html = _FromCard()
    html_chars = _FromCard()
    hints = _FromCard()
    hint_corpus = _FromCard()
    hint_source = _FromCard()
    min_confidence = _FromCard()

    max_new_tokens = _FromGeneration()
    temperature = _FromGeneration()
    batch_size = _FromGeneration()
    focus = _FromGeneration()
    edit_tries = _FromGeneration()
    cache = _FromGeneration()

    # the keyword options a spec can be loaded with (WorldModel.load(spec, **options))
    OPTIONS = GENERATION_OPTIONS + CARD_OPTIONS

    def __init__(
        self,
        path: str | Path,
        card: CheckpointCard | None = None,
        generation: GenerationConfig | None = None,
        model=None,
        processor=None,
        **options,
    ):
        from ..offline import local_only, require_checkpoint

        card_changes, generation_changes = _split_options(options)
        self.generation = replace(generation or GenerationConfig(), **generation_changes)
        local_only(self.generation.hub_kernels)  # before transformers loads anything: hub offline
        p = Path(path)
        if model is None:
            require_checkpoint(p)
        # how the checkpoint was trained to be asked (read before the weights: a bad card fails fast)
        self.card = _run_card(card or CheckpointCard.of(p), card_changes)
        self.name = f"hf:{p.name}"
        self.path = p
        self._load(p, model, processor)
        self._index = None
        self._renderer = None

    def _load(self, p: Path, model, processor) -> None:
        """The weights on the configured device and dtype, and the processor padding on the left."""
        from transformers import AutoModelForImageTextToText

        from ..processor import load_processor

        self.device = resolve_device(self.generation.device)
        torch_dtype = resolve_dtype(self.generation.dtype, self.device)
        self.model = model or AutoModelForImageTextToText.from_pretrained(
            p, dtype=torch_dtype, attn_implementation=self.generation.attn_implementation
        ).to(self.device)
        self.model.eval()
        self.processor = processor or load_processor(p)
        self.processor.tokenizer.padding_side = "left"
        if self.processor.tokenizer.pad_token is None:
            self.processor.tokenizer.pad_token = self.processor.tokenizer.eos_token

    def use_renderer(self, renderer) -> None:
        if self._renderer is None:
            self._renderer = renderer
            if self._index is not None:
                self._index.use_renderer(renderer)

    @classmethod
    def from_spec(cls, spec, **options) -> TransformersBackend:
        return cls(spec.arg, **options)

    def complete(self, queries: list[Query]) -> list[Completion]:
        texts, confidences = self._batched(self._prompts(queries, "document"))
        return [Completion(t, confidence=c) for t, c in zip(texts, confidences)]

    def complete_edits(self, queries: list[Query]) -> list[Completion]:
        """One edit of each query's current screen (the edit-mode prompt contract).

        With hints from memory, an answer memory is sure of (a recording of this very
        transition: `Completion.settled`) passes through unasked; the model decides on the rest,
        keeping memory's answer (`follow`), the screen, or writing its own edit. Where it is less
        sure than its gate, memory's answer stands (with retrieval's hints: the screen).

        With `edit_tries` > 1, a query whose edit does not apply in full gets up to
        `edit_tries - 1` sampled ones and keeps the first that does; if none does, its screen is
        kept as it is (a broken edit carried out in part costs more, where it is wrong, than no
        change). Measured against voting on lines in benchmarks/RESULTS.md."""
        if not self.hints:
            return self._edits(queries, None)
        hinted = self._hints(queries)
        out: list[Completion] = [h if h.settled else None for h in hinted]  # type: ignore[misc]
        ask = [i for i, c in enumerate(out) if c is None]
        asked = [hinted[i] for i in ask]
        got = (
            self._edits([queries[i] for i in ask], [h.text for h in asked], [h.known for h in asked])
            if ask
            else []
        )
        for i, c in zip(ask, got):
            out[i] = c
        return out

    def _edits(
        self, queries: list[Query], hints: list[str] | None, known: list[bool] | None = None
    ) -> list[Completion]:
        """The model's edits of `queries`, each prompt showing its hint where `hints` are given
        (`known`: whether the hint's source knew the step, where the card tells them apart)."""
        prompts = self._prompts(queries, "edit", hints, known)
        raw, confidences = self._batched(prompts)
        texts = _reactions(queries, _followed(raw, hints))
        fallbacks = [self._fallback(h) for h in hints or [""] * len(queries)]
        notes = [_decision(r, h) for r, h in zip(raw, hints)] if hints is not None else [""] * len(raw)
        out = [
            self._gated(Completion(c, note, conf), fb)
            for c, note, conf, fb in zip(texts, notes, confidences, fallbacks)
        ]
        if self.edit_tries < 2:
            return out
        bad = [i for i, (q, c) in enumerate(zip(queries, out)) if not _applies(q, c)]
        if not bad:
            return out
        k = self.edit_tries - 1
        texts, confidences = self._batched([prompts[i] for i in bad], k)  # the same prompts, sampled
        texts = _reactions(
            [queries[i] for i in bad for _ in range(k)],
            _followed(texts, hints and [hints[i] for i in bad for _ in range(k)]),
        )
        tries = [Completion(t, confidence=c) for t, c in zip(texts, confidences)]
        for n, i in enumerate(bad):
            good = [c for c in tries[n * k : (n + 1) * k] if _applies(queries[i], c)]
            out[i] = (
                good[0]
                if good
                else Completion(
                    fallbacks[i][0], f"none of {self.edit_tries} edits applied in full: {fallbacks[i][1]}"
                )
            )
        return out

    def _fallback(self, hint: str) -> tuple[str, str]:
        """(what stands where the model's own edit does not, why): memory's answer where the
        hints are memory's and it has one, else no change."""
        if self.hint_source == "memory" and hint.strip():
            return hint, NOTES["memory stands"]
        return _KEPT

    def _gated(self, completion: Completion, fallback: tuple[str, str] = _KEPT) -> Completion:
        """The edit, or `fallback` where the model is less sure of it than the gate (an empty edit
        too where memory's answer is the fallback: "memory is wrong here" is a claim as well)."""
        conf = completion.confidence
        if (
            self.min_confidence is None
            or conf is None
            or conf >= self.min_confidence
            or completion.text.strip() == fallback[0].strip()
        ):
            return completion
        return Completion(
            fallback[0],
            f"edit left out: mean log-probability {conf:.2f} per token, below the gate"
            f" {self.min_confidence:.2f}; {fallback[1]}",
            conf,
        )

    def _prompts(
        self,
        queries: list[Query],
        mode: str,
        hints: list[str] | None = None,
        known: list[bool] | None = None,
    ) -> list[tuple[str, object]]:
        """(chat text, image) per query; edit prompts name the element each action acts on, and
        show `hints` where given (saying where their source knew nothing, if the card does)."""
        focus = mode == "edit" and self.focus
        targets = action_targets(self._renderer, queries) if focus else [None] * len(queries)
        hints = hints if hints is not None and mode == "edit" else [None] * len(queries)
        told = known if known is not None and self.card.unknown_hint else [True] * len(queries)
        # the note a checkpoint was trained with: older cards said "another app" for memory too
        source = self.hint_source if self.card.own_app_note else "retrieval"
        out = []
        for q, target, hint, hint_known in zip(queries, targets, hints, told):
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
                hint_known,
                source,
            )
            text = self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            out.append((text, image))
        return out

    def _hints(self, queries: list[Query]) -> list[Completion]:
        """Per query, the retrieval transplant (worldmodel/transplant.py) or memory's answer
        (`hint_source="memory"`, settled where memory is sure), as a Completion whose text is
        "" where none carries over."""
        if self._index is None:
            from .memory import MemoryBackend
            from .retrieval import RetrievalBackend

            src = MemoryBackend if self.hint_source == "memory" else RetrievalBackend
            self.use_hint_index(src.from_corpus(self.hint_corpus))
        return [Completion.of(h) for h in self._index.complete_edits(queries)]

    def followers(self) -> list[Backend]:
        """The checkpoint's revisit head (training/revisit.py wrote it beside the weights), if any."""
        from ..revisit import REVISIT_FILE
        from .revisit import RevisitBackend

        return [RevisitBackend(self.path)] if (self.path / REVISIT_FILE).is_file() else []

    def absorbs(self, previous: Backend) -> bool:
        """A checkpoint trained on memory's answers as hints takes the memory stage before it as
        their source: memory's answer is its hint, not its screen (`sim+memory+PATH`)."""
        from .memory import MemoryBackend

        if not (self.hints and self.hint_source == "memory" and isinstance(previous, MemoryBackend)):
            return False
        self.use_hint_index(previous)
        return True

    def use_hint_index(self, index: Backend) -> None:
        """Take the hints from `index` (a memory or retrieval backend already built: the memory
        stage of `sim+memory+PATH`, or one indexing other splits) instead of `hint_corpus`."""
        self._index = index
        if self._renderer is not None:
            index.use_renderer(self._renderer)

    def _batched(self, prompts: list[tuple[str, object]], samples: int = 0) -> tuple[list[str], list[float]]:
        """Completions in prompt order (with `samples`, that many sampled ones per prompt), and
        each one's mean log-probability per generated token. Prompts go to `generate` in order
        of length, so each batch pads little."""
        k = max(1, samples)
        out: list[str] = [""] * (len(prompts) * k)
        confidences: list[float] = [0.0] * (len(prompts) * k)
        step = max(1, self.batch_size // k)
        order = self._by_length(prompts)
        for i in range(0, len(order), step):
            idx = order[i : i + step]
            texts, conf = self._generate([prompts[j] for j in idx], samples)
            for n, j in enumerate(idx):
                out[j * k : (j + 1) * k] = texts[n * k : (n + 1) * k]
                confidences[j * k : (j + 1) * k] = conf[n * k : (n + 1) * k]
        return out, confidences

    def _by_length(self, prompts: list[tuple[str, object]]) -> list[int]:
        """Prompt indices, shortest prompt first: text tokens plus the image's visual tokens."""
        if len(prompts) <= 1:
            return list(range(len(prompts)))
        tokens = self.processor.tokenizer([t for t, _ in prompts])["input_ids"]
        ip = getattr(self.processor, "image_processor", None)
        side = getattr(ip, "patch_size", 14) * getattr(ip, "merge_size", 2)
        limit = getattr(ip, "size", None)  # the most pixels an image is resized to
        limit = limit.get("longest_edge") if isinstance(limit, dict) else getattr(limit, "longest_edge", None)

        def visual(image) -> int:
            size = getattr(image, "size", None)
            if not size or len(size) != 2:
                return 0
            return min(size[0] * size[1], limit or size[0] * size[1]) // (side * side)

        return sorted(range(len(prompts)), key=lambda i: len(tokens[i]) + visual(prompts[i][1]))

    def _generate(self, prompts: list[tuple[str, object]], samples: int = 0) -> tuple[list[str], list[float]]:
        import torch
        from transformers import LogitsProcessorList

        texts = [t for t, _ in prompts]
        images = [i for _, i in prompts]
        inputs = self.processor(text=texts, images=images, padding=True, return_tensors="pt").to(self.device)
        pad = self.processor.tokenizer.pad_token_id
        scored = MeanLogProb(pad)
        gen = dict(
            max_new_tokens=self.max_new_tokens,
            do_sample=self.temperature > 0,
            pad_token_id=pad,
            # a checkpoint saved by a Trainer says use_cache=False in its config: decode with the cache
            use_cache=True,
            logits_processor=LogitsProcessorList([scored]),
        )
        if self.cache != "dynamic":
            gen["cache_implementation"] = self.cache
        if self.temperature > 0:
            gen["temperature"] = self.temperature
        if samples:
            gen.update(do_sample=True, num_return_sequences=samples)
            gen["temperature"] = max(self.temperature, RETRY_TEMPERATURE)
        with torch.inference_mode():
            sequences = self.model.generate(**inputs, **gen)
            conf = scored.mean(sequences[:, -1]).tolist()
        new = sequences[:, inputs["input_ids"].shape[1] :]
        return self.processor.tokenizer.batch_decode(new, skip_special_tokens=True), conf


class MeanLogProb:
    """A logits processor (the last in generate's list) that sums, on the device, the
    log-probability of each token generate chooses, under the scores it chose from; a padding
    token (a row that has finished) does not count. Nothing is read back per token, and no
    per-step scores are kept (`output_scores` would keep a batch x vocabulary tensor per token)."""

    def __init__(self, pad_token_id: int | None):
        self.pad = pad_token_id
        self.logp = None  # the log-softmax of the scores the last token was chosen from
        self.total = self.count = None

    def _add(self, chosen) -> None:
        lp = self.logp.gather(1, chosen[:, None]).squeeze(1)
        real = chosen != self.pad if self.pad is not None else chosen == chosen
        self.total = self.total + lp * real
        self.count = self.count + real

    def __call__(self, input_ids, scores):
        import torch

        if self.logp is None:
            self.total = torch.zeros(scores.shape[0], device=scores.device)
            self.count = torch.zeros(scores.shape[0], device=scores.device)
        else:
            self._add(input_ids[:, -1])  # the token chosen from the previous step's scores
        self.logp = torch.log_softmax(scores.float(), dim=-1)
        return scores

    def mean(self, last):
        """Each row's mean log-probability per real generated token, given the last token chosen."""
        if self.logp is None:
            return last.new_zeros(last.shape[0]).float()
        self._add(last)
        return self.total / self.count.clamp(min=1)
