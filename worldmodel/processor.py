"""Load the processor of a Qwen-VL checkpoint, with or without torchvision.

Qwen-VL processors carry a video processor that needs torchvision. The world
model only ever sees images, so where torchvision is missing (or built for
another torch) the image-only variant below is used; real checkpoints with a
working torchvision get the stock AutoProcessor.
"""

from __future__ import annotations

import json
from pathlib import Path

from transformers import AutoProcessor, AutoTokenizer, Qwen3VLProcessor
from transformers.processing_utils import ProcessorMixin


class ImageOnlyQwenVLProcessor(Qwen3VLProcessor):
    """Qwen3-VL's processor with the video slot left out."""

    def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
        def tok(attr, default):
            return getattr(tokenizer, attr, None) or default

        self.image_token = tok("image_token", "<|image_pad|>")
        self.video_token = tok("video_token", "<|video_pad|>")
        self.image_token_id = tokenizer.convert_tokens_to_ids(self.image_token)
        self.video_token_id = tokenizer.convert_tokens_to_ids(self.video_token)
        ProcessorMixin.__init__(self, image_processor, tokenizer, chat_template=chat_template)
        self.vision_start_token = tok("vision_start_token", "<|vision_start|>")
        self.vision_end_token = tok("vision_end_token", "<|vision_end|>")
        self.vision_start_token_id = tokenizer.convert_tokens_to_ids(self.vision_start_token)
        self.vision_end_token_id = tokenizer.convert_tokens_to_ids(self.vision_end_token)


def _torchvision_ok() -> bool:
    try:
        import torchvision  # noqa: F401
    except Exception:
        return False
    return True


def load_processor(path: str | Path, min_pixels: int | None = None, max_pixels: int | None = None):
    """The checkpoint's processor; image-only when torchvision is unusable here."""
    kw = {}
    if min_pixels:
        kw["min_pixels"] = min_pixels
    if max_pixels:
        kw["max_pixels"] = max_pixels
    if _torchvision_ok():
        return AutoProcessor.from_pretrained(path, **kw)
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    p = Path(path)
    cfg = (
        json.loads((p / "preprocessor_config.json").read_text())
        if (p / "preprocessor_config.json").is_file()
        else {}
    )
    pcfg = p / "processor_config.json"
    if pcfg.is_file():
        cfg.update(json.loads(pcfg.read_text()).get("image_processor", {}))
    keep = {
        k: cfg[k]
        for k in (
            "patch_size",
            "merge_size",
            "temporal_patch_size",
            "min_pixels",
            "max_pixels",
            "image_mean",
            "image_std",
            "size",
        )
        if k in cfg
    }
    keep.update(kw)
    if "min_pixels" in keep or "max_pixels" in keep:
        keep["size"] = {
            "shortest_edge": keep.pop("min_pixels", 56 * 56),
            "longest_edge": keep.pop("max_pixels", 28 * 28 * 1280),
        }
    image_processor = Qwen2VLImageProcessorPil(**keep)
    tokenizer = AutoTokenizer.from_pretrained(path)
    return ImageOnlyQwenVLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        chat_template=getattr(tokenizer, "chat_template", None),
    )
