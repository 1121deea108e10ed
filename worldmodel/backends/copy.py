"""The copy baseline: predict that nothing changes."""

from __future__ import annotations

from ..types import Query


class CopyBackend:
    name = "copy"

    @classmethod
    def from_spec(cls, spec=None) -> CopyBackend:
        return cls()

    def complete(self, queries: list[Query]) -> list[str]:
        out = []
        for q in queries:
            if q.screen.html:
                out.append(q.screen.html)
                continue
            vp = q.screen.viewport()
            out.append(
                '<!DOCTYPE html><html><body style="margin:0">'
                f'<div id="screen" style="width:{vp.width}px;height:{vp.height}px">'
                f'<img src="{q.screen.data_url()}" style="width:{vp.width}px;height:{vp.height}px;display:block">'
                "</div></body></html>"
            )
        return out

    def complete_edits(self, queries: list[Query]) -> list[str]:
        """Nothing changes: the empty edit."""
        return ["" for _ in queries]
