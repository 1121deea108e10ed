"""The hostile-input battery against `render.Renderer`: cases tried, escapes, leaks, hangs, recovery.

For each attack, with scripts off (the default for model output) and on (capture replay), on a
renderer with one pooled page:
  - escape: a request reached the request router, or a TCP connection reached a loopback listener;
  - leak: the probe page rendered right after the attack differs (pixels or boxes) from the probe
    rendered alone;
  - hang: the attack's render call or the probe's did not return within its deadline;
  - recovery: seconds from the attack's answer to the probe's answer.

python benchmarks/hostile_bench.py
"""

from __future__ import annotations

import socket
import threading
import time

import numpy as np

from render import Renderer, RenderError, Viewport

VP = Viewport(200, 150)
PROBE = (
    "<body style='margin:0;background:#fff'><p id=o style='font:14px monospace'>probe</p>"
    "<script>o.textContent = [window.name, typeof leak, history.length].join('|')</script></body>"
)


def attacks(url: str) -> dict[str, str]:
    return {
        "window.name + globals": "<script>window.name='x'; window.leak=1</script>",
        "history.pushState": "<script>for (let i=0;i<5;i++) history.pushState({}, '', '#'+i)</script>",
        "setInterval painter": "<script>setInterval(() => document.body && (document.body.style.background='lime'), 2)</script>",
        "MutationObserver": "<script>new MutationObserver(() => document.body.style.background='lime').observe(document, {subtree:true, childList:true})</script>",
        "prototype override": "<script>Element.prototype.getBoundingClientRect = () => ({left:0,top:0,right:999,bottom:999,width:999,height:999})</script>",
        "CSP via comment <head>": f"<!-- <head> --><img src='{url}/a'>",
        "CSP via template <head>": f"<template><head></template><img src='{url}/b'>",
        "CSP via title <head>": f"<title><head></title><img src='{url}/c'>",
        "CSP body before head": f"<body><img src='{url}/d'></body><head></head>",
        "fetch/XHR/beacon": f"<script>fetch('{url}/e').catch(()=>0); navigator.sendBeacon('{url}/f'); new Image().src='{url}/g'</script>",
        "iframe / refresh / form": f"<iframe src='{url}/h'></iframe><meta http-equiv=refresh content='0;url={url}/i'><form action='{url}/j'></form>",
        "CSS url / font / import": f"<style>@import url({url}/k); @font-face{{font-family:x;src:url({url}/l)}} p{{font-family:x;background:url({url}/m)}}</style><p>x</p>",
        "WebSocket / EventSource": f"<script>try{{new WebSocket('ws://{url[7:]}/n')}}catch(e){{}} try{{new EventSource('{url}/o')}}catch(e){{}}</script>",
        "WebRTC": "<script>try{const pc=new RTCPeerConnection({iceServers:[{urls:'stun:127.0.0.1:3478'}]}); pc.createDataChannel('x'); pc.createOffer().then(o=>pc.setLocalDescription(o))}catch(e){}</script>",
        "file:// read": "<img src='file:///etc/passwd'><iframe src='file:///etc/hostname'></iframe>",
        "popup flood": "<script>for (let i=0;i<50;i++) window.open('about:blank')</script>",
        "infinite loop": "<script>while(1){}</script>",
        "rAF busy loop": "<script>(function f(){requestAnimationFrame(f); const t=Date.now(); while(Date.now()-t<40);})()</script>",
        "1e5-deep DOM": "<div>" * 100000,
        "typed-array bomb": "<script>const a=[]; for(;;) a.push(new Uint8Array(64<<20).fill(1))</script>",
        "self-navigation": "<script>location.href='about:blank'</script>",
        "lone surrogate": "<p>\ud800</p>",
    }


class Listener:
    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.1)
        self.hits = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _run(self):
        while not self._stop.is_set():
            try:
                c, _ = self.sock.accept()
                self.hits += 1
                c.close()
            except OSError:
                continue

    def close(self):
        self._stop.set()
        self._t.join()
        self.sock.close()


def run(scripts: bool, listener: Listener) -> list[dict]:
    rows = []
    with Renderer(pool_size=1, cache_size=0, timeout_s=3, allow_scripts=scripts) as r:
        clean = r.render(PROBE, VP)
        for name, html in attacks(listener.url).items():
            before = listener.hits
            t0 = time.perf_counter()
            hang = False
            try:
                res = r.render(html, VP)
                outcome, seen = "rendered", len(res.blocked_requests)
            except RenderError as e:
                outcome, seen = e.reason, 0
                hang = "deadline" in str(e)
            t1 = time.perf_counter()
            time.sleep(0.2)  # let anything left running act
            try:
                probe = r.render(PROBE, VP)
                leak = not (
                    np.array_equal(probe.image, clean.image)
                    and [(b.text, b.w) for b in probe.boxes] == [(b.text, b.w) for b in clean.boxes]
                )
            except RenderError as e:
                leak, hang = True, hang or "deadline" in str(e)
            rows.append(
                dict(
                    case=name,
                    outcome=outcome,
                    escape=seen + listener.hits - before,
                    leak=leak,
                    hang=hang,
                    attack_s=t1 - t0,
                    recovery_s=time.perf_counter() - t1 - 0.2,
                )
            )
    return rows


def main() -> None:
    listener = Listener()
    runs = {}
    try:
        for scripts in (False, True):
            rows = runs[scripts] = run(scripts, listener)
            print(f"\nscripts {'on (capture replay)' if scripts else 'off (model output, the default)'}")
            print(
                f"{'case':28s} {'outcome':10s} {'escapes':>7s} {'leak':>5s} {'hang':>5s} {'attack s':>8s} {'recover s':>9s}"
            )
            for x in rows:
                print(
                    f"{x['case']:28s} {x['outcome']:10s} {x['escape']:7d} {str(x['leak']):>5s} {str(x['hang']):>5s} "
                    f"{x['attack_s']:8.2f} {x['recovery_s']:9.2f}"
                )
            print(
                f"cases {len(rows)}, escapes {sum(x['escape'] for x in rows)}, leaks {sum(x['leak'] for x in rows)}, "
                f"hangs {sum(x['hang'] for x in rows)}, worst recovery {max(x['recovery_s'] for x in rows):.2f} s"
            )
    finally:
        listener.close()
    from headline import record  # benchmarks/headline.py: the README's results table

    every = [x for rows in runs.values() for x in rows]
    record(
        "hostile_bench",
        f"escapes, leaks and hangs over {len(runs[False])} attacks, scripts off and on",
        sum(x["escape"] + x["leak"] + x["hang"] for x in every),
        None,
        "no baseline: each attack followed by a probe page",
        f"{len(runs[False])} hand-written attack pages",
        worst_recovery_s={
            "scripts off": round(max(x["recovery_s"] for x in runs[False]), 2),
            "scripts on": round(max(x["recovery_s"] for x in runs[True]), 2),
        },
    )


if __name__ == "__main__":
    main()
