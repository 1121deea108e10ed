"""Retrieval baseline: the next screen of the most similar recorded (screen, action).

It is the CPU default because it needs no weights, and a useful bar: a world
model that cannot beat nearest-neighbour lookup has not learned dynamics.

In edit mode it transplants instead (worldmodel/transplant.py): the nearest transition's edit,
re-addressed onto the current screen (the element its action hit becomes the one this action
hits, found by the browser's hit test on both screens), or nothing (copy) when none of it applies.
After another stage (`sim+retrieval`) it is a stage that must not do harm where it is unsure: a
transplant from another app's recording is left out (on unseen MiniWoB++ tasks other tasks'
end covers, all of whose lines found a home, cost 0.05 SSIM: RESULTS.md, eleventh round; the
option `other_apps=True` allows them), and one from the same app is kept only where at least
`min_agreement` of its lines find a home on this screen; else the screen stays as the stage
before made it, and the note says so.
"""

from __future__ import annotations

import numpy as np

from render import Viewport

from ..edit import diff
from ..focus import point_targets
from ..transplant import transplant
from ..types import Action, Completion, Query, Transition
from .base import Backend
from .similarity import features

# After another stage: the share of the nearest transition's edit lines that must find a home on
# this screen for its transplant to be carried out (benchmarks/inapp_bench.py measures it).
MIN_AGREEMENT = 1.0


class RetrievalBackend(Backend):
    name = "retrieval"
    edits = True
    OPTIONS = ("split", "transitions", "min_agreement", "other_apps")

    def __init__(
        self,
        keys: np.ndarray,
        next_html: list[str],
        sources: list[tuple[str, Action, float]] | None = None,
        apps: list[str] | None = None,
        min_agreement: float = MIN_AGREEMENT,
        other_apps: bool = False,
    ):
        if len(keys) == 0:
            raise ValueError("retrieval index is empty: the corpus split has no transitions")
        self.keys, self.next_html = keys, next_html
        self.sources = sources or [("", Action("wait"), 1.0)] * len(next_html)  # (html, action, scale)
        self.apps = apps or [""] * len(next_html)
        self.min_agreement = min_agreement
        self.other_apps = other_apps
        self._edits: dict[int, str] = {}
        self._renderer = None

    def use_renderer(self, renderer) -> None:
        """Transplants find the tapped element from rendered boxes: a WorldModel lends its renderer."""
        if self._renderer is None:
            self._renderer = renderer

    @classmethod
    def from_transitions(cls, transitions, min_agreement: float = None) -> RetrievalBackend:
        """Index recorded transitions: Transition objects, or a datasets split of corpus rows."""
        from ..dataset import iter_transitions

        if hasattr(transitions, "column_names"):  # a datasets.Dataset
            transitions = iter_transitions(transitions, skipped=[])
        keys, htmls, sources, apps = [], [], [], []
        for t in transitions:
            if not isinstance(t, Transition):
                raise TypeError(f"retrieval indexes Transitions, got {type(t).__name__}")
            keys.append(features(t.screen, t.action))
            htmls.append(t.next_screen.html or "")
            sources.append((t.screen.html or "", t.action, t.screen.device_scale_factor))
            apps.append(t.app)
        gate = MIN_AGREEMENT if min_agreement is None else min_agreement
        return cls(np.stack(keys) if keys else np.zeros((0, 1)), htmls, sources, apps, gate)

    @classmethod
    def from_corpus(cls, path=None, split: str = "train", min_agreement: float = None) -> RetrievalBackend:
        from ..dataset import CorpusError, load_corpus

        dd = load_corpus(path)
        if split not in dd:
            raise CorpusError(f"corpus {path or 'bundled'} has no {split!r} split (has {', '.join(dd)})")
        return cls.from_transitions(dd[split], min_agreement)

    @classmethod
    def from_spec(
        cls,
        spec,
        split: str = "train",
        transitions=None,
        min_agreement: float = None,
        other_apps: bool = False,
    ) -> RetrievalBackend:
        r = (
            cls.from_transitions(transitions, min_agreement)
            if transitions is not None
            else cls.from_corpus(spec.arg or None, split, min_agreement)
        )
        r.other_apps = other_apps
        return r

    def nearest(self, queries: list[Query]) -> list[int]:
        """The index of each query's nearest recorded (screen, action)."""
        f = np.stack([features(q.screen, q.action) for q in queries])
        # squared distances of every query to every key, as one matrix product
        d = (f**2).sum(1)[:, None] - 2 * f @ self.keys.T + (self.keys**2).sum(1)[None, :]
        return [int(i) for i in np.argmin(d, axis=1)]

    def complete(self, queries: list[Query]) -> list[Completion]:
        if not queries:
            return []
        return [Completion(self.next_html[i]) for i in self.nearest(queries)]

    def complete_edits(self, queries: list[Query]) -> list[Completion]:
        """The nearest transition's edit transplanted onto each query's screen."""
        if not queries:
            return []
        idx = self.nearest(queries)
        anchors = self._anchors(queries, idx)
        out = []
        for q, i, anchor in zip(queries, idx, anchors):
            src, act, _ = self.sources[i]
            if not src or not self.next_html[i] or not q.screen.html:
                out.append(Completion("", "the nearest transition has no HTML to take an edit from: copy"))
                continue
            if i not in self._edits:
                self._edits[i] = diff(src, self.next_html[i])
            same_typing = act.type == q.action.type == "type"
            stats: dict = {}
            edit = transplant(
                self._edits[i],
                src,
                q.screen.html,
                anchor,
                act.text if same_typing else None,
                q.action.text if same_typing else None,
                reaction_only=q.applied,
                stats=stats,
            )
            share = min(1.0, stats["carried"] / stats["lines"]) if stats.get("lines") else 0.0
            app = (q.origin or q.screen).app
            if edit and q.applied and not self.other_apps and self.apps[i] != app:
                out.append(
                    Completion(
                        "",
                        f"unsure: the nearest transition is of another app ({self.apps[i]}): the screen is kept",
                    )
                )
                continue
            if edit and q.applied and share < self.min_agreement:
                out.append(
                    Completion(
                        "",
                        f"unsure: {share:.0%} of the nearest transition's edit finds a home here "
                        f"(below {self.min_agreement:.0%}): the screen is kept",
                    )
                )
                continue
            out.append(
                Completion(
                    edit, "" if edit else "nothing of the nearest transition's edit applies here: copy"
                )
            )
        return out

    def _anchors(self, queries: list[Query], idx: list[int]) -> list[dict[int, int]]:
        """For each query: {element the recorded action hit: element this action hits}."""
        out: list[dict[int, int]] = [{} for _ in queries]
        if self._renderer is None:
            return out
        todo = [
            k
            for k, (q, i) in enumerate(zip(queries, idx))
            if q.screen.html
            and self.sources[i][0]
            and q.action.x is not None
            and self.sources[i][1].x is not None
        ]
        if not todo:
            return out
        items = []
        for k in todo:
            src, act, scale = self.sources[idx[k]]
            q = queries[k]
            s = q.screen.device_scale_factor
            w, h = q.screen.viewport().width, q.screen.viewport().height
            items += [
                (src, Viewport(w, h, scale), act.x / scale, act.y / scale),
                (q.screen.html, q.screen.viewport(), q.action.x / s, q.action.y / s),
            ]
        hits = point_targets(self._renderer, items)
        for n, k in enumerate(todo):
            a, b = hits[2 * n], hits[2 * n + 1]
            if a is not None and b is not None:
                out[k] = {a: b}
        return out
