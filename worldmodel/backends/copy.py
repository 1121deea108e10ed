"""The copy baseline: predict that nothing changes."""

from __future__ import annotations

from ..types import Completion, Query
from .base import Backend


class CopyBackend(Backend):
    name = "copy"
    edits = True

    @classmethod
    def from_spec(cls, spec=None, **options) -> CopyBackend:
        return cls()

    def complete(self, queries: list[Query]) -> list[Completion]:
        out = []
        for q in queries:
            if q.screen.html:
                out.append(Completion(q.screen.html))
                continue
            vp = q.screen.viewport()
            out.append(
                Completion(
                    '<!DOCTYPE html><html><body style="margin:0">'
                    f'<div id="screen" style="width:{vp.width}px;height:{vp.height}px">'
                    f'<img src="{q.screen.data_url()}" style="width:{vp.width}px;height:{vp.height}px;display:block">'
                    "</div></body></html>"
                )
            )
        return out

    def complete_edits(self, queries: list[Query]) -> list[Completion]:
        """Nothing changes: the empty edit."""
        return [Completion("") for _ in queries]
