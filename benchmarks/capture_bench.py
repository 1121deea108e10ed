"""Capture fidelity on real third-party apps: the stylesheet capture against per-element styles.

Each installed third-party app (corpus/third_party.py, fetched by scripts/install.sh) is recorded
with the explorer, the same seeds for both captures; every captured screen is rendered in the
sandbox at its screenshot's size and scored against that screenshot: blurred SSIM (1 px) and the
share of pixels off by more than 24 levels. The floor (issue 9): mean blurred SSIM >= 0.97 and at
most 2% of pixels off, per app.

python benchmarks/capture_bench.py [--episodes 2] [--steps 5]
"""

from __future__ import annotations

import argparse
import statistics

from corpus.explorer import explore
from corpus.recorder import Recorder
from corpus.third_party import APPS, installed, third_party_app
from render import Renderer
from render.metrics import blur_ssim, pixels_off

FLOOR_BLUR, FLOOR_OFF = 0.97, 0.02


def measure(capture: str, names: list[str], episodes: int, steps: int, r: Renderer) -> dict[str, dict]:
    out = {}
    with Recorder(capture=capture) as rec:
        for name in names:
            spec = third_party_app(name)
            tr = []
            for e in range(episodes):
                tr += rec.record_trajectory(spec, explore, steps, seed=e)
            shots = [tr[0].screen] + [t.next_screen for t in tr]
            res = r.render_many([(s.html, s.viewport()) for s in shots], boxes=False)
            ok = [(x, s) for x, s in zip(res, shots) if not isinstance(x, Exception)]
            b = [blur_ssim(x.image, s.array) for x, s in ok] + [0.0] * (len(shots) - len(ok))
            p = [pixels_off(x.image, s.array) for x, s in ok] + [1.0] * (len(shots) - len(ok))
            out[name] = dict(
                screens=len(shots),
                blur=statistics.mean(b),
                blur_min=min(b),
                off=statistics.mean(p),
                off_max=max(p),
                chars=statistics.mean(len(s.html) for s in shots),
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    a = ap.parse_args()
    names = [x.name for x in APPS if installed(x)]
    with Renderer(cache_size=0) as r:
        res = {c: measure(c, names, a.episodes, a.steps, r) for c in ("computed", "stylesheets")}
    print(
        f"{len(names)} third-party apps, {a.episodes} episodes x {a.steps} steps each, same seeds for both captures"
    )
    print(
        f"{'app':15s} {'capture':12s} {'screens':>7s} {'blurSSIM':>8s} {'min':>6s} {'px off':>7s} {'max':>6s} {'chars/screen':>12s} floor"
    )
    for n in names:
        for c in ("computed", "stylesheets"):
            x = res[c][n]
            ok = x["blur"] >= FLOOR_BLUR and x["off"] <= FLOOR_OFF
            print(
                f"{n:15s} {c:12s} {x['screens']:7d} {x['blur']:8.4f} {x['blur_min']:6.3f} {x['off']:7.2%} "
                f"{x['off_max']:6.1%} {x['chars']:12.0f} {'met' if ok else 'MISSED'}"
            )
    for c in ("computed", "stylesheets"):
        xs = list(res[c].values())
        met = sum(x["blur"] >= FLOOR_BLUR and x["off"] <= FLOOR_OFF for x in xs)
        print(
            f"{c:12s} all apps: blurred SSIM {statistics.mean(x['blur'] for x in xs):.4f}, pixels off "
            f"{statistics.mean(x['off'] for x in xs):.2%}, floor met by {met}/{len(xs)} apps"
        )
    b0 = statistics.mean(x["off"] for x in res["computed"].values())
    b1 = statistics.mean(x["off"] for x in res["stylesheets"].values())
    print(f"pixels off, stylesheets / computed: {b1 / b0:.2f}" if b0 else "")
    from headline import record  # benchmarks/headline.py: the README's results table

    def mean_of(c, key):
        return round(statistics.mean(x[key] for x in res[c].values()), 4)

    def floor_met(c):
        return sum(x["blur"] >= FLOOR_BLUR and x["off"] <= FLOOR_OFF for x in res[c].values())

    record(
        "capture_bench",
        f"mean blurred SSIM of captures rendered back, {len(names)} pinned third-party apps",
        mean_of("stylesheets", "blur"),
        mean_of("computed", "blur"),
        "computed-style capture",
        f"{len(names)} pinned npm apps, {a.episodes} episodes x {a.steps} steps",
        unit="blurred SSIM",
        pixels_off=mean_of("stylesheets", "off"),
        pixels_off_baseline=mean_of("computed", "off"),
        floor_met=f"{floor_met('stylesheets')}/{len(names)} (baseline {floor_met('computed')}/{len(names)})",
    )


if __name__ == "__main__":
    main()
