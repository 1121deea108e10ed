import numpy as np
import pytest

from render import Box
from render.metrics import (
    LPIPS,
    MetricUnavailable,
    copy_baseline,
    element_f1,
    psnr,
    ssim,
    text_f1,
    visible_text,
)


def _screen(seed=0):
    rng = np.random.default_rng(seed)
    img = np.full((120, 80, 3), 240, np.uint8)
    for _ in range(6):
        y, x = rng.integers(0, 100), rng.integers(0, 60)
        img[y : y + 15, x : x + 20] = rng.integers(0, 255, 3)
    return img


def test_identical_images_score_one():
    a = _screen()
    assert ssim(a, a) == pytest.approx(1.0)
    assert psnr(a, a) == 100.0


def test_shifted_and_changed_images_score_lower():
    a = _screen()
    shifted = np.roll(a, 5, axis=1)
    changed = a.copy()
    changed[40:80, 20:60] = 0
    assert ssim(a, shifted) < 0.95
    assert ssim(a, changed) < ssim(a, a)
    assert psnr(a, changed) < 30
    assert ssim(a, _screen(1)) < ssim(a, shifted) or ssim(a, _screen(1)) < 0.9


def test_sizes_are_reconciled():
    a = _screen()
    big = np.kron(a, np.ones((2, 2, 1), np.uint8))
    assert ssim(big, a) > 0.8


def test_text_f1():
    assert text_f1("<p>Hello world</p>", "<div>hello <b>World</b></div>") == 1.0
    assert text_f1("<p>Hello</p><script>var world</script>", "<p>hello world</p>") == pytest.approx(2 / 3)
    assert text_f1("<p>a</p>", "<p>b</p>") == 0.0
    assert text_f1("<input value='typed text'>", "<p>typed text</p>") == 1.0
    # a shadow root the capture wrote out is drawn, its stylesheet and an inert template are not
    shadow = (
        '<my-card><template shadowrootmode="open"><style>p{color:red}</style><p>Inside</p><slot></slot>'
        "</template>light</my-card><template><p>inert</p></template>"
    )
    assert visible_text(shadow) == ["inside", "light"]
    assert text_f1(shadow, "<p>inside light</p>") == 1.0


def test_element_f1():
    ref = [Box("button", "OK", 0, 0, 50, 20), Box("p", "x", 0, 40, 100, 20)]
    assert element_f1(ref, ref) == 1.0
    moved = [Box("button", "OK", 2, 1, 50, 20), Box("p", "x", 0, 200, 100, 20)]
    assert element_f1(moved, ref) == pytest.approx(0.5)
    assert element_f1([], ref) == 0.0
    assert element_f1([], []) == 1.0


def test_copy_baseline_is_perfect_when_nothing_changes():
    a = _screen()
    assert copy_baseline(a, a)["ssim"] == pytest.approx(1.0)
    assert copy_baseline(a, _screen(3))["ssim"] < 1.0


def test_lpips_without_weights_says_why(monkeypatch):
    monkeypatch.delenv("WM_LPIPS_WEIGHTS", raising=False)
    with pytest.raises(MetricUnavailable, match="WM_LPIPS_WEIGHTS"):
        LPIPS()
    with pytest.raises(MetricUnavailable, match="no/such/alexnet.pth"):
        LPIPS("no/such/alexnet.pth")


def test_blurred_ssim_forgives_a_shift_that_plain_ssim_punishes():
    from render.metrics import blur_ssim, pixels_off, ssim

    rng = np.random.default_rng(0)
    # a fine background texture, as on the todo apps: a 1-pixel shift vs the texture missing
    tex = (rng.random((120, 120, 1)) * 60 + 180).astype(np.uint8).repeat(3, 2)
    shifted, flat = np.roll(tex, 1, axis=1), np.full_like(tex, 210)
    assert ssim(shifted, tex) < ssim(flat, tex)  # plain SSIM prefers the missing texture
    assert blur_ssim(shifted, tex) > blur_ssim(flat, tex)  # the blurred one does not
    assert pixels_off(tex, tex) == 0.0 and 0 < pixels_off(flat, tex) < 1
    assert blur_ssim(tex, tex) == pytest.approx(1.0)
