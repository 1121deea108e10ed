"""Predictions/s for a batch of 8 against one-by-one, same run, for the two generating backends.

  - hf: the tiny Qwen3-VL (built here from a config, random weights, greedy, 64 new tokens):
    one `generate` call for the batch (left padding) against eight calls;
  - openai: the test suite's OpenAI-compatible endpoint on loopback, answering each request after
    a fixed delay (a stand-in for a served model's latency): concurrent requests against sequential.
Both go through `WorldModel.predict_many` (generation plus one render batch) against
`WorldModel.predict` eight times.

python benchmarks/batch_bench.py [--delay 0.3] [--new-tokens 64]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from worldmodel import Query, Renderer, WorldModel, iter_transitions, load_corpus

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from conftest import chat_server  # noqa: E402 - the endpoint the test suite starts


def compare(wm: WorldModel, queries: list[Query]) -> tuple[float, float]:
    wm.predict_many(queries[:2])  # warm-up
    t = time.perf_counter()
    for q in queries:
        wm.predict(q.screen, q.action, q.goal)
    one = len(queries) / (time.perf_counter() - t)
    t = time.perf_counter()
    preds = wm.predict_many(queries)
    many = len(queries) / (time.perf_counter() - t)
    assert len(preds) == len(queries)
    return one, many


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--delay", type=float, default=0.3, help="seconds the endpoint takes per request")
    ap.add_argument("--new-tokens", type=int, default=64)
    a = ap.parse_args()
    ts = list(iter_transitions(load_corpus()["test"].select(range(8))))
    queries = [Query(t.screen, t.action, t.goal) for t in ts]
    from worldmodel.tiny import build_tiny

    with Renderer(cache_size=0) as r, tempfile.TemporaryDirectory() as d:
        texts = [t.next_screen.html for t in ts] + [t.goal for t in ts]
        path = build_tiny(Path(d) / "tiny", texts, vocab_size=1000)
        with WorldModel.load(
            f"hf:{path}", r, device="cpu", max_new_tokens=a.new_tokens, with_html=False
        ) as wm:
            hf = compare(wm, queries)
        with chat_server(lambda body: ts[0].next_screen.html, delay_s=a.delay) as (url, _):
            with WorldModel.load(f"openai:{url}#bench", r) as wm:
                oa = compare(wm, queries)
    print(f"batch of {len(queries)} test transitions, predictions/s (generate + render)")
    print(f"{'backend':34s} {'one by one':>10s} {'batch':>8s} {'ratio':>6s}")
    for name, (one, many) in [
        (f"hf tiny, {a.new_tokens} new tokens, CPU", hf),
        (f"openai endpoint, {a.delay:.1f} s/request", oa),
    ]:
        print(f"{name:34s} {one:10.2f} {many:8.2f} {many / one:6.2f}x")
    from headline import record  # benchmarks/headline.py: the README's results table

    record(
        "batch_bench",
        f"predictions/s, hf tiny, a batch of {len(queries)}",
        round(hf[1], 2),
        round(hf[0], 2),
        "one by one",
        f"{len(queries)} bundled test transitions",
        unit="/s",
        ratio=round(hf[1] / hf[0], 2),
        openai_endpoint_per_s=round(oa[1], 2),
        openai_one_by_one_per_s=round(oa[0], 2),
    )


if __name__ == "__main__":
    main()
