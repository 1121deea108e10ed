"""Kill any Chromium renderer process of ours whose memory passes a cap.

A typed-array bomb allocates outside the JS heap, so V8's heap flag does not stop it. This thread
polls the resident size of the renderer processes descended from this Python process (the
Playwright driver starts Chromium as our grandchild) and SIGKILLs one over the cap; its page
crashes and the render becomes RenderError("too_large"). Linux only (/proc); elsewhere it idles.
"""

from __future__ import annotations

import os
import signal
import threading

from .proctree import renderer_pids, rss_mb

POLL_S = 0.2


class MemoryWatchdog:
    def __init__(self, max_mb: int | None):
        self.max_mb = max_mb
        self.kills = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if not self.max_mb or not os.path.isdir("/proc/self") or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="wm-render-watchdog", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(POLL_S):
            try:
                for pid in renderer_pids():
                    if rss_mb(pid) > self.max_mb:
                        os.kill(pid, signal.SIGKILL)
                        self.kills += 1
            except Exception:  # noqa: BLE001 - a vanished process mid-scan is normal
                continue

    def stop(self) -> None:
        self._stop.set()
