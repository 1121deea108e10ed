"""Soak: shared renderers and world models under threads and processes for minutes on end.

Each of `--processes` worker processes holds one `Renderer` and two `WorldModel`s on it (`sim`
and `copy`), and `--threads` threads in it call `WorldModel.predict_many` on both and
`Renderer.render_many`, in random batches that mix ordinary documents with hostile ones (a
refresh that navigates away, a 1e5-deep DOM, popups, busy scripts, requests out, a lone
surrogate: tests/test_hostile.py, benchmarks/hostile_bench.py). Every result is checked against
a reference rendered or predicted one at a time, by one thread, before the clock starts: a
result equal to another slot's reference and not its own is *misplaced*; one equal to none is
*differs* (an error instead of a result is counted apart, as `errors`).

Each interval (a minute) it prints the items done per second, the resident memory of the whole
process tree (this process, the workers, the Playwright drivers and every Chromium process:
the sum of their RSS), the number of Chromium processes and the counts above. After the workers
close, no Chromium process of ours may be left: this process is made the subreaper of its tree,
so a browser a worker left behind would still be found below it.

    taskset -c 1 python benchmarks/soak.py --minutes 10
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import multiprocessing as mp
import os
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, as a script

from render import proctree  # noqa: E402

# what each worker reports in words at most (the counts stay complete)
MAX_SAID = 20
# counters each worker keeps in shared memory
FIELDS = ("calls", "items", "misplaced", "differs", "errors", "exceptions", "restarts")

PAGE = (
    "<body style='margin:0;background:rgb({r},{g},{b})'>"
    "<h1 style='font:20px sans-serif'>page {i}</h1><p>{words}</p></body>"
)
HOSTILE = [
    "<meta http-equiv=refresh content='0.05;url=about:blank'><p>h</p>",
    "<div>" * 100000,
    "<script>for (let i = 0; i < 30; i++) window.open('about:blank')</script><p>h</p>",
    "<script>(function f() { requestAnimationFrame(f); const t = Date.now(); while (Date.now() - t < 30); })()</script>",
    "<body><script>setInterval(() => document.body.style.background = 'lime', 1)</script><p>h</p></body>",
    "<img src='http://127.0.0.1:9/x'><iframe src='file:///etc/hostname'></iframe><p>out</p>",
    "<style>@import url(http://127.0.0.1:9/k); p{background:url(http://127.0.0.1:9/m)}</style><p>css</p>",
    "<p>\ud800 lone surrogate</p>",
]


def _digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()[:16]


def _image_digest(image) -> str | None:
    if image is None:
        return None
    import numpy as np

    return _digest(np.asarray(image).tobytes())


# ---- the process tree --------------------------------------------------------------------------
def tree_figures() -> tuple[float, float, list[int]]:
    """(summed RSS and PSS in MB of this process and everything below it, its Chromium processes)."""
    pids = proctree.descendants()
    rss = sum(proctree.rss_mb(p) for p in pids)
    return rss, sum(proctree.pss_mb(p) for p in pids), [p for p in pids if proctree.is_chromium(p)]


def _subreaper() -> None:
    """Orphans of this tree (a browser whose worker died) are re-parented here, not to init."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


# ---- a worker process --------------------------------------------------------------------------
def _documents(n_pages: int, screens: list[tuple[str, tuple[int, int]]]):
    from worldmodel import Viewport

    rng = random.Random(0)
    docs = []
    for i in range(n_pages):
        words = " ".join(rng.choice(["alpha", "beta", "gamma", "delta", "list", "item"]) for _ in range(12))
        html = PAGE.format(r=(i * 37) % 256, g=(255 - i * 23) % 256, b=(i * 71) % 256, i=i, words=words)
        docs.append((html, Viewport(200, 150)))
    for html, (w, h) in screens:
        docs.append((html, Viewport(w, h)))
    docs += [(h, Viewport(200, 150)) for h in HOSTILE]
    return docs


def _queries(n: int):
    from PIL import Image

    from worldmodel import Action, Query, Screen, iter_transitions, load_corpus

    seen, out = set(), []
    for t in iter_transitions(load_corpus()["test"]):
        if t.screen.html and t.screen.html not in seen and t.action.type in ("tap", "type", "scroll", "back"):
            seen.add(t.screen.html)
            out.append(Query(t.screen, t.action, t.goal))
        if len(out) == n:
            break
    blank = Image.new("RGB", (360, 640), "white")
    for i, h in enumerate(HOSTILE[:3]):  # hostile current screens too
        out.append(Query(Screen(blank, html=f"{h}<p>hostile screen {i}</p>"), Action("tap", x=20, y=20)))
    return out


def _outcome_render(res) -> str:
    from worldmodel import RenderError

    return (
        f"error:{res.reason}: {str(res)[:100]}"
        if isinstance(res, RenderError)
        else f"image:{_image_digest(res.image)}"
    )


