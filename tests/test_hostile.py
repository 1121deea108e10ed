"""Hostile HTML against the renderer: isolation, the policy, WebRTC, the cache key, hangs, load, memory.

Each test is an attack from the hostile battery that once worked (see issue 13); it asserts the
attack now fails in a way that could be seen if it did not.
"""

import os
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from render import Renderer, RenderError, Viewport

VP = Viewport(200, 150)
PROBE = "<body style='margin:0;background:#fff'><p id=o style='font:20px monospace'>probe</p></body>"
PROBE_JS = (
    "<body style='margin:0;background:#fff'><p id=o style='font:14px monospace'>x</p>"
    "<script>o.textContent = [window.name, typeof leak, history.length, document.title,"
    " Element.prototype.getBoundingClientRect.toString().length].join('|')</script></body>"
)
# What an earlier page on the same pooled page tried to leave behind.
POISON = """<title>poison</title><body><script>
window.name = 'leaked'; window.leak = 1; history.pushState({}, '', '#a'); history.pushState({}, '', '#b');
setInterval(() => { document.body && (document.body.style.background = 'lime') }, 5);
new MutationObserver(() => { document.body && (document.body.style.background = 'lime') })
  .observe(document, {subtree: true, childList: true});
Element.prototype.getBoundingClientRect = () => ({left: 0, top: 0, right: 999, bottom: 999, width: 999, height: 999});
</script><p>A</p></body>"""


def _solo(html, scripts):
    with Renderer(pool_size=1, cache_size=0, allow_scripts=scripts, timeout_s=4) as r:
        return r.render(html, VP)


@pytest.mark.parametrize("scripts", [False, True])
def test_nothing_survives_into_the_next_render(scripts):
    probe = PROBE_JS if scripts else PROBE
    clean = _solo(probe, scripts)
    with Renderer(pool_size=1, cache_size=0, allow_scripts=scripts, timeout_s=4) as r:
        r.render(POISON, VP)
        time.sleep(0.2)  # let a timer that survived paint
        after = r.render(probe, VP)
    assert np.array_equal(after.image, clean.image)
    assert [(b.text, b.w) for b in after.boxes] == [(b.text, b.w) for b in clean.boxes]
    if scripts:
        assert after.boxes[0].text.startswith("|undefined|")  # no window.name, no global


def test_a_page_cannot_spoof_its_own_boxes():
    spoof = (
        "<body style='margin:0'><button style='width:50px;height:30px'>OK</button><script>"
        "Element.prototype.getBoundingClientRect = () => ({left:0,top:0,right:360,bottom:640,width:360,height:640});"
        "window.getComputedStyle = () => ({visibility:'visible',display:'block',opacity:'1'});</script></body>"
    )
    with Renderer(pool_size=1, allow_scripts=True, timeout_s=4) as r:
        boxes = r.render(spoof, VP).boxes
    assert [(b.tag, b.w, b.h) for b in boxes] == [("button", 50, 30)]


# Markup that once put a regex-inserted CSP <meta> where the parser ignores it.
BYPASSES = [
    "<!-- <head> --><html><head></head><body>{x}</body></html>",
    "<template><head></template><body>{x}</body>",
    "<title><head></title><body>{x}</body>",
    "<textarea><head></textarea>{x}",
    "<script>var s = '<head>'</script>{x}",
    "<div title='<head>'>{x}</div>",
    "<body>{x}</body><head></head>",
    "<html><body>{x}<head></head></body></html>",
]


@pytest.mark.parametrize("scripts", [False, True])
@pytest.mark.parametrize("doc", BYPASSES)
def test_the_policy_holds_whatever_the_markup(doc, scripts):
    # With the policy in force a resource request never reaches the request router at all.
    x = (
        '<img src="http://127.0.0.1:9/a.png"><link rel=stylesheet href="http://127.0.0.1:9/s.css">'
        '<p style="background:url(http://127.0.0.1:9/bg.png)">x</p>'
    )
    with Renderer(pool_size=1, allow_scripts=scripts, timeout_s=4) as r:
        res = r.render(doc.format(x=x), VP)
    assert res.blocked_requests == []


def test_webrtc_is_gone_from_the_page():
    html = (
        "<p id=o>x</p><script>o.textContent = [typeof RTCPeerConnection, typeof webkitRTCPeerConnection,"
        " typeof RTCDataChannel].join(',')</script>"
    )
    with Renderer(pool_size=1, allow_scripts=True, timeout_s=4) as r:
        assert r.render(html, VP).boxes[0].text == "undefined,undefined,undefined"


