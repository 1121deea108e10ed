"""Any OpenAI-compatible chat endpoint (vLLM, SGLang, hosted APIs) as a world model; a batch goes concurrently."""

from __future__ import annotations

from ..chat import DEFAULT_CONCURRENCY, DEFAULT_RETRIES, ChatClient
from ..prompt import build_messages
from ..types import Completion, Query, png_data_url
from .base import Backend


def chat_messages(messages: list[dict], image) -> list[dict]:
    """The prompt's messages with its one image slot filled as a data URL, as the chat API wants."""
    url = png_data_url(image)
    return [
        {
            "role": m["role"],
            "content": [
                {"type": "image_url", "image_url": {"url": url}} if c["type"] == "image" else c
                for c in m["content"]
            ],
        }
        for m in messages
    ]


class OpenAIBackend(Backend):
    edits = True

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        max_tokens: int = 4096,
        temperature: float = 0.0,
        timeout_s: float = 300.0,
        with_html: bool = True,
        concurrency: int = DEFAULT_CONCURRENCY,
        retries: int = DEFAULT_RETRIES,
    ):
        self.name = f"openai:{model}"
        self.chat = ChatClient(base_url, model, api_key, timeout_s, concurrency, retries)
        self.url = self.chat.url
        self.max_tokens, self.temperature, self.with_html = max_tokens, temperature, with_html

    OPTIONS = ("api_key", "max_tokens", "temperature", "timeout_s", "with_html", "concurrency", "retries")

    @classmethod
    def from_spec(cls, spec, **options) -> OpenAIBackend:
        return cls(spec.arg, spec.model, **options)

    def complete(self, queries: list[Query]) -> list[Completion]:
        return self._ask(queries, "document")

    def complete_edits(self, queries: list[Query]) -> list[Completion]:
        """One edit of each query's current screen (the edit-mode prompt contract)."""
        return self._ask(queries, "edit")

    def _ask(self, queries: list[Query], mode: str) -> list[Completion]:
        batch = [
            chat_messages(
                *build_messages(q.screen, q.action, q.goal, self.with_html, mode=mode, applied=q.applied)
            )
            for q in queries
        ]
        texts = self.chat.complete_many(batch, max_tokens=self.max_tokens, temperature=self.temperature)
        return [Completion(t) for t in texts]

    def close(self) -> None:
        self.chat.close()
