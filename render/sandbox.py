"""How untrusted HTML is allowed to run: the browser flags and the page policy.

Model output is untrusted code. It may try to fetch URLs, read local files, loop
forever or build an enormous DOM; none of that may leak out or hang a batch.
"""

from __future__ import annotations

import os
import re
import shutil

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
]

# Only inline resources; no network, no file:, no frames from elsewhere.
CSP = (
    "default-src 'none'; img-src data: blob:; style-src 'unsafe-inline' data:; "
    "font-src data:; media-src data:; script-src 'unsafe-inline'; frame-src 'none'; "
    "connect-src 'none'; form-action 'none'; base-uri 'none'"
)
_CSP_META = f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
_HEAD_OPEN = re.compile(r"<head\b[^>]*>", re.IGNORECASE)


def chromium_path() -> str:
    """The browser to launch: $WM_CHROMIUM, else Debian's chromium on PATH."""
    path = os.environ.get("WM_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"Chromium not found at {path!r}: install it (apt-get install -y chromium) or set WM_CHROMIUM"
        )
    return path


def with_policy(html: str) -> str:
    """Put the CSP meta first in <head> so the parser applies it before any other content."""
    m = _HEAD_OPEN.search(html)
    if m:
        return html[: m.end()] + _CSP_META + html[m.end() :]
    return _CSP_META + html
