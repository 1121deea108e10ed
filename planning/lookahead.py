"""Lookahead: imagine what each candidate action leads to, and pick the best.

An agent proposes candidates; the world model imagines each next screen
(optionally rolling out further steps with a proposer, as a beam); a scorer
rates the imagined screens. When the agent is already confident, the gate
skips imagination altogether.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from worldmodel import Action, Prediction, Query, Renderer, Screen, WorldModel

from .scorers import Scorer, says_done


@dataclass
class Candidate:
    action: Action
    confidence: float = 0.0  # the agent's own belief, in [0, 1]


@dataclass
class Ranked:
    action: Action
    score: float
    imagined: list[Prediction] = field(default_factory=list)  # first step, then the best rollout
    confidence: float = 0.0


# An agent is a plain callable: (screen, goal) -> candidates, best first or not.
Agent = Callable[[Screen, str], Sequence[Candidate]]


def as_agent(fn: Callable[[Screen, str], Sequence]) -> Agent:
    """Accept agents that return Actions, (Action, confidence) pairs, or Candidates."""

    def agent(screen: Screen, goal: str) -> list[Candidate]:
        out = []
        for c in fn(screen, goal):
            if isinstance(c, Candidate):
                out.append(c)
            elif isinstance(c, Action):
                out.append(Candidate(c, 0.0))
            else:
                a, conf = c
                out.append(Candidate(a, float(conf)))
        return out

    return agent


class Lookahead:
    def __init__(
        self,
        world_model: str | WorldModel,
        scorer: Scorer,
        proposer: Agent | None = None,
        depth: int = 1,
        beam: int = 1,
        top_k: int = 5,
        confident_at: float | None = 0.9,
        discount: float = 0.9,
        renderer: Renderer | None = None,
        mode: str | None = None,
    ):
        if depth < 1 or beam < 1:
            raise ValueError(f"depth ({depth}) and beam ({beam}) must be at least 1")
        if depth > 1 and proposer is None:
            raise ValueError("rolling out past one step needs a proposer for the later actions")
        self.world_model = WorldModel.load(world_model, renderer)
        self.scorer, self.proposer = scorer, proposer
        self.depth, self.beam, self.top_k = depth, beam, top_k
        self.confident_at, self.discount, self.renderer = confident_at, discount, renderer
        self.mode = mode  # the prediction mode: document, edit, auto; None: the world model's own
        self.imagined_steps = 0

    def rank(self, screen: Screen, goal: str, candidates: Sequence[Candidate]) -> list[Ranked]:
        """Candidates ranked best first, each with the screens imagined for it.

        The first imagined step of every candidate is one batch; past it, the beams of all
        candidates advance together, one batch per depth."""
        cands = sorted(candidates, key=lambda c: -c.confidence)[: self.top_k]
        if not cands:
            return []
        if self.confident_at is not None and cands[0].confidence >= self.confident_at:
            return [Ranked(c.action, c.confidence, [], c.confidence) for c in cands]  # gate: trust the agent
        preds = self._imagine([(screen, c.action) for c in cands], goal)
        scores = [self.scorer(screen, c.action, p, goal) for c, p in zip(cands, preds)]
        paths = [[p] for p in preds]
        if self.depth > 1:
            starts = [
                p.as_screen(screen) if p.ok and not self._done(screen, c.action, p, goal) else None
                for c, p in zip(cands, preds)
            ]
            for i, (future, fpath) in enumerate(self._rollouts(starts, goal, self.depth - 1)):
                if future is not None:
                    scores[i] += self.discount * future
                    paths[i] += fpath
        ranked = [Ranked(c.action, s, path, c.confidence) for c, s, path in zip(cands, scores, paths)]
        # ties go to the agent's own preference
        return sorted(ranked, key=lambda r: (-r.score, -r.confidence))

    def choose(self, screen: Screen, goal: str, candidates: Sequence[Candidate]) -> Action | None:
        ranked = self.rank(screen, goal, candidates)
        return ranked[0].action if ranked else None

    def _done(self, current: Screen, action: Action, imagined: Prediction, goal: str) -> bool:
        return says_done(self.scorer, current, action, imagined, goal)

    def _imagine(self, pairs: list[tuple[Screen, Action]], goal: str) -> list[Prediction]:
        self.imagined_steps += len(pairs)
        return self.world_model.predict_many([Query(s, a, goal) for s, a in pairs], self.mode)

    def _rollouts(self, starts: list[Screen | None], goal: str, depth: int):
        """For each start, the best discounted score reachable in `depth` more imagined steps
        (beam search) and its path; (None, []) where nothing could be imagined."""
        beams = [[(0.0, s, [])] if s is not None else [] for s in starts]
        best: list[tuple[float | None, list[Prediction]]] = [(None, []) for _ in starts]
        for d in range(depth):
            pairs, owners = [], []
            for i, beam in enumerate(beams):
                for acc, s, path in beam:
                    for c in sorted(self.proposer(s, goal), key=lambda c: -c.confidence)[: self.beam]:
                        pairs.append((s, c.action))
                        owners.append((i, acc, s, path))
            if not pairs:
                break
            expanded: list[list] = [[] for _ in starts]
            for (s, a), (i, acc, _, path), p in zip(pairs, owners, self._imagine(pairs, goal)):
                if not p.ok:
                    continue
                v = acc + (self.discount**d) * self.scorer(s, a, p, goal)
                nxt = None if self._done(s, a, p, goal) else p.as_screen(s)
                expanded[i].append((v, nxt, path + [p]))
            for i, ex in enumerate(expanded):
                if not ex:
                    beams[i] = []
                    continue
                ex.sort(key=lambda x: -x[0])
                if best[i][0] is None or ex[0][0] > best[i][0]:
                    best[i] = (ex[0][0], ex[0][2])
                beams[i] = [e for e in ex[: self.beam] if e[1] is not None]  # a finished path stops
        return best
