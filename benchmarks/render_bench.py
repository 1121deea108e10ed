"""Renders/s of 50 phone-size pages: the warm page pool against a new browser per page.

python benchmarks/render_bench.py [--pages 50]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from render import Renderer, Viewport
from render.sandbox import CHROMIUM_ARGS, chromium_path, with_policy

VP = Viewport(360, 640)


def page(i: int) -> str:
    rows = "".join(
        f"<div style='display:flex;padding:12px;border-bottom:1px solid #ddd'><b>Item {i}-{j}</b>"
        f"<span style='margin-left:auto;color:#888'>{j * 7 % 60} min</span></div>"
        for j in range(12)
    )
    return (
        "<html><body style='margin:0;font-family:sans-serif'>"
        f"<header style='background:#1565c0;color:white;padding:16px;font-size:20px'>Inbox {i}</header>"
        f"{rows}<button style='position:fixed;right:16px;bottom:16px;width:56px;height:56px;"
        "border-radius:28px;background:#e91e63;color:white;border:0'>+</button></body></html>"
    )


async def fresh_browser_per_page(htmls):
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        for html in htmls:
            browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            p = await browser.new_page(viewport={"width": VP.width, "height": VP.height})
            await p.set_content(with_policy(html))
            await p.screenshot(type="png")
            await browser.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=50)
    args = ap.parse_args()
    htmls = [page(i) for i in range(args.pages)]

    t = time.perf_counter()
    asyncio.run(fresh_browser_per_page(htmls))
    base = args.pages / (time.perf_counter() - t)

    with Renderer(pool_size=4, cache_size=0) as r:
        r.render("<p>warm-up</p>", VP)
        t = time.perf_counter()
        out = r.render_many([(h, VP) for h in htmls])
        pooled = args.pages / (time.perf_counter() - t)
    failed = sum(1 for x in out if isinstance(x, Exception))

    print(f"new browser per page : {base:6.2f} renders/s")
    print(f"warm page pool       : {pooled:6.2f} renders/s  (failed: {failed})")
    print(f"ratio pooled/baseline: {pooled / base:6.2f}x")


if __name__ == "__main__":
    main()
