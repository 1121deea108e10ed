"""How untrusted HTML is allowed to run: the browser flags and the page policy.

Model output is untrusted code. It may try to fetch URLs, read local files, open peer-to-peer
connections, loop forever or build an enormous DOM; none of that may leak out or hang a batch.
The policy travels as response headers of the shell document each pooled page holds, so no
markup inside a render can move it, and the same policy is re-stated in flags where Chromium
has one.
"""

from __future__ import annotations

import os
import shutil

# The document every pooled page holds; renders replace its content, never its headers.
SHELL_URL = "http://render.wm.invalid/"
SHELL_HTML = "<!DOCTYPE html><html><head></head><body></body></html>"

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
    "--font-render-hinting=none",
    # Belt and braces under the request router: no host resolves and no proxy answers, so even
    # a speculative preconnect for a navigation never reaches a socket.
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=socks5://0.0.0.0:9",
    "--proxy-bypass-list=<-loopback>",
    # WebRTC: only proxied UDP (and the proxy is dead), no host candidates, so no mDNS names.
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--disable-features=WebRtcHideLocalIpsWithMdns,MediaRouter,DialMediaRouteProvider,"
    "OptimizationHints,Translate,InterestFeedContentSuggestions",
    "--disable-renderer-backgrounding",
    "--disable-background-timer-throttling",
]

# Only inline resources; no network, no file:, no frames, no forms, no popups, no top navigation.
_CSP_BASE = (
    "default-src 'none'; img-src data: blob:; style-src 'unsafe-inline' data:; font-src data:; "
    "media-src data:; frame-src 'none'; child-src 'none'; worker-src 'none'; connect-src 'none'; "
    "form-action 'none'; base-uri 'none'; manifest-src 'none'; object-src 'none'"
)
# `sandbox` without allow-popups/allow-forms/allow-top-navigation/allow-modals
_SANDBOX = "sandbox allow-same-origin"
PERMISSIONS_POLICY = ", ".join(
    f"{f}=()"
    for f in (
        "camera",
        "microphone",
        "geolocation",
        "usb",
        "serial",
        "hid",
        "bluetooth",
        "midi",
        "display-capture",
        "clipboard-read",
        "clipboard-write",
        "payment",
        "publickey-credentials-get",
        "screen-wake-lock",
        "fullscreen",
        "idle-detection",
        "local-fonts",
        "window-management",
        "otp-credentials",
        "storage-access",
    )
)


def csp(allow_scripts: bool) -> str:
    """The Content-Security-Policy header: scripts only inline and only when the caller allows them."""
    if allow_scripts:
        return f"{_CSP_BASE}; script-src 'unsafe-inline'; {_SANDBOX} allow-scripts"
    return f"{_CSP_BASE}; script-src 'none'; {_SANDBOX}"


def shell_response(allow_scripts: bool) -> tuple[int, dict[str, str], str]:
    """(status, headers, body) the router answers the shell document with."""
    headers = {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": csp(allow_scripts),
        "permissions-policy": PERMISSIONS_POLICY,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
    }
    return 200, headers, SHELL_HTML


# Kept for callers that build their own documents (the recorder serves real apps, not renders).
CSP = csp(allow_scripts=True)


# With scripts allowed (capture replay), the page realm loses the peer-connection APIs before any
# content script runs; the flags above are the second layer.
NO_WEBRTC_JS = """(() => {
  for (const n of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel',
                   'RTCSessionDescription', 'RTCIceCandidate', 'RTCRtpSender', 'RTCRtpReceiver'])
    try { Object.defineProperty(window, n, {value: undefined, writable: false, configurable: false}); } catch (e) {}
})();"""


def chromium_args(max_renderer_mb: int | None = None) -> list[str]:
    """Launch flags; a JS heap cap under the renderer cap turns most bombs into a fast crash."""
    args = list(CHROMIUM_ARGS)
    if max_renderer_mb:
        args.append(f"--js-flags=--max-old-space-size={max(64, max_renderer_mb // 2)}")
    return args


def chromium_path() -> str:
    """The browser to launch: $WM_CHROMIUM, else Debian's chromium on PATH."""
    path = os.environ.get("WM_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"Chromium not found at {path!r}: install it (apt-get install -y chromium) or set WM_CHROMIUM"
        )
    return path
