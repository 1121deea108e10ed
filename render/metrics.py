"""Fidelity of a rendered prediction to the real next screen.

Pixel metrics (SSIM, PSNR, LPIPS) say whether it looks right; text F1 and
element-box F1 say whether the right content sits in the right places, which
pixels alone under-weight on mostly-white GUI screens.
"""

from __future__ import annotations

import io
import os
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from .renderer import Box


class MetricUnavailable(RuntimeError):
    """A metric that cannot be computed here (missing weights or package); never reported as 0."""


def to_array(img) -> np.ndarray:
    """RGB uint8 HxWx3 from an array, PIL image, PNG bytes, a datasets {"bytes": ...} cell or a path."""
    if isinstance(img, dict) and img.get("bytes"):
        return to_array(img["bytes"])
    if isinstance(img, np.ndarray):
        a = img
    elif isinstance(img, Image.Image):
        a = np.asarray(img.convert("RGB"))
    elif isinstance(img, (bytes, bytearray)):
        a = np.asarray(Image.open(io.BytesIO(img)).convert("RGB"))
    elif isinstance(img, (str, Path)):
        a = np.asarray(Image.open(img).convert("RGB"))
    elif hasattr(img, "image"):
        return to_array(img.image)
    else:
        raise TypeError(f"cannot read an image from {type(img).__name__}")
    if a.ndim == 2:
        a = np.stack([a] * 3, axis=-1)
    if a.ndim != 3 or a.shape[2] not in (3, 4):
        raise ValueError(f"image must be HxWx3, got shape {a.shape}")
    return np.ascontiguousarray(a[:, :, :3]).astype(np.uint8)


def _pair(pred, ref) -> tuple[np.ndarray, np.ndarray]:
    a, b = to_array(pred), to_array(ref)
    if a.shape != b.shape:
        a = np.asarray(Image.fromarray(a).resize((b.shape[1], b.shape[0]), Image.BILINEAR))
    return a, b


SSIM_WIN = 7
_C1, _C2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2


def ssim(pred, ref) -> float:
    """Structural similarity in [-1, 1] (1 = identical); pred is resized to ref's size.

    The same statistic as skimage's `structural_similarity(channel_axis=2, data_range=255,
    win_size=7)` (uniform window, sample covariance, borders cropped), in float32 with scipy's
    separable filter: about twice as fast, which GRPO's per-completion rewards feel.
    """
    from scipy.ndimage import uniform_filter

    if isinstance(pred, np.ndarray) and isinstance(ref, np.ndarray) and pred.dtype == ref.dtype == np.float32:
        a, b = pred, ref  # already-blurred float images: no rounding back to 8 bits
    else:
        a, b = _pair(pred, ref)
    win = min(SSIM_WIN, a.shape[0], a.shape[1])
    win -= 1 - win % 2
    x, y = a.astype(np.float32), b.astype(np.float32)

    def mean(z):
        return uniform_filter(z, size=(win, win, 1), mode="reflect")

    mx, my = mean(x), mean(y)
    cov = win * win / (win * win - 1)
    sxx = (mean(x * x) - mx * mx) * cov
    syy = (mean(y * y) - my * my) * cov
    sxy = (mean(x * y) - mx * my) * cov
    s = ((2 * mx * my + _C1) * (2 * sxy + _C2)) / ((mx * mx + my * my + _C1) * (sxx + syy + _C2))
    p = (win - 1) // 2
    return float(s[p : s.shape[0] - p, p : s.shape[1] - p].mean(dtype=np.float64))