_NETNS_PROBE = r"""
import sys, time
from render import Renderer, Viewport
def counters():
    out = {}
    for line in open('/proc/net/dev').read().splitlines()[2:]:
        name, rest = line.split(':', 1)
        f = rest.split()
        out[name.strip()] = (int(f[1]), int(f[9]))  # rx packets, tx packets
    return out
def udp_sockets():
    n = 0
    for f in ('/proc/net/udp', '/proc/net/udp6'):
        try: n += len(open(f).read().splitlines()[1:])
        except OSError: pass
    return n
html = '''<p>rtc</p><script>
for (const C of [window.RTCPeerConnection, window.webkitRTCPeerConnection]) {
  try { const pc = new C({iceServers: [{urls: 'stun:127.0.0.1:3478'}]});
        pc.createDataChannel('x'); pc.createOffer().then(o => pc.setLocalDescription(o)); } catch (e) {}
}
const f = document.createElement('iframe'); document.body.appendChild(f);
try { const pc = new f.contentWindow.RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.1:3478'}]});
      pc.createDataChannel('y'); pc.createOffer().then(o => pc.setLocalDescription(o)); } catch (e) {}
</script>'''
before, udp0 = counters(), udp_sockets()
with Renderer(pool_size=1, allow_scripts=True, timeout_s=4) as r:
    r.render(html, Viewport(200, 150))
    peak = udp0
    for _ in range(15):
        time.sleep(0.1); peak = max(peak, udp_sockets())
after = counters()
tx = sum(after[k][1] - before.get(k, (0, 0))[1] for k in after)
print(f"TX={tx} UDP={peak - udp0}")
"""


@pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0, reason="needs unshare -n as root")
def test_no_packet_leaves_a_loopback_only_namespace(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(_NETNS_PROBE)
    # A private namespace with loopback and a veth pair of its own (a documentation-range address,
    # IPv6 off so the kernel sends nothing by itself): WebRTC would gather a host candidate on it
    # and announce it by mDNS, and the pair's counters would see it. Nothing can leave it.
    setup = (
        "set -e; ip link set lo up; ip link add wm0 type veth peer name wm1; "
        "for i in wm0 wm1; do echo 1 > /proc/sys/net/ipv6/conf/$i/disable_ipv6; done; "
        "ip addr add 192.0.2.1/24 dev wm0; ip link set wm0 up; ip link set wm1 up; "
        "ip route add 224.0.0.0/4 dev wm0; sleep 0.5"
    )
    if subprocess.run(["unshare", "-n", "sh", "-c", setup], capture_output=True).returncode:
        pytest.skip("cannot build a veth pair in a private network namespace here")
    cmd = ["unshare", "-n", "sh", "-c", f"{setup}; {sys.executable} {script}"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=os.getcwd())
    assert out.returncode == 0, out.stderr[-2000:]
    line = out.stdout.strip().splitlines()[-1]
    assert line == "TX=0 UDP=0", line


def test_lone_surrogates_do_not_share_a_cache_entry():
    with Renderer(pool_size=1, timeout_s=4) as r:
        a = r.render("<p>\ud800 a</p>", VP)
        b = r.render("<p>\udc00 a</p>", VP)
        assert not b.cached and r._key("<p>\ud800</p>", VP) != r._key("<p>\udc00</p>", VP)
        assert np.array_equal(a.image, b.image)  # both render as U+FFFD, but the second was really rendered


def test_same_html_gives_identical_pixels_on_every_pooled_page():
    html = (
        "<body style='margin:0'><div style='width:120px;height:60px;border-radius:18px;"
        "background:linear-gradient(45deg,#f06,#09f);box-shadow:0 3px 9px #000'>Grad</div>"
        "<p style='font:italic 15px serif'>The quick brown fox</p></body>"
    )
    with Renderer(pool_size=4, cache_size=0, timeout_s=4) as r:
        out = r.render_many([(html, VP)] * 20)
    assert all(not isinstance(x, RenderError) for x in out)
    assert all(np.array_equal(x.image, out[0].image) for x in out)


def test_a_hung_page_does_not_block_another_thread():
    with Renderer(pool_size=1, timeout_s=3, allow_scripts=True) as r:
        got = {}

        def go(name, html, delay):
            time.sleep(delay)
            t0 = time.perf_counter()
            try:
                got[name] = (r.render(html, VP), time.perf_counter() - t0)
            except RenderError as e:
                got[name] = (e, time.perf_counter() - t0)

        ts = [
            threading.Thread(target=go, args=("loop", "<script>while(1){}</script>", 0)),
            threading.Thread(target=go, args=("plain", "<p>plain</p>", 0.3)),
        ]
        for t in ts:
            t.start()
        for t in ts:
            t.join(30)
        assert not any(t.is_alive() for t in ts), "a render call never returned"
    assert isinstance(got["loop"][0], RenderError) and got["loop"][0].reason == "timeout"
    assert got["plain"][0].boxes[0].text == "plain" and got["plain"][1] < 15


HOSTILE = [
    "<body><script>setInterval(() => document.body.style.background = 'lime', 1)</script><p>h</p></body>",
    "<script>for (let i = 0; i < 30; i++) window.open('about:blank')</script><p>h</p>",
    "<script>(function f() { requestAnimationFrame(f); const t = Date.now(); while (Date.now() - t < 30); })()</script>",
    "<meta http-equiv=refresh content='0.05;url=about:blank'><p>h</p>",
    "<script>setTimeout(() => location.href = 'about:blank', 20)</script><p>h</p>",
]


@pytest.mark.parametrize("scripts", [False, True])
def test_ordinary_pages_stay_right_under_hostile_load(scripts):
    ordinary = [
        f"<body style='margin:0;background:rgb({i * 5},{255 - i * 5},120)'><p>page {i}</p></body>"
        for i in range(36)
    ]
    with Renderer(pool_size=3, cache_size=0, timeout_s=3, allow_scripts=scripts) as r:
        solo = {h: r.render(h, VP).image for h in ordinary[:6]}
        items = []
        for i, h in enumerate(ordinary):
            items.append(h)
            if i % 4 == 0:
                items.append(HOSTILE[(i // 4) % len(HOSTILE)])
        out = r.render_many([(h, VP) for h in items])
        for h, res in zip(items, out):
            if h in ordinary:
                assert not isinstance(res, RenderError), res
                i = ordinary.index(h)
                assert res.boxes and res.boxes[0].text == f"page {i}"
                assert tuple(res.image[140, 190]) == (i * 5, 255 - i * 5, 120)
                if h in solo:
                    assert np.array_equal(res.image, solo[h])
        # popups were closed and timed-out pages killed: only pooled pages stay open
        ctx_pages = r._call(_open_pages(r), 1)
        assert ctx_pages <= r.pool_size


async def _open_pages(r):
    return sum(len(c.pages) for c in r._contexts.values())


def test_memory_bomb_is_too_large_and_the_renderer_lives_on():
    bomb = "<script>const a = []; for (;;) a.push(new Uint8Array(64 << 20).fill(1));</script>"
    with Renderer(pool_size=1, timeout_s=8, allow_scripts=True, max_renderer_mb=400) as r:
        with pytest.raises(RenderError) as e:
            r.render(bomb, VP)
        assert e.value.reason in ("too_large", "timeout")
        assert r.render("<p>after</p>", VP).boxes[0].text == "after"
    assert e.value.reason == "too_large"


def test_busy_page_stops_burning_cpu_after_its_timeout():
    from render.proctree import renderer_pids

    def cpu_ticks():
        total = 0
        for pid in renderer_pids():
            try:
                f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
                total += int(f[11]) + int(f[12])
            except (OSError, IndexError):
                pass
        return total

    with Renderer(pool_size=1, timeout_s=1.5, allow_scripts=True) as r:
        r.render("<p>warm</p>", VP)
        busy = [
            "<script>(function f(){ setTimeout(f, 0); const t = Date.now(); while (Date.now() - t < 50); })()</script>",
            "<script>(function f(){ requestAnimationFrame(f); const t = Date.now(); while (Date.now() - t < 50); })()</script>",
            "<script>while (1) {}</script>",
        ]
        out = r.render_many([(h, VP) for h in busy])
        assert isinstance(out[2], RenderError) and out[2].reason == "timeout"
        time.sleep(0.3)
        t0 = cpu_ticks()
        time.sleep(1.0)
        used = (cpu_ticks() - t0) / os.sysconf("SC_CLK_TCK")
    assert used < 0.3, f"renderers used {used:.2f} CPU-seconds in the second after the timeout"


def test_renderer_images_are_decoded_once():
    with Renderer(pool_size=1, timeout_s=4) as r:
        res = r.render("<p>x</p>", VP)
    assert res.image is res.image and not res.image.flags.writeable
    assert np.array_equal(np.asarray(res.pil()), res.image)


@pytest.mark.parametrize("scripts", [False, True])
def test_a_page_that_navigated_never_serves_another_render(scripts):
    # after a refresh to about:blank the page would hold a document without the policy
    probe = '<img src="http://127.0.0.1:9/a.png"><p>probe</p>'
    with Renderer(pool_size=1, cache_size=0, timeout_s=4, allow_scripts=scripts) as r:
        for delay in ("0", "0.3"):
            try:
                r.render(f"<meta http-equiv=refresh content='{delay};url=about:blank'><p>x</p>", VP)
            except RenderError:
                pass  # navigating during its own render fails that render; fine
            time.sleep(0.6)
            res = r.render(probe, VP)
            assert res.blocked_requests == [] and [b.text for b in res.boxes] == ["", "probe"]
