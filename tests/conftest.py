import contextlib
import http.server
import json
import threading

import pytest

from render import Renderer


@pytest.fixture(scope="session")
def renderer():
    r = Renderer(pool_size=2, timeout_s=4.0)
    yield r
    r.close()


@contextlib.contextmanager
def chat_server(reply, delay_s: float = 0.0, statuses=()):
    """An OpenAI-compatible /chat/completions endpoint on loopback; reply(body) -> message content.

    Each request takes `delay_s`; the first answers take their codes from `statuses` (e.g. 429,
    503) before the real answers. Yields (base_url, requests_seen); `requests_seen.peak` is the
    most requests that were in flight at once."""
    import time

    class Seen(list):
        peak = 0

    seen = Seen()
    lock = threading.Lock()
    state = {"in_flight": 0, "codes": list(statuses)}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            with lock:
                seen.append((self.path, body))
                state["in_flight"] += 1
                seen.peak = max(seen.peak, state["in_flight"])
                code = state["codes"].pop(0) if state["codes"] else 200
            try:
                time.sleep(delay_s)
                if code != 200:
                    self.send_response(code)
                    self.end_headers()
                    self.wfile.write(b'{"error": "try later"}')
                    return
                self._answer(body)
            finally:
                with lock:
                    state["in_flight"] -= 1

        def _answer(self, body):
            data = json.dumps(
                {"choices": [{"message": {"role": "assistant", "content": reply(body)}}]}
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}/v1", seen
    finally:
        srv.shutdown()
