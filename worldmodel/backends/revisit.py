"""revisit:PATH: a learned stage that answers with a screen the episode showed before, or abstains.

Runs after the stages that answer from recordings (`sim+memory+revisit:PATH`), and a checkpoint
folder holding a revisit head (`revisit.json`, worldmodel/revisit.py) runs it after itself when
loaded: `sim+memory+PATH` is sim, the checkpoint with memory's hints, then this. It needs
`Query.history` (`evaluate` fills it from the corpus' episodes; an agent passes its past screens);
without history, or below the head's threshold, it leaves the answer before it standing. It also
revises an answer an earlier stage settled: memory's exact hit is a recording of this screen and
action, but in another episode, whose words (its notes, its selection) are not this episode's.
"""

from __future__ import annotations

from pathlib import Path

from ..revisit import RevisitHead
from .base import Backend, Completion, Query


class RevisitBackend(Backend):
    name = "revisit"
    revises_settled = True

    def __init__(self, path: str | Path | None = None, head: RevisitHead | None = None):
        if head is None and path is None:
            raise ValueError("revisit needs a checkpoint folder or revisit.json (revisit:PATH)")
        self.head = head or RevisitHead.load(path)
        self.chosen = 0  # answers replaced since made: a caller reads how often it spoke

    @classmethod
    def from_spec(cls, spec, **options) -> RevisitBackend:
        return cls(spec.arg, **options)

    def complete(self, queries: list[Query]) -> list[Completion]:
        out = []
        for q in queries:
            pick = self.head.choose(q)
            if pick is None:
                out.append(Completion(q.screen.html or "", known=False))
                continue
            cand, p = pick
            self.chosen += 1
            out.append(
                Completion(
                    cand.screen.html or "",
                    note=f"the screen this episode showed {cand.steps_back} step(s) back (score {p:.2f})",
                    confidence=p,
                    settled=True,
                )
            )
        return out
