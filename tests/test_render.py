"""The real Chromium, driven through the sandboxed renderer."""

import os
import signal
import socket
import threading
import time

import numpy as np
import pytest

from render import Renderer, RenderError, Viewport, render_html

VP = Viewport(200, 300)


def test_known_html_gives_known_pixels(renderer):
    html = """<html><body style="margin:0">
      <div style="position:absolute;left:0;top:0;width:100px;height:300px;background:rgb(255,0,0)"></div>
      <div style="position:absolute;left:100px;top:0;width:100px;height:300px;background:rgb(0,0,255)"></div>
    </body></html>"""
    img = renderer.render(html, VP).image
    assert img.shape == (300, 200, 3)
    assert tuple(img[150, 50]) == (255, 0, 0)
    assert tuple(img[150, 150]) == (0, 0, 255)


def test_device_scale_factor_sets_pixel_size(renderer):
    vp = Viewport.for_screen(400, 600, 2.0)
    assert (vp.width, vp.height) == (200, 300)
    res = renderer.render("<body style='background:#0f0'></body>", vp)
    assert res.image.shape == (600, 400, 3)


def test_boxes_are_reported_for_visible_elements(renderer):
    res = renderer.render(
        "<body style='margin:0'><button style='position:absolute;left:10px;top:20px;width:50px;height:30px'>OK</button>"
        "<p style='display:none'>hidden</p></body>",
        VP,
    )
    assert [(b.tag, b.text, b.x, b.y, b.w, b.h) for b in res.boxes] == [("button", "OK", 10, 20, 50, 30)]


def test_cache_returns_same_pixels_without_rerendering(renderer):
    html = f"<p>cache me {id(object())}</p>"
    a = renderer.render(html, VP)
    b = renderer.render(html, VP)
    assert not a.cached and b.cached and a.png == b.png


def test_infinite_loop_is_a_clear_timeout_and_renderer_recovers():
    with Renderer(pool_size=1, timeout_s=2.0, allow_scripts=True) as r:
        with pytest.raises(RenderError) as e:
            r.render("<script>while (true) {}</script>", VP)
        assert e.value.reason == "timeout"
        assert r.render("<p>fine</p>", VP).boxes[0].text == "fine"


def test_huge_dom_built_by_script_times_out():
    js = "<body><script>for(;;){document.body.appendChild(document.createElement('div')).textContent='x'.repeat(5000)}</script>"
    with Renderer(pool_size=1, timeout_s=2.0, allow_scripts=True) as r:
        with pytest.raises(RenderError) as e:
            r.render(js, VP)
        # whichever limit the runaway page reaches first ends it: the time limit, or on a fast
        # machine the memory watchdog (render/watchdog.py)
        assert e.value.reason in ("timeout", "too_large")
        assert r.render("<p>fine</p>", VP).boxes[0].text == "fine"


def test_50mb_html_is_refused_before_the_browser_sees_it(renderer):
    with pytest.raises(RenderError) as e:
        renderer.render("<div>" + "x" * 50_000_000 + "</div>", VP)
    assert e.value.reason == "too_large" and "50000011 bytes" in str(e.value)


@pytest.mark.parametrize("scripts", [False, True])
def test_no_connection_leaves_the_page(scripts):
    """Not even a TCP connect: a listener on loopback must see nothing."""
    seen = []
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(16)
    lsock.settimeout(0.2)
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                conn, _ = lsock.accept()
            except OSError:
                continue
            seen.append(conn)

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    url = f"http://127.0.0.1:{lsock.getsockname()[1]}"
    html = f"""<html><head><link rel=stylesheet href="{url}/css"></head><body>
      <img src="{url}/img"><iframe src="{url}/frame"></iframe><iframe src="file:///etc/hostname"></iframe>
      <img src="file:///etc/passwd"><script>fetch("{url}/fetch").catch(()=>{{}});
      new Image().src = "{url}/beacon"; setTimeout(() => location.href = "{url}/nav", 10);</script>
      <p>page</p></body></html>"""
    try:
        with Renderer(pool_size=1, timeout_s=4.0, allow_scripts=scripts) as renderer:
            try:
                renderer.render(html, VP)
            except RenderError as e:  # with scripts, its own navigation makes the render fail
                assert scripts and "navigated" in str(e)
            time.sleep(1.0)  # give a late navigation the chance to fire
            renderer.render("<p>later</p>", VP)
    finally:
        stop.set()
        t.join()
        lsock.close()
    assert seen == []


def _chromium_pids() -> set[int]:
    """Chromium processes started by this test process (not anyone else's browsers)."""
    from render import proctree

    return {p for p in proctree.descendants()[1:] if b"chromium" in (proctree.cmdline(p) or [b""])[0]}


def test_pages_of_two_sizes_rendered_together_keep_their_own_pixels():
    """Before pages were kept apart by size, about 1 render in 100 of this mix came back as the
    phone page's corner tiled at the 160 px page's width."""
    from corpus.store import iter_transitions, load_corpus

    dd = load_corpus()
    phone = next(t for t in iter_transitions(dd["test"]) if t.app.startswith("phone-")).next_screen
    small = next(t for t in iter_transitions(dd["train"]) if t.app.startswith("miniwob-")).next_screen
    assert phone.viewport() != small.viewport()
    with Renderer(pool_size=2, cache_size=0) as r:
        ref = [r.render(s.html, s.viewport()).image for s in (phone, small)]
        bad = []
        for k in range(60):
            mix = [(s.html + f"<!--{k}-->", s.viewport()) for s in (phone, small, phone, small)]
            for i, got in enumerate(r.render_many(mix)):
                if isinstance(got, RenderError) or not np.array_equal(got.image, ref[i % 2]):
                    bad.append((k, i))
    assert not bad, f"{len(bad)} of 240 renders differ from their page's own render: {bad[:5]}"


