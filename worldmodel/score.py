"""One score of one prediction against its transition: what `wm eval` reports, per transition.

Every figure the evaluation prints about a prediction is a mean of these per-transition values,
and each is judged against what it had to beat on its own transition (`Reference`: the screen
kept, a blank page, the real next screen's element boxes), computed once per transition however
many models are scored. The metrics themselves live in render/metrics.py; this module only says
which ones make up a prediction's score and how a failed render counts (the worst of each).
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
            (content_f1(t.screen.html, t.next_screen.html), content_f1("", t.next_screen.html))
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
            ssim(blank_like(nxt), nxt),
            content,
            change_gain(t.screen.array, t.screen.array, nxt) is not None,
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
    fid = fidelity(p.image, nxt) if p.ok else None
    sc = fid["ssim"] if fid else 0.0
    out: dict[str, float | None] = {
        "ssim": sc,
        "blur_ssim": fid["blur_ssim"] if fid else 0.0,
        "pixels_off": fid["pixels_off"] if fid else 1.0,
        "gain": sc - ref.copy["ssim"],
        "sem_gain": normalised_gain(sc, ref.copy["ssim"], ref.blank_ssim) if p.ok else -1.0,
        "content_gain": None,
        "change_gain": None,
        "lpips": None if lpips is None else (lpips(p.image, nxt) if p.ok else 1.0),
        "text_f1": text_f1(p.html, t.next_screen.html) if t.next_screen.html else None,
        "element_f1": None if ref.boxes is None else (element_f1(p.boxes, ref.boxes) if p.ok else 0.0),
        "failed": 0.0 if p.ok else 1.0,
        "latency_s": p.timings["generate_s"] + p.timings["render_s"],
        "generated_chars": float(len(p.edit if p.edit is not None else (p.completion or ""))),
        "edit_failed": 1.0 if p.edit is not None and p.edit_error is not None else 0.0,
    }
    if ref.copy_content is not None:
        out["content_gain"] = (
            normalised_gain(content_f1(p.html, t.next_screen.html), *ref.copy_content) if p.ok else -1.0
        )
    if ref.changes:
        out["change_gain"] = (change_gain(t.screen.array, p.image, nxt) or 0.0) if p.ok else -1.0
    return out