def _outcome_prediction(p) -> str:
    if not p.ok:
        return f"error:{(p.render_error or '')[:100]}"
    return f"html:{_digest(p.html.encode('utf-8', 'replace'))}|image:{_image_digest(p.image)}"


def _judge(got: str, mine: str, others: set[str], counts) -> str | None:
    """Count one result against its slot's reference `mine` (and every other slot's); returns
    what it counted, None where the result is the reference."""
    if got == mine:
        return None
    # a part (the HTML, the pixels) that is another slot's and not this one's is misplaced
    theirs = {part for o in others for part in o.split("|")}
    mine_parts = set(mine.split("|"))
    stray = any(part in theirs and part not in mine_parts for part in got.split("|"))
    kind = "errors" if got.startswith("error:") else "misplaced" if stray else "differs"
    counts[kind] += 1
    return kind


def worker(index: int, threads: int, ready, stop, shared, problems) -> None:
    from worldmodel import Renderer, WorldModel

    _set_threads()
    queries = _queries(8)
    screens = [(q.screen.html, q.screen.size) for q in queries[:3]]
    docs = _documents(10, screens)
    renderer = Renderer(cache_size=0)
    sim = WorldModel.load("sim", renderer=renderer)
    copy = WorldModel.load("copy", renderer=renderer)
    # the references: one thread, one item at a time, before the clock starts
    ref_render = [_outcome_render(renderer.render_many([d], boxes=False)[0]) for d in docs]
    ref_sim = [_outcome_prediction(sim.predict(q.screen, q.action, q.goal)) for q in queries]
    ref_copy = [_outcome_prediction(copy.predict(q.screen, q.action, q.goal)) for q in queries]
    lock = threading.Lock()
    said = [0, 0]  # results and exceptions reported so far by this worker

    def add(delta: dict) -> None:
        with lock, shared.get_lock():
            for k, v in delta.items():
                shared[FIELDS.index(k)] += v
            shared[FIELDS.index("restarts")] = renderer.restarts  # browser restarts so far

    def run(t: int) -> None:
        rng = random.Random(1000 * index + t)
        k = t
        while not stop.is_set():
            op = ("render", "sim", "copy")[k % 3]
            k += 1
            counts = dict.fromkeys(FIELDS, 0)
            try:
                if op == "render":
                    slots = rng.sample(range(len(docs)), rng.randint(3, 6))
                    out = renderer.render_many([docs[i] for i in slots], boxes=False)
                    got, refs = [_outcome_render(r) for r in out], ref_render
                else:
                    slots = rng.sample(range(len(queries)), rng.randint(2, 4))
                    wm, refs = (sim, ref_sim) if op == "sim" else (copy, ref_copy)
                    got = [_outcome_prediction(p) for p in wm.predict_many([queries[i] for i in slots])]
                if len(got) != len(slots):
                    counts["misplaced"] += abs(len(slots) - len(got))
                for i, g in zip(slots, got):
                    kind = _judge(
                        g, refs[i], {r for j, r in enumerate(refs) if j != i and r != refs[i]}, counts
                    )
                    if kind and said[0] < MAX_SAID // 2:
                        said[0] += 1
                        problems.put(f"worker {index} {op} slot {i}: {kind}: {g} (reference {refs[i]})")
                counts["items"] += len(slots)
            except Exception as e:  # a batch call should answer per item, never raise
                counts["exceptions"] += 1
                if said[1] < MAX_SAID:
                    said[1] += 1
                    problems.put(f"worker {index} thread {t} {op} raised {type(e).__name__}: {e}"[:300])
            counts["calls"] += 1
            add(counts)

    ready.set()
    pool = [threading.Thread(target=run, args=(t,), name=f"soak-{t}") for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    sim.close()
    copy.close()
    renderer.close()


def _set_threads() -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")


# ---- the monitor -------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--threads", type=int, default=8, help="threads in each worker process")
    ap.add_argument("--processes", type=int, default=2, help="worker processes")
    ap.add_argument("--interval", type=float, default=60.0, help="seconds between report lines")
    a = ap.parse_args()
    _subreaper()
    ctx = mp.get_context("spawn")
    stop, problems = ctx.Event(), ctx.Queue()
    shared = [ctx.Array("q", len(FIELDS)) for _ in range(a.processes)]
    ready = [ctx.Event() for _ in range(a.processes)]
    procs = [
        ctx.Process(
            target=worker, args=(i, a.threads, ready[i], stop, shared[i], problems), name=f"soak-worker-{i}"
        )
        for i in range(a.processes)
    ]
    t_setup = time.perf_counter()
    for p in procs:
        p.start()
    for e in ready:
        while not e.wait(5):
            if not all(p.is_alive() for p in procs):
                print("a worker died while setting up", file=sys.stderr)
                stop.set()
                return 1
    print(
        f"soak: {a.processes} processes x {a.threads} threads, sim + copy + render_many, "
        f"{a.minutes:g} min (set-up {time.perf_counter() - t_setup:.0f} s, affinity {sorted(os.sched_getaffinity(0))})"
    )
    print(
        f"{'min':>5s} {'items/s':>8s} {'calls':>6s} {'RSS MB':>8s} {'PSS MB':>8s} {'chromium':>8s} {'misplaced':>9s} {'differs':>7s} {'errors':>6s} {'exc':>4s} {'restarts':>8s}"
    )

    def totals() -> list[int]:
        out = [0] * len(FIELDS)
        for arr in shared:
            with arr.get_lock():
                for i, v in enumerate(arr):
                    out[i] += v
        return out

    rows, seen_chromium = [], set()
    start = time.perf_counter()
    last, last_t = totals(), start
    end = start + a.minutes * 60
    while (now := time.perf_counter()) < end:
        time.sleep(min(a.interval, end - now))
        t, cur = time.perf_counter(), totals()
        rss, pss, chromium = tree_figures()
        seen_chromium.update((p, proctree.started(p)) for p in chromium)
        d = [c - p for c, p in zip(cur, last)]
        row = dict(
            minute=(t - start) / 60,
            items_per_s=d[1] / (t - last_t),
            calls=d[0],
            rss_mb=rss,
            pss_mb=pss,
            chromium=len(chromium),
            **{k: d[i] for i, k in enumerate(FIELDS) if i >= 2},
        )
        rows.append(row)
        print(
            f"{row['minute']:5.1f} {row['items_per_s']:8.2f} {row['calls']:6d} {rss:8.0f} {pss:8.0f} {len(chromium):8d}"
            f" {row['misplaced']:9d} {row['differs']:7d} {row['errors']:6d} {row['exceptions']:4d} {row['restarts']:8d}",
            flush=True,
        )
        last, last_t = cur, t
    stop.set()
    msgs: list[str] = []
    closing = time.monotonic() + 120
    while any(p.is_alive() for p in procs) and time.monotonic() < closing:
        while not problems.empty():  # drained while they close: a full pipe would hold them
            msgs.append(problems.get())
        time.sleep(0.2)
    for p in procs:
        if p.is_alive():
            print(f"{p.name} did not close within 120 s: killed", file=sys.stderr)
            p.kill()
            p.join()
    deadline = time.monotonic() + 15
    while (left := tree_figures()[2]) and time.monotonic() < deadline:
        time.sleep(0.5)
    # one seen during the run and still alive anywhere: the same pid and the same start time, so
    # another user's process that got a recycled pid is not taken for ours
    left_seen = [
        p for p, t in seen_chromium if t is not None and proctree.started(p) == t and proctree.is_chromium(p)
    ]
    left = sorted(set(left) | set(left_seen))

    while not problems.empty():
        msgs.append(problems.get())
    total = totals()
    half = rows[(len(rows) - 1) // 2 :]  # from the middle (minute 5 of 10) on

    def growth(key: str) -> str:
        """From the middle row to the highest after it and to the last; and the second half's
        highest against the first half's (the ceiling: a leak raises it, restarts swing the rest)."""
        first = half[0][key] or 1
        top = max([r[key] for r in rows[: (len(rows) - 1) // 2]] or [first]) or 1
        peak = max(r[key] for r in half)
        return (
            f"{(peak - first) / first:+.1%} max, {(half[-1][key] - first) / first:+.1%} end,"
            f" ceiling {(peak - top) / top:+.1%}"
        )

    print(
        f"total: {total[1]} items in {total[0]} calls; misplaced {total[2]}, differs {total[3]},"
        f" errors {total[4]}, exceptions {total[5]}, browser restarts {total[6]}; second half growth:"
        f" RSS {growth('rss_mb')}, PSS {growth('pss_mb')},"
        f" chromium {growth('chromium')}; chromium left after close: {len(left)}"
    )
    raised = [m for m in msgs if " raised " in m]
    for m in raised[:8] + [m for m in msgs if m not in raised][:6]:
        print("  " + m)
    for p in left:  # ours (below this process, or the very process seen below it): end them
        try:
            os.kill(p, 9)
        except OSError:
            pass
    from headline import record  # benchmarks/headline.py: the README's results table

    record(
        "soak",
        f"misplaced results in {a.minutes:g} minutes, {a.processes} processes x {a.threads} threads",
        total[2],
        None,
        "each result checked against a one-thread reference",
        "small pages, corpus screens, hostile documents",
        unit="misplaced",
        items=total[1],
        differs=total[3],
        errors=total[4],
        raised=total[5],
        browser_restarts=total[6],
        chromium_left=len(left),
        rss_second_half=growth("rss_mb"),
    )
    assert not left, f"Chromium processes left after close: {left}"
    assert total[2] == 0, f"{total[2]} results in the wrong slot"
    return 0


if __name__ == "__main__":
    sys.exit(main())
