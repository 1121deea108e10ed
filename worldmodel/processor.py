"""Load the processor of a Qwen-VL checkpoint: the one the checkpoint holds, on any machine.

Qwen-VL processors carry a video processor that needs torchvision. The world model only ever
sees images, so the checkpoints this project writes (`build_tiny`, `wm train` from one of them)
hold an image-only processor (`ImageOnlyQwenVLProcessor`, below) and no video processor. Which
processor a checkpoint gets is decided by what it holds, never by whether torchvision happens to
import: `AutoProcessor` does not know the image-only class and, where torchvision imports, would
hand back a bare tokenizer (trl then calls the model text-only and the hf backend fails). A real
checkpoint that holds a video processor (e.g. Qwen3-VL-8B-Instruct) gets the stock
`AutoProcessor`, and the image-only one only where the stock one cannot be built here (no
torchvision, or one built for another torch).
"""

from __future__ import annotations

import json
from pathlib import Path

from transformers import AutoProcessor, AutoTokenizer, Qwen3VLProcessor
from transformers.processing_utils import ProcessorMixin

# a checkpoint holding any of these has a video processor, so its stock processor is complete
VIDEO_FILES = ("video_preprocessor_config.json",)


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


def _json(path: Path) -> dict:
    try:
        out = json.loads(path.read_text()) if path.is_file() else {}
    except (OSError, ValueError):
        return {}
    return out if isinstance(out, dict) else {}


def holds_video_processor(path: str | Path) -> bool:
    """Whether the checkpoint at `path` holds a stock processor, video part and all: a video
    processor config, or a processor class named in its configs that is not the image-only one
    (e.g. an older Qwen2.5-VL checkpoint, whose video processor is built from its image settings)."""
    p = Path(path)
    if any((p / f).is_file() for f in VIDEO_FILES):
        return True
    cfg = _json(p / "processor_config.json")
    if "video_processor" in cfg and cfg.get("processor_class") != ImageOnlyQwenVLProcessor.__name__:
        return True
    named = {
        _json(p / f).get("processor_class")
        for f in ("processor_config.json", "preprocessor_config.json", "tokenizer_config.json")
    }
    return bool(named - {None, ImageOnlyQwenVLProcessor.__name__})


def load_processor(path: str | Path, min_pixels: int | None = None, max_pixels: int | None = None):
    """The checkpoint's processor: the stock one where it holds a video processor, else image-only."""
    kw = {}
    if min_pixels:
        kw["min_pixels"] = min_pixels
    if max_pixels:
        kw["max_pixels"] = max_pixels
    if holds_video_processor(path):
        try:
            stock = AutoProcessor.from_pretrained(path, local_files_only=True, **kw)
        except (ImportError, ModuleNotFoundError, OSError, ValueError, RuntimeError):
            stock = None  # its video processor cannot be built here (no usable torchvision)
        if stock is not None and hasattr(stock, "image_processor") and hasattr(stock, "tokenizer"):
            return stock
    return image_only_processor(path, **kw)


def image_only_processor(path: str | Path, **kw) -> ImageOnlyQwenVLProcessor:
    """The image-only processor built from the checkpoint's image-processor settings and tokenizer."""
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    p = Path(path)
    cfg = _json(p / "preprocessor_config.json")
    cfg.update(_json(p / "processor_config.json").get("image_processor", {}))
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
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    return ImageOnlyQwenVLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        chat_template=getattr(tokenizer, "chat_template", None) or _chat_template(p),
    )


def _chat_template(p: Path) -> str | None:
    """A checkpoint's chat template where its tokenizer does not carry it (a processor-level file)."""
    if (p / "chat_template.jinja").is_file():
        return (p / "chat_template.jinja").read_text()
    return _json(p / "chat_template.json").get("chat_template")
