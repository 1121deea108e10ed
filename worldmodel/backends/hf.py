"""A local transformers VLM (Qwen-VL family) loaded from a path; device and dtype are configuration."""

from __future__ import annotations

from pathlib import Path

import torch

from ..prompt import build_messages
from .base import Query

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16, "auto": "auto"}


def pick_device(device: str = "auto") -> str:
    if device != "auto":
        return device
    return "cuda" if torch.cuda.is_available() else "cpu"


class TransformersBackend:
    def __init__(
        self,
        path: str | Path,
        device: str = "auto",
        dtype: str = "auto",
        max_new_tokens: int = 2048,
        temperature: float = 0.0,
        with_html: bool = True,
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
        self.name = f"hf:{p.name}"
        self.device = pick_device(device)
        if dtype not in DTYPES:
            raise ValueError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
        torch_dtype = DTYPES[dtype]
        if torch_dtype == "auto":
            torch_dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        self.model = model or AutoModelForImageTextToText.from_pretrained(p, dtype=torch_dtype).to(
            self.device
        )
        self.model.eval()
        self.processor = processor or load_processor(p)
        self.max_new_tokens, self.temperature, self.with_html = max_new_tokens, temperature, with_html

    @torch.no_grad()
    def complete(self, queries: list[Query]) -> list[str]:
        out = []
        for q in queries:
            messages, image = build_messages(q.screen, q.action, q.goal, self.with_html)
            text = self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            inputs = self.processor(text=[text], images=[image], return_tensors="pt").to(self.device)
            gen = dict(max_new_tokens=self.max_new_tokens, do_sample=self.temperature > 0)
            if self.temperature > 0:
                gen["temperature"] = self.temperature
            ids = self.model.generate(**inputs, **gen)
            new = ids[0, inputs["input_ids"].shape[1] :]
            out.append(self.processor.tokenizer.decode(new, skip_special_tokens=True))
        return out
