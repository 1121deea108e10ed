"""A tiny Qwen3-VL built from a config, with a tokenizer trained here: runs on a CPU in seconds.

Nothing is downloaded: the tokenizer is a byte-level BPE trained on the
corpus' own HTML and prompts, and the weights are randomly initialised.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import torch
from transformers import PreTrainedTokenizerFast, Qwen3VLConfig, Qwen3VLForConditionalGeneration

from .processor import ImageOnlyQwenVLProcessor

SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# Kept small so the tiny model's image costs few tokens: 28x28 px per visual token.
TINY_PIXELS = dict(min_pixels=28 * 28 * 4, max_pixels=28 * 28 * 96)


def train_tokenizer(texts: Iterable[str], vocab_size: int = 4000) -> PreTrainedTokenizerFast:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    ft = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", extra_special_tokens={}
    )
    ft.add_special_tokens({"additional_special_tokens": SPECIAL[1:]})
    ft.chat_template = CHAT_TEMPLATE
    return ft


def tiny_config(tokenizer, hidden: int = 128, layers: int = 2) -> Qwen3VLConfig:
    ids = tokenizer.convert_tokens_to_ids
    heads = max(2, hidden // 32)
    return Qwen3VLConfig(
        text_config=dict(
            vocab_size=len(tokenizer),
            hidden_size=hidden,
            intermediate_size=hidden * 2,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=max(1, heads // 2),
            head_dim=hidden // heads,
            max_position_embeddings=16384,
            tie_word_embeddings=True,
            rope_parameters={
                "rope_type": "default",
                "rope_theta": 10000.0,
                "mrope_section": [2, 3, 3] if hidden // heads == 16 else [4, 6, 6],
                "mrope_interleaved": True,
            },
            bos_token_id=None,
            eos_token_id=ids("<|im_end|>"),
            pad_token_id=ids("<|endoftext|>"),
        ),
        vision_config=dict(
            depth=2,
            hidden_size=64,
            intermediate_size=128,
            num_heads=4,
            out_hidden_size=hidden,
            patch_size=14,
            spatial_merge_size=2,
            temporal_patch_size=2,
            deepstack_visual_indexes=[0],
            num_position_embeddings=256,
        ),
        image_token_id=ids("<|image_pad|>"),
        video_token_id=ids("<|video_pad|>"),
        vision_start_token_id=ids("<|vision_start|>"),
        vision_end_token_id=ids("<|vision_end|>"),
        tie_word_embeddings=True,
    )


def build_tiny(
    out_dir: str | Path,
    texts: Iterable[str],
    hidden: int = 128,
    layers: int = 2,
    vocab_size: int = 4000,
    seed: int = 0,
) -> Path:
    """Write a tiny checkpoint (model, tokenizer, processor) that loads like any local checkpoint."""
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    torch.manual_seed(seed)
    tokenizer = train_tokenizer(texts, vocab_size)
    model = Qwen3VLForConditionalGeneration(tiny_config(tokenizer, hidden, layers))
    model.generation_config.eos_token_id = tokenizer.convert_tokens_to_ids("<|im_end|>")
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    image_processor = Qwen2VLImageProcessorPil(
        patch_size=14,
        merge_size=2,
        temporal_patch_size=2,
        size={"shortest_edge": TINY_PIXELS["min_pixels"], "longest_edge": TINY_PIXELS["max_pixels"]},
    )
    processor = ImageOnlyQwenVLProcessor(
        image_processor=image_processor, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    processor.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
