"""One client for OpenAI-compatible chat endpoints, shared by the world-model backend and the VLM judge.

A batch is sent concurrently (bounded), each request with a timeout; 429 and 5xx answers and
dropped connections are retried with exponential backoff, and after the last try the error
names the endpoint, the status and the start of its answer.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
DEFAULT_CONCURRENCY = 8
DEFAULT_RETRIES = 3


class ChatError(RuntimeError):
    """An endpoint that did not give a usable answer after every try."""


class ChatClient:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 300.0,
        concurrency: int = DEFAULT_CONCURRENCY,
        retries: int = DEFAULT_RETRIES,
        backoff_s: float = 0.5,
    ):
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"OpenAI-compatible base URL must start with http(s)://, got {base_url!r}")
        if concurrency < 1 or retries < 0:
            raise ValueError("concurrency must be >= 1 and retries >= 0")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.concurrency, self.retries, self.backoff_s = model, concurrency, retries, backoff_s
        key = api_key or os.environ.get("WM_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY")
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        self.client = httpx.Client(
            timeout=timeout_s, limits=limits, headers={"Authorization": f"Bearer {key}"} if key else {}
        )

    def complete(self, messages: list[dict], **params) -> str:
        """The assistant's text for one chat; raises ChatError after the last try."""
        body = {"model": self.model, "messages": messages, **params}
        last = "no attempt"
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                r = self.client.post(self.url, json=body)
            except httpx.TransportError as e:  # refused, reset, timed out
                last = f"{type(e).__name__}: {e}"
                continue
            if r.status_code in RETRY_STATUS:
                last = f"HTTP {r.status_code}: {r.text[:200]}"
                continue
            if r.status_code != 200:
                raise ChatError(f"{self.url} answered HTTP {r.status_code}: {r.text[:300]}")
            try:
                return r.json()["choices"][0]["message"]["content"] or ""
            except (KeyError, IndexError, TypeError, ValueError):
                raise ChatError(f"{self.url} sent no choices[0].message.content: {r.text[:300]}") from None
        raise ChatError(f"{self.url} failed after {self.retries + 1} tries: {last}")

    def complete_many(self, batch: list[list[dict]], **params) -> list[str]:
        """Every chat of `batch`, at most `concurrency` in flight, answers in order."""
        if len(batch) <= 1:
            return [self.complete(m, **params) for m in batch]
        with ThreadPoolExecutor(min(self.concurrency, len(batch))) as ex:
            return list(ex.map(lambda m: self.complete(m, **params), batch))

    def close(self) -> None:
        self.client.close()
