"""Any OpenAI-compatible chat endpoint (vLLM, SGLang, hosted APIs) as a world model."""

from __future__ import annotations

import os

import httpx

from ..prompt import build_messages
from ..types import png_data_url
from .base import Query


class OpenAIBackend:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        max_tokens: int = 4096,
        temperature: float = 0.0,
        timeout_s: float = 300.0,
        with_html: bool = True,
    ):
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"OpenAI-compatible base URL must start with http(s)://, got {base_url!r}")
        self.name = f"openai:{model}"
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.max_tokens, self.temperature, self.with_html = (
            model,
            max_tokens,
            temperature,
            with_html,
        )
        key = api_key or os.environ.get("WM_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY")
        self.client = httpx.Client(
            timeout=timeout_s, headers={"Authorization": f"Bearer {key}"} if key else {}
        )

    def _payload(self, q: Query) -> dict:
        messages, image = build_messages(q.screen, q.action, q.goal, self.with_html)
        url = png_data_url(image)
        out = []
        for m in messages:
            content = [
                {"type": "image_url", "image_url": {"url": url}} if c["type"] == "image" else c
                for c in m["content"]
            ]
            out.append({"role": m["role"], "content": content})
        return {
            "model": self.model,
            "messages": out,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }

    def complete(self, queries: list[Query]) -> list[str]:
        out = []
        for q in queries:
            r = self.client.post(self.url, json=self._payload(q))
            if r.status_code != 200:
                raise RuntimeError(f"{self.url} answered {r.status_code}: {r.text[:300]}")
            try:
                out.append(r.json()["choices"][0]["message"]["content"] or "")
            except (KeyError, IndexError, ValueError) as e:
                raise RuntimeError(f"{self.url} sent no choices[0].message.content: {r.text[:300]}") from e
        return out
