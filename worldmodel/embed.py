"""SigLIP and DINO similarity: Code2World's two embedding scores of a predicted next screen.

Code2World reports, beside its judge's scores, how alike the rendered prediction and the real next
screenshot are in the image-embedding space of SigLIP (semantics: what the screen says) and of
DINOv2 (structure: where things sit). Both are the cosine of two image embeddings, here on the
0-1 scale the figures use everywhere (Code2World prints them x100).

Any local checkpoint of either family loads through transformers' Auto classes (nothing is
downloaded: `local_files_only`): a SigLIP model's `get_image_features`, a DINOv2 model's pooled
CLS token (its `pooler_output`). Images go through the checkpoint's own image processor in
batches, on the GPU where there is one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

EMBEDDERS = ("siglip", "dino")


class EmbeddingError(ValueError):
    """A checkpoint folder that does not hold a usable image encoder; the message names it."""


class ImageEmbedder:
    """Unit-length image embeddings from a local SigLIP or DINOv2 checkpoint."""

    def __init__(
        self, path: str | Path, device: str | None = "auto", dtype: str | None = "auto", batch: int = 16
    ):
        from transformers import AutoConfig, AutoImageProcessor, AutoModel

        from .device import resolve_device, resolve_dtype

        path = Path(path)
        if not (path / "config.json").is_file():
            raise EmbeddingError(f"{path}: no config.json (a local SigLIP or DINOv2 checkpoint folder)")
        self.path, self.batch = path, max(1, batch)
        self.device = resolve_device(device)
        try:
            cfg = AutoConfig.from_pretrained(path, local_files_only=True)
            self.processor = AutoImageProcessor.from_pretrained(path, local_files_only=True, use_fast=False)
            self.model = AutoModel.from_pretrained(
                path, local_files_only=True, dtype=resolve_dtype(dtype, self.device)
            )
        except (OSError, ValueError, KeyError) as e:
            raise EmbeddingError(f"{path}: {str(e).splitlines()[0]}") from None
        self.kind = cfg.model_type
        self.model.to(self.device).eval()

    def embed(self, images: Sequence[Image.Image | np.ndarray]) -> np.ndarray:
        """One unit-length row per image (float32)."""
        import torch

        rows = []
        for s in range(0, len(images), self.batch):
            chunk = [_rgb(im) for im in images[s : s + self.batch]]
            px = self.processor(images=chunk, return_tensors="pt")["pixel_values"]
            px = px.to(self.device, dtype=next(self.model.parameters()).dtype)
            with torch.inference_mode():
                feats = self._features(px)
            feats = torch.nn.functional.normalize(feats.float(), dim=-1)
            rows.append(feats.cpu().numpy())
        return np.concatenate(rows) if rows else np.zeros((0, 0), np.float32)

    def _features(self, px):
        if hasattr(self.model, "get_image_features"):  # SigLIP (and CLIP-like) dual encoders
            out = self.model.get_image_features(pixel_values=px)
            return out if not hasattr(out, "pooler_output") else out.pooler_output
        out = self.model(pixel_values=px)
        pooled = getattr(out, "pooler_output", None)  # DINOv2: the layer-normed CLS token
        return pooled if pooled is not None else out.last_hidden_state[:, 0]

    def similarity(self, a: Sequence, b: Sequence) -> list[float]:
        """Cosine similarity of a[i] and b[i] for each i."""
        if len(a) != len(b):
            raise ValueError(f"{len(a)} predictions against {len(b)} references")
        if not a:
            return []
        ea, eb = self.embed(a), self.embed(b)
        return [float(x) for x in (ea * eb).sum(axis=1)]

    def close(self) -> None:
        self.model = None


def _rgb(im) -> Image.Image:
    if isinstance(im, np.ndarray):
        im = Image.fromarray(im)
    return im.convert("RGB")


def load_embedders(
    paths: dict[str, str | Path | None], device: str | None = "auto"
) -> dict[str, ImageEmbedder]:
    """{name: ImageEmbedder} for each of `EMBEDDERS` given a path (a missing one is left out)."""
    unknown = set(paths) - set(EMBEDDERS)
    if unknown:
        raise EmbeddingError(
            f"no embedding score named {', '.join(sorted(unknown))} (have {', '.join(EMBEDDERS)})"
        )
    return {k: ImageEmbedder(p, device) for k, p in paths.items() if p}
