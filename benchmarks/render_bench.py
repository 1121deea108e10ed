"""Renderer throughput against the plain-Playwright ceiling, and the GRPO reward time for a group of 8.

On real corpus pages (phone size, all distinct, cache off), in the same run:
  - ceiling: plain Playwright `set_content` + `screenshot` on N warm pages, no policy, no isolation;
  - ours: `Renderer(pool_size=N, cache_size=0)`: fresh document per render, scripts off, policy as
    headers, boxes read in an isolated world;
  - a new browser per page, the naive baseline.
Then the three GRPO rewards (R_sem, R_act, R_format) for a group of 8 distinct completions.

`--mixed` measures instead pages of every size in the corpus, shuffled: renders/s and how many
renders differ from the page rendered with no other size around, for ours and for plain
Playwright resizing its pooled pages in one context (pages of several sizes sharing a renderer
process now and then came back tiled; render/renderer.py `_context`).

python benchmarks/render_bench.py [--pages 80] [--pool 4] [--rounds 5] [--mixed]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from render import Renderer, Viewport
from render.sandbox import CHROMIUM_ARGS, chromium_path
from worldmodel import load_corpus


def corpus_pages(n: int, mixed: bool = False) -> list[tuple[str, Viewport]]:
    ds = load_corpus()["train"]
    if mixed:
        ds = ds.shuffle(seed=0)
    out, seen = [], set()
    for row in ds.select_columns(["next_html", "width", "height", "device_scale_factor"]):
        h = row["next_html"]
        if h and h not in seen:
            seen.add(h)
            out.append((h, Viewport.for_screen(row["width"], row["height"], row["device_scale_factor"])))
        if len(out) == n:
            break
    return out


async def plain_playwright(items, pool: int, passes: int = 2, shots: list | None = None) -> list[float]:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        ctx = await browser.new_context(viewport={"width": 360, "height": 640})
        pages = asyncio.Queue()
        for _ in range(pool):
            pages.put_nowait(await ctx.new_page())

        async def one(html, vp):
            p = await pages.get()
            try:
                await p.set_viewport_size({"width": vp.width, "height": vp.height})
                await p.set_content(html)
                png = await p.screenshot(type="png")
                if shots is not None:
                    shots.append((html, png))
            finally:
                pages.put_nowait(p)

        await asyncio.gather(*(one(f"<p>warm-up {i}</p>", items[0][1]) for i in range(pool)))
        rates = []
        for _ in range(passes):  # a cold pass, then a warm one (Chromium's caches hold these pages)
            t = time.perf_counter()
            await asyncio.gather(*(one(h, v) for h, v in items))
            rates.append(len(items) / (time.perf_counter() - t))
        await browser.close()
    return rates


def ours(items, pool: int, boxes: bool) -> list[float]:
    rates = []
    with Renderer(pool_size=pool, cache_size=0) as r:
        r.render_many([(f"<p>warm-up {i}</p>", items[0][1]) for i in range(pool)])  # browser and pages up
        for _ in range(2):  # the same cold pass, then warm pass, as the ceiling
            t = time.perf_counter()
            out = r.render_many(items, boxes=boxes)
            rates.append(len(items) / (time.perf_counter() - t))
            failed = sum(isinstance(x, Exception) for x in out)
            assert not failed, f"{failed} renders failed"
    return rates


def new_browser_per_page(items, n: int = 5) -> float:
    t = time.perf_counter()
    for html, vp in items[:n]:
        with Renderer(pool_size=1, cache_size=0) as r:
            r.render(html, vp)
    return n / (time.perf_counter() - t)


def reward_group_time(group: int = 8, repeats: int = 5) -> tuple[float, float]:
    """Seconds for all three rewards on a group of distinct completions (first call, then mean)."""
    from training.rewards import reward_functions

    ds = load_corpus()["test"]
    rows = [r for r in ds.select(range(min(len(ds), 60)))]
    times = []
    with Renderer(pool_size=4, cache_size=0) as r:
        funcs = reward_functions(r)
        for k in range(repeats + 1):
            batch = rows[k * group % len(rows) :][:group]
            if len(batch) < group:
                batch = rows[:group]
            comps = [
                b["next_html"].replace("<body", f"<body data-k='{k}-{i}'", 1) for i, b in enumerate(batch)
            ]
            kw = dict(
                next_screen=[b["next_screen"] for b in batch],
                screen=[b["screen"] for b in batch],
                action=[b["action"] for b in batch],
                width=[round(b["width"] / b["device_scale_factor"]) for b in batch],
                height=[round(b["height"] / b["device_scale_factor"]) for b in batch],
                scale=[b["device_scale_factor"] for b in batch],
            )
            t = time.perf_counter()
            batch = funcs[0].batches.build(comps, **kw)  # as GRPO's trainer does: once a step
            for f in funcs:
                f.score(batch)
            times.append(time.perf_counter() - t)
    return times[0], sum(times[1:]) / repeats


def mixed_sizes(items, pool: int, rounds: int) -> dict:
    import io

    import numpy as np
    from PIL import Image

    sizes = sorted({(v.width, v.height) for _, v in items})
    with Renderer(pool_size=1, cache_size=0) as r:  # one page size at a time: the reference
        ref = {h: r.render(h, v, boxes=False).image for h, v in sorted(items, key=lambda x: x[1].width)}
    wrong = {"plain": 0, "ours": 0}
    rate = {"plain": [], "ours": []}
    for _ in range(rounds):
        shots: list = []
        rate["plain"] += asyncio.run(plain_playwright(items, pool, passes=1, shots=shots))
        wrong["plain"] += sum(
            not np.array_equal(np.asarray(Image.open(io.BytesIO(p)).convert("RGB")), ref[h])
            for h, p in shots
            if h in ref
        )
        with Renderer(pool_size=pool, cache_size=0) as r:
            vps = list({v: None for _, v in items})  # browser and pages of each size up, as plain's
            r.render_many([(f"<p>warm-up {i}</p>", v) for v in vps for i in range(pool)])
            t = time.perf_counter()
            out = r.render_many(items, boxes=False)
            rate["ours"].append(len(items) / (time.perf_counter() - t))
        wrong["ours"] += sum(
            isinstance(o, Exception) or not np.array_equal(o.image, ref[h]) for (h, _), o in zip(items, out)
        )
    n = rounds * len(items)
    print(
        f"{len(items)} distinct corpus pages of {len(sizes)} sizes {sizes}, shuffled, pool of {pool}, {rounds} rounds"
    )
    for k, label in (("plain", "plain Playwright, pages resized"), ("ours", "Renderer, a context per size")):
        print(f"{label:35s} {statistics.median(rate[k]):6.1f} renders/s, {wrong[k]} of {n} renders wrong")
    print(
        f"ratio ours/plain, renders/s: {statistics.median(rate['ours']) / statistics.median(rate['plain']):.2f}"
    )
    return {"wrong": wrong, "per_s": {k: statistics.median(v) for k, v in rate.items()}, "renders": n}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=80)
    ap.add_argument("--pool", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--mixed", action="store_true", help="pages of every size, shuffled; wrong renders counted"
    )
    a = ap.parse_args()
    from headline import record  # benchmarks/headline.py: the README's results table

    if a.mixed:
        m = mixed_sizes(corpus_pages(a.pages, mixed=True), a.pool, a.rounds)
        record(
            "render_bench_mixed",
            f"wrong renders in {m['renders']}, pages of three sizes shuffled",
            m["wrong"]["ours"],
            m["wrong"]["plain"],
            "plain Playwright, pages resized",
            f"{a.pages} bundled pages of all three sizes, {a.rounds} rounds",
            unit="wrong renders",
            renders_per_s=round(m["per_s"]["ours"], 1),
            baseline_renders_per_s=round(m["per_s"]["plain"], 1),
        )
        return
    items = corpus_pages(a.pages)
    # Alternate the arms over several rounds and take medians: on 2 cores one run swings +-20%.
    runs = {"ceiling": [], "pixels": [], "boxes": []}
    for _ in range(a.rounds):
        runs["ceiling"].append(asyncio.run(plain_playwright(items, a.pool)))
        runs["pixels"].append(ours(items, a.pool, boxes=False))
        runs["boxes"].append(ours(items, a.pool, boxes=True))
    med = {k: [statistics.median(r[i] for r in v) for i in (0, 1)] for k, v in runs.items()}
    naive = new_browser_per_page(items)
    print(
        f"{len(items)} distinct corpus pages, pool of {a.pool}, cache off, median of {a.rounds} alternating rounds"
    )
    print("renders/s                                               cold pass   warm pass")
    names = {
        "ceiling": "plain Playwright set_content+screenshot (ceiling)",
        "pixels": "Renderer, pixels (isolated, policy; what rewards use)",
        "boxes": "Renderer, pixels + element boxes (isolated world)",
    }
    for k, label in names.items():
        print(f"{label:55s} {med[k][0]:7.1f}   {med[k][1]:7.1f}")
    print(f"new browser per page: {naive:.2f} renders/s")
    for i, p in enumerate(("cold", "warm")):
        c = med["ceiling"][i]
        print(
            f"ratio to the ceiling, {p} pass: {med['pixels'][i] / c:.2f} pixels, {med['boxes'][i] / c:.2f} with boxes"
        )
    print(f"ratio to a new browser per page (warm pixels): {med['pixels'][1] / naive:.1f}x")
    first, warm = reward_group_time()
    print(f"GRPO rewards (R_sem+R_act+R_format) for a group of 8: {warm:.3f} s (first call {first:.3f} s)")
    record(
        "render_bench",
        "renders/s, one page size, cold pass",
        round(med["pixels"][0], 1),
        round(med["ceiling"][0], 1),
        "plain Playwright (the ceiling)",
        f"{len(items)} bundled pages, 360x640, pool {a.pool}",
        unit="renders/s",
        warm=round(med["pixels"][1], 1),
        warm_ceiling=round(med["ceiling"][1], 1),
        grpo_rewards_group_of_8_s=round(warm, 3),
    )


if __name__ == "__main__":
    main()
