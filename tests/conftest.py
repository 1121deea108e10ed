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
def chat_server(reply):
    """An OpenAI-compatible /chat/completions endpoint on loopback; reply(body) -> message content.

    Yields (base_url, requests_seen)."""
    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            seen.append((self.path, body))
            data = json.dumps(
                {"choices": [{"message": {"role": "assistant", "content": reply(body)}}]}
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}/v1", seen
    finally:
        srv.shutdown()
