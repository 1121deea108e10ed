"""One score of one prediction against its transition: what `wm eval` reports, per transition.

Every figure the evaluation prints about a prediction is a mean of these per-transition values,
and each is judged against what it had to beat on its own transition (`Reference`: the screen
kept, a blank page, the real next screen's element boxes), computed once per transition however
many models are scored. The metrics themselves live in render/metrics.py; this module only says
which ones make up a prediction's score and how a failed render counts (the worst of each).

The parts below `score` are the same rules for callers that hold pixels and HTML but no
Prediction: GRPO's rewards (training/rewards.py), the edit gate's calibration and the choice of
a `follow` target (training/). A failed render is None there and scores the worst.
"""

from __future__ import annotations

from dataclasses import dataclass

from render import RenderError
from render.metrics import (
    blank_like,
    change_gain,
    content_f1,
    element_f1,
    fidelity,
    normalised_gain,
    ssim,
    ssim_many,
    text_f1,
)

from .types import Prediction, Transition


@dataclass(frozen=True)
class Reference:
    """What a prediction of `t` is scored against: the screenshot kept (the copy baseline), a
    blank page, the HTML kept (content F1), whether any pixel changed, the real boxes."""

    copy: dict  # fidelity() of the current screenshot against the next one
    blank_ssim: float
    copy_content: tuple[float, float] | None  # (content F1 kept, blank) where both HTMLs are known
    changes: bool  # the real transition changed some pixel (change_gain has something to land)
    boxes: list | None  # the real next screen's element boxes, where its HTML renders

    @classmethod
    def of(cls, t: Transition, rendered=None) -> Reference:
        """`rendered`: the real next screen's HTML rendered (a RenderResult or RenderError)."""
        nxt = t.next_screen.array
        content = (
            content_baselines(t.screen.html, t.next_screen.html)
            if t.screen.html and t.next_screen.html
            else None
        )
        boxes = (
            None
            if rendered is None or isinstance(rendered, RenderError) or not t.next_screen.html
            else rendered.boxes
        )
        return cls(
            fidelity(t.screen.array, nxt),
            blank_score(nxt),
            content,
            changes(t.screen.array, nxt),
            boxes,
        )


def references(transitions, renderer) -> list[Reference]:
    """Each transition's Reference, the real next screens rendered in one batch."""
    ref = renderer.render_many([(t.next_screen.html or "", t.next_screen.viewport()) for t in transitions])
    return [Reference.of(t, r) for t, r in zip(transitions, ref)]


def score(p: Prediction, t: Transition, ref: Reference, lpips=None) -> dict[str, float | None]:
    """The prediction's score on `t`: fidelity (SSIM, blurred SSIM, pixels off; LPIPS with
    `lpips`), its gain over the screenshot kept, the normalised gains GRPO is rewarded with
    (sem, content, change), text and element F1, and what it cost. A value is None where it
    does not apply to this transition (no next HTML, no pixel changed, ...)."""
    nxt = t.next_screen.array
    fid = pixels(p.image if p.ok else None, nxt)
    sc = fid["ssim"]
    out: dict[str, float | None] = {
        "ssim": sc,
        "blur_ssim": fid["blur_ssim"],
        "pixels_off": fid["pixels_off"],
        "gain": sc - ref.copy["ssim"],
        "sem_gain": sem_gain(sc if p.ok else None, ref.copy["ssim"], ref.blank_ssim),
        "content_gain": None,
        "change_gain": None,
        "lpips": None if lpips is None else (lpips(p.image, nxt) if p.ok else 1.0),
        "text_f1": text_score(p.html, t.next_screen.html),
        "element_f1": None if ref.boxes is None else (element_f1(p.boxes, ref.boxes) if p.ok else 0.0),
        "failed": 0.0 if p.ok else 1.0,
        "latency_s": p.timings["generate_s"] + p.timings["render_s"],
        "generated_chars": float(len(p.edit if p.edit is not None else (p.completion or ""))),
        "edit_failed": 1.0 if p.edit is not None and p.edit_error is not None else 0.0,
    }
    if ref.copy_content is not None:
        out["content_gain"] = content_gain(p.html if p.ok else None, t.next_screen.html, *ref.copy_content)
    if ref.changes:
        out["change_gain"] = change_score(t.screen.array, p.image if p.ok else None, nxt)
    return out


def pixels(image, next_screen) -> dict[str, float]:
    """A render's fidelity to the real next screen (SSIM, blurred SSIM, pixels off); the worst of
    each for a failed render (None)."""
    if image is None:
        return {"ssim": 0.0, "blur_ssim": 0.0, "pixels_off": 1.0}
    return fidelity(image, next_screen)


def text_score(html: str, next_html: str | None) -> float | None:
    """The visible words' F1 against the real next HTML; None where that was not recorded."""
    return text_f1(html, next_html) if next_html else None


def blank_score(next_screen, metric=ssim) -> float:
    """`metric` of a white page against the next screen: the bottom of the normalised gains."""
    return metric(blank_like(next_screen), next_screen)


def pixel_baselines(screen, next_screen, metric=ssim) -> tuple[float, float]:
    """(the screen kept, a blank page)'s `metric` against the next screen: what a render's pixel
    score is placed between (`sem_gain`)."""
    copy, blank = ssim_many([(screen, next_screen), (blank_like(next_screen), next_screen)], metric=metric)
    return copy, blank


def pixel_scores(images, next_screens, metric=ssim, lpips=None, ssim_share: float = 1.0) -> list[float]:
    """GRPO's raw pixel score of each render against its next screen, in [0, 1]: `metric`
    (clipped at 0), with a share 1 - `ssim_share` of 1 - LPIPS where `lpips` is given."""
    scores = ssim_many(list(zip(images, next_screens)), metric=metric)
    out = []
    for img, nxt, s in zip(images, next_screens, scores):
        v = ssim_share * max(0.0, s)
        if lpips is not None and ssim_share < 1.0:
            v += (1 - ssim_share) * max(0.0, 1.0 - lpips(img, nxt))
        out.append(v)
    return out


def sem_gain(value: float | None, copy: float, blank: float) -> float:
    """A pixel score's normalised gain over keeping the screen (`copy`, down to `blank`): 1
    perfect, 0 the screen kept, -1 a blank page; -1 for a failed render (None)."""
    return -1.0 if value is None else normalised_gain(value, copy, blank)


def content_baselines(kept_html: str, next_html: str) -> tuple[float, float]:
    """(the HTML kept, a blank page)'s content F1 against the next HTML; the HTML kept scores as
    the blank page where it is not known."""
    blank = content_f1("", next_html)
    return (content_f1(kept_html, next_html) if kept_html else blank), blank


def content_gain(html: str | None, next_html: str, copy: float, blank: float) -> float:
    """Content F1's normalised gain over the HTML kept; -1 for a failed render (None)."""
    return -1.0 if html is None else normalised_gain(content_f1(html, next_html), copy, blank)


def changes(screen, next_screen) -> bool:
    """Whether the real transition changed some pixel (a change gain has something to land)."""
    return change_gain(screen, screen, next_screen) is not None


def change_score(screen, image, next_screen) -> float:
    """Whether the render changed the screen where and as the real next screen did (change_gain:
    1 the real change, 0 the screen kept, -1 all wrong); -1 for a failed render (None). Asked
    only where the real transition `changes`."""
    return -1.0 if image is None else float(change_gain(screen, image, next_screen) or 0.0)