def ssim_many(pairs: Sequence[tuple], workers: int = 0, metric=None) -> list[float]:
    """SSIM (or `metric`, e.g. blur_ssim) of many (pred, ref) pairs, spread over threads
    (scipy's filters release the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    fn = metric or ssim
    workers = workers or min(len(pairs), os.cpu_count() or 1)
    if workers <= 1 or len(pairs) <= 1:
        return [fn(a, b) for a, b in pairs]
    with ThreadPoolExecutor(workers) as ex:
        return list(ex.map(lambda ab: fn(*ab), pairs))


# Shift-tolerant structure: SSIM after a Gaussian blur of this many pixels. Full-resolution SSIM
# punishes a sub-pixel shift of a textured background more than a missing texture; a 1-pixel
# blur (measured on a todo app: 0.618 -> 0.976 for a capture that looks identical, while one
# missing its texture stays lower at 0.924) scores what a person sees.
BLUR_SIGMA = 1.0
# A pixel is "off" when a channel differs by more than this many levels.
PIXEL_TOL = 24


def blur_ssim(pred, ref, sigma: float = BLUR_SIGMA) -> float:
    """SSIM of both images after a Gaussian blur of `sigma` pixels (0 = plain SSIM)."""
    from scipy.ndimage import gaussian_filter

    a, b = _pair(pred, ref)
    if sigma <= 0:
        return ssim(a, b)
    blur = (sigma, sigma, 0)
    return ssim(gaussian_filter(a.astype(np.float32), blur), gaussian_filter(b.astype(np.float32), blur))


def pixels_off(pred, ref, tol: int = PIXEL_TOL) -> float:
    """Fraction of pixels where some channel differs by more than `tol` levels (0 = identical)."""
    a, b = _pair(pred, ref)
    return float((np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2) > tol).mean())


def fidelity(pred, ref) -> dict[str, float]:
    """The three pixel measures reported together: SSIM, blurred SSIM, share of pixels off."""
    a, b = _pair(pred, ref)
    return {"ssim": ssim(a, b), "blur_ssim": blur_ssim(a, b), "pixels_off": pixels_off(a, b)}


def psnr(pred, ref) -> float:
    """Peak signal-to-noise ratio in dB, capped at 100 for identical images."""
    a, b = _pair(pred, ref)
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return 100.0 if mse == 0 else float(min(100.0, 10 * np.log10(255.0**2 / mse)))


class LPIPS:
    """Learned perceptual distance (lower is closer) from the lpips package.

    The AlexNet backbone comes from a local torchvision state dict (the file
    torchvision would download, alexnet-owt-7be5be79.pth): pass its path or set
    WM_LPIPS_WEIGHTS. Nothing is downloaded.
    """

    def __init__(self, weights: str | os.PathLike | None = None, device: str = "cpu"):
        path = weights or os.environ.get("WM_LPIPS_WEIGHTS")
        if not path or not Path(path).is_file():
            raise MetricUnavailable(
                "LPIPS needs local AlexNet weights: set WM_LPIPS_WEIGHTS to a torchvision "
                f"alexnet state dict (got {path!r})"
            )
        try:
            import lpips
            import torch
        except Exception as e:  # torchvision missing or built for another torch
            raise MetricUnavailable(
                f"LPIPS needs the lpips package and a torchvision matching torch ({e}); "
                "pip install 'worldmodel[lpips]' with a matching torch/torchvision pair"
            ) from e
        self.torch = torch
        self.model = lpips.LPIPS(net="alex", pretrained=True, pnet_rand=True, verbose=False)
        state = torch.load(path, map_location="cpu", weights_only=True)
        net = self.model.net
        slices = [getattr(net, f"slice{i}") for i in range(1, 6)]
        for key, value in state.items():
            m = re.fullmatch(r"features\.(\d+)\.(weight|bias)", key)
            if not m:
                continue
            for s in slices:
                if m.group(1) in s._modules:
                    getattr(s._modules[m.group(1)], m.group(2)).data.copy_(value)
        self.device = device
        self.model.to(device).eval()

    def __call__(self, pred, ref) -> float:
        a, b = _pair(pred, ref)
        t = self.torch

        def tensor(x):
            return t.from_numpy(x).permute(2, 0, 1)[None].float().div(127.5).sub(1).to(self.device)

        with t.no_grad():
            return float(self.model(tensor(a), tensor(b)).item())


_TOKEN = re.compile(r"\w+", re.UNICODE)


def visible_text(html: str) -> list[str]:
    """Lower-cased word tokens a reader would see (no script/style/head), plus input values.
    A shadow root the capture wrote out (`<template shadowrootmode>`) is drawn, so its text
    counts; any other template is not."""
    from bs4 import BeautifulSoup, CData, NavigableString
    from bs4.element import TemplateString

    soup = BeautifulSoup(html or "", "html.parser")
    for t in soup(["script", "style", "head", "template", "noscript"]):
        if not t.decomposed and not (t.name == "template" and t.has_attr("shadowrootmode")):
            t.decompose()
    parts = [soup.get_text(" ", types=(NavigableString, CData, TemplateString))]
    for el in soup.find_all(["input", "textarea"]):
        parts.append(el.get("value") or el.get("placeholder") or "")
    return _TOKEN.findall(" ".join(parts).lower())


def _f1(tp: float, n_pred: int, n_ref: int) -> float:
    if n_pred == 0 and n_ref == 0:
        return 1.0
    if tp == 0:
        return 0.0
    p, r = tp / n_pred, tp / n_ref
    return 2 * p * r / (p + r)


def text_f1(pred_html: str, ref_html: str) -> float:
    """Bag-of-words F1 of the visible text of two documents."""
    a, b = Counter(visible_text(pred_html)), Counter(visible_text(ref_html))
    return _f1(sum((a & b).values()), sum(a.values()), sum(b.values()))


def _iou(a: Box, b: Box) -> float:
    ix = max(0.0, min(a.x + a.w, b.x + b.w) - max(a.x, b.x))
    iy = max(0.0, min(a.y + a.h, b.y + b.h) - max(a.y, b.y))
    inter = ix * iy
    union = a.w * a.h + b.w * b.h - inter
    return inter / union if union > 0 else 0.0


def element_f1(pred: Sequence[Box], ref: Sequence[Box], iou: float = 0.5) -> float:
    """F1 of laid-out elements: a match overlaps by IoU >= `iou`, greedily best-first.

    Boxes come from RenderResult.boxes, so both documents are compared as laid out.
    """
    pairs = sorted(((_iou(p, r), i, j) for i, p in enumerate(pred) for j, r in enumerate(ref)), reverse=True)
    used_p, used_r, tp = set(), set(), 0
    for v, i, j in pairs:
        if v < iou:
            break
        if i in used_p or j in used_r:
            continue
        used_p.add(i)
        used_r.add(j)
        tp += 1
    return _f1(tp, len(pred), len(ref))


# The least span a normalised gain divides by: where the copy is already within this of perfect
# (nothing changed), a prediction that keeps the screen scores 0 and one that changes it is
# judged on this scale instead of on a span of almost nothing.
MIN_SPAN = 0.02


def normalised_gain(score: float, copy: float, blank: float, min_span: float = MIN_SPAN) -> float:
    """A score placed between the two baselines of its transition, in [-1, 1]: 1 is a perfect
    prediction, 0 keeps the screen (the copy), -1 is as far below the copy as a blank page is
    (or further). Above the copy it is the share of the copy's shortfall made up; below it, the
    share of the copy-to-blank distance lost. A raw SSIM pays 0.73 for a blank page on the test
    split and 0.82 for the copy (benchmarks/RESULTS.md), which leaves an advantage nothing to
    rank; this pays 0 and -1."""
    if score >= copy:
        return float(min(1.0, (score - copy) / max(1.0 - copy, min_span)))
    return float(max(-1.0, (score - copy) / max(copy - blank, min_span)))


def blank_like(ref) -> np.ndarray:
    """A white page the size of `ref`: what an empty or unrenderable answer shows."""
    return np.full_like(to_array(ref), 255)


def element_tags(html: str) -> list[str]:
    """The tag names of the elements a reader would see (body only, no script/style/template)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html or "", "html.parser")
    for t in soup(["script", "style", "head", "template", "noscript"]):
        t.decompose()
    root = soup.body or soup
    return [el.name for el in root.find_all(True)]


