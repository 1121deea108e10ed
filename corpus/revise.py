"""Visual-feedback revision: render a screen's HTML, score it against the screenshot, revise.

A translation (rule-based or model-written) that does not look like its
screenshot teaches the world model the wrong thing. So each translation is
rendered and scored; below the threshold a coder is asked to revise it, and
what never passes is dropped and counted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from bs4 import BeautifulSoup
from PIL import Image

from render import Renderer, RenderError, Viewport
from render.metrics import fidelity, psnr

# A coder revises html given the screenshot and the last round's feedback.
Coder = Callable[[Image.Image, str, dict], str]


@dataclass
class Revision:
    html: str
    passed: bool
    rounds: list[dict] = field(default_factory=list)

    @property
    def score(self) -> float:
        return self.rounds[-1]["ssim"] if self.rounds else float("nan")


def score_html(html: str, screenshot: Image.Image, renderer: Renderer, viewport: Viewport) -> dict:
    try:
        res = renderer.render(html, viewport)
    except RenderError as e:
        return {"ssim": -1.0, "blur_ssim": -1.0, "pixels_off": 1.0, "psnr": 0.0, "error": str(e)}
    return {**fidelity(res.image, screenshot), "psnr": psnr(res.image, screenshot)}


def revise_until(
    screenshot: Image.Image,
    html: str,
    coder: Coder,
    renderer: Renderer,
    viewport: Viewport,
    threshold: float = 0.8,
    max_rounds: int = 2,
) -> Revision:
    """Score, and revise while below `threshold`, keeping every round's score."""
    rounds = []
    best_html, best = html, None
    for r in range(max_rounds + 1):
        fb = score_html(html, screenshot, renderer, viewport)
        fb["round"] = r
        rounds.append(fb)
        if best is None or fb["ssim"] > best:
            best_html, best = html, fb["ssim"]
        if fb["ssim"] >= threshold or r == max_rounds:
            break
        html = coder(screenshot, html, fb)
    return Revision(best_html, best >= threshold, rounds)


_BOX = re.compile(
    r"left:\s*(-?[\d.]+)px;\s*top:\s*(-?[\d.]+)px;\s*width:\s*([\d.]+)px;\s*height:\s*([\d.]+)px"
)


def sample_colours(screenshot: Image.Image, html: str, feedback: dict, scale: float = 1.0) -> str:
    """Rule-based coder: paint each absolutely placed box with the screenshot's colours there.

    The structure-only translation of an accessibility tree knows where things
    are but not what colour they are; the screenshot does.
    """
    img = np.asarray(screenshot.convert("RGB"))
    soup = BeautifulSoup(html, "html.parser")

    def colour(x0, y0, x1, y1, pick):
        x0, y0 = max(0, int(x0 * scale)), max(0, int(y0 * scale))
        x1, y1 = min(img.shape[1], int(x1 * scale)), min(img.shape[0], int(y1 * scale))
        if x1 <= x0 or y1 <= y0:
            return None
        px = img[y0:y1, x0:x1].reshape(-1, 3)
        vals, counts = np.unique(px // 8 * 8, axis=0, return_counts=True)
        order = np.argsort(-counts)
        c = vals[order[0]] if pick == "bg" or len(order) < 2 else vals[order[1]]
        return "rgb({},{},{})".format(*(int(v) + 4 for v in c))

    root = soup.find(attrs={"data-root": True}) or soup.body
    if root is not None:
        bg = colour(0, 0, img.shape[1] / scale, img.shape[0] / scale, "bg")
        root["style"] = (root.get("style") or "") + f";background:{bg}"
    for el in soup.find_all(style=_BOX):
        x, y, w, h = (float(v) for v in _BOX.search(el["style"]).groups())
        bg = colour(x, y, x + w, y + h, "bg")
        fg = colour(x, y, x + w, y + h, "fg")
        el["style"] = el["style"] + f";background:{bg};color:{fg}"
    return str(soup)


REVISE_GOAL = (
    "Rewrite the current screen's HTML so that it renders exactly like the screenshot "
    "(last render scored SSIM {ssim:.3f}); the screen does not change."
)


def backend_coder(model, renderer: Renderer | None = None) -> Coder:
    """Use any world model (a spec, a Backend or a WorldModel) as the reviser: 'after waiting, the
    screen is the same' asks it to rewrite the draft HTML it is shown, with the screenshot beside
    it, as a whole document."""
    from worldmodel import Action, Screen, WorldModel

    wm = WorldModel.load(model, renderer)

    def coder(screenshot: Image.Image, html: str, feedback: dict) -> str:
        goal = REVISE_GOAL.format(ssim=feedback.get("ssim", float("nan")))
        return wm.predict(Screen(screenshot, html=html), Action("wait"), goal, "document").html

    return coder