def test_crashed_browser_is_restarted_and_batch_completes():
    others = _chromium_pids()  # e.g. the session renderer's browser: left alone
    with Renderer(pool_size=2, timeout_s=5.0) as r:
        r.render("<p>warm</p>", VP)
        ours = _chromium_pids() - others
        assert ours, "expected this renderer's chromium to be running"
        for pid in ours:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        results = r.render_many([(f"<p>item {i}</p>", VP) for i in range(6)])
        assert all(not isinstance(x, RenderError) for x in results), results
        assert [x.boxes[0].text for x in results] == [f"item {i}" for i in range(6)]
        assert r.restarts >= 1


def test_batch_reports_each_failure_in_its_slot():
    with Renderer(pool_size=2, timeout_s=2.0, allow_scripts=True) as r:
        out = r.render_many([("<p>a</p>", VP), ("<script>for(;;){}</script>", VP), ("<p>c</p>", VP)])
    assert isinstance(out[1], RenderError) and out[1].reason == "timeout"
    assert out[0].boxes[0].text == "a" and out[2].boxes[0].text == "c"


def test_render_html_accepts_a_size_tuple():
    img = render_html("<body style='background:rgb(10,20,30)'></body>", (64, 48)).image
    assert img.shape == (48, 64, 3) and np.all(img[10, 10] == (10, 20, 30))


def test_bad_viewport_is_named():
    with pytest.raises(ValueError, match="viewport 5x5"):
        Viewport(5, 5)


def test_cli_render_writes_png(tmp_path):
    page = tmp_path / "p.html"
    page.write_text("<body style='background:#00f'><h1>Hello</h1></body>")
    out = tmp_path / "out.png"
    from wmcli import main

    assert main(["render", str(page), "-o", str(out), "--width", "120", "--height", "80"]) == 0
    from PIL import Image

    img = Image.open(out)
    assert img.size == (120, 80) and img.getpixel((110, 70))[:3] == (0, 0, 255)


def test_cli_render_reports_timeout(tmp_path, capsys):
    page = tmp_path / "loop.html"
    page.write_text("<script>while(1){}</script>")
    from wmcli import main

    rc = main(["render", str(page), "-o", str(tmp_path / "x.png"), "--timeout", "1.5", "--scripts"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "timeout" in err[0] and not (tmp_path / "x.png").exists()


def test_a_batch_past_its_deadline_answers_each_slot():
    """Under a starved CPU a whole batch used to fail at its call's deadline, the renders that had
    finished included; now only the late ones do, each with a timeout in its slot, and they are
    stopped (their clean-up runs) rather than left running."""
    import asyncio

    from render.renderer import _each

    stopped, seconds = [], {"quick": 0.0, "late": 30.0, "bad": 0.0, "also": 0.01}

    async def make(name, _viewport):
        try:
            await asyncio.sleep(seconds[name])
        except asyncio.CancelledError:
            stopped.append(name)
            raise
        if name == "bad":
            raise RenderError("failed", "its own fault")
        return name

    items = [(name, Viewport(100, 100)) for name in seconds]
    t0 = time.perf_counter()
    got = asyncio.run(_each(items, make, deadline=0.5))
    assert time.perf_counter() - t0 < 10
    assert got[0] == "quick" and got[3] == "also"
    assert isinstance(got[2], RenderError) and got[2].reason == "failed"
    assert isinstance(got[1], RenderError) and got[1].reason == "timeout" and "deadline" in str(got[1])
    assert stopped == ["late"]
    assert asyncio.run(_each([], make, deadline=0.5)) == []  # an empty batch answers empty


def test_a_page_slow_to_open_fails_alone_and_a_wedged_browser_restarts():
    """A page that does not open in time, the browser still there, is most often a starved CPU:
    it fails as a timeout and the browser (and every render in flight on it) stays. Only
    WEDGED_AFTER such pages in a row restart it."""
    from render.renderer import WEDGED_AFTER

    with Renderer(pool_size=1, timeout_s=5.0, retries=1) as r:
        r.render("<p>warm</p>", VP)  # a pooled page of VP's size
        before = r.pages_opened
        r.timeout_s = 1e-6  # no new page opens this fast: a page of another size must open
        with pytest.raises(RenderError) as e:
            r.render("<p>other size</p>", Viewport(200, 150))
        assert e.value.reason == "timeout" and "open a page" in str(e.value)
        r.timeout_s = 5.0
        assert r.render("<p>again</p>", VP).boxes[0].text == "again" and r.restarts == 0
        # the pages that opened too late (one a try) finish opening and join the pool: a render
        # of their size then opens none (cancelled half way, they were left in the browser)
        seen, still = r.pages_opened, 0
        while still < 10:
            time.sleep(0.1)
            still, seen = (still + 1, seen) if r.pages_opened == seen else (0, r.pages_opened)
        assert seen > before
        assert r.render("<p>late page</p>", Viewport(200, 150)).boxes[0].text == "late page"
        assert r.pages_opened == seen
        r.timeout_s = 1e-6
        tries = 2 * (WEDGED_AFTER // 2 + 1)  # two tries a render: WEDGED_AFTER slow pages in a row
        for k in range(tries // 2):
            with pytest.raises(RenderError):
                r.render(f"<p>{k}</p>", Viewport(210 + k, 150))
        r.timeout_s = 5.0
        assert r.render("<p>after</p>", VP).boxes[0].text == "after" and r.restarts == 1