def content_f1(pred_html: str, ref_html: str) -> float:
    """What the page says and holds: the mean of the visible words' F1 (text_f1) and the F1 of
    the bag of its elements' tag names. Both halves punish missing (recall) and invented
    (precision) words and elements, which pixels barely see on a mostly white screen."""
    a, b = Counter(element_tags(pred_html)), Counter(element_tags(ref_html))
    tags = _f1(sum((a & b).values()), sum(a.values()), sum(b.values()))
    return (text_f1(pred_html, ref_html) + tags) / 2


def change_gain(current, pred, ref, tol: int = PIXEL_TOL) -> float | None:
    """Whether the predicted change lands where, and as, the real one did, in [-1, 1]: the pixels
    the prediction changed (current -> pred) to what the real next screen shows there, less those
    it changed to anything else, over the pixels the real transition changed plus those wrong
    ones. 1 is the real change exactly, 0 keeping the screen, -1 a change that is all wrong (a
    blank page over a screen whose real change was small). None where the real transition
    changed no pixel (nothing to land)."""
    c, r = _pair(current, ref)
    p, _ = _pair(pred, ref)
    c, r, p = (x.astype(np.int16) for x in (c, r, p))

    def differs(x, y):
        return np.abs(x - y).max(axis=2) > tol

    real, made, wrong = differs(c, r), differs(c, p), differs(p, r)
    n_real = int(real.sum())
    if not n_real:
        return None
    good = int((made & ~wrong).sum())  # changed as the real one did (so only where it changed)
    bad = int((made & wrong).sum())  # changed to something the real screen does not show
    return (good - bad) / (n_real + bad)


def copy_baseline(current, next_screen) -> dict[str, float]:
    """What predicting 'nothing changes' scores: the bar a world model has to clear."""
    return {"ssim": ssim(current, next_screen), "psnr": psnr(current, next_screen)}
