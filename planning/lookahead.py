"""Lookahead: imagine what each candidate action leads to, and pick the best.

An agent proposes candidates; the world model imagines each next screen
(optionally rolling out further steps with a proposer, as a beam); a scorer
rates the imagined screens. When the agent is already confident, the gate
skips imagination altogether.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from render import Renderer
from worldmodel.model import WorldModel, render_pending
from worldmodel.types import Action, Prediction, Query, Screen

from .progress import TaskStates
from .scorers import Scorer, says_done


def _form(state) -> tuple:
    """What a screen's fields and boxes hold."""
    return [f.value for f in state.fields], state.checked


def _same_action(a: Action, b: Action, px: float = 2.0) -> bool:
    """The same kind of action with the same text or key, at the same point (within `px`)."""
    if (a.type, a.text, a.key, a.direction) != (b.type, b.text, b.key, b.direction):
        return False
    if a.x is None or b.x is None:
        return a.x is b.x
    return abs(a.x - b.x) <= px and abs((a.y or 0) - (b.y or 0)) <= px


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


@dataclass
class _Search:
    """A budgeted search's state: the candidates imagined so far (in the agent's order), each
    one's first-step score, best discounted score below it, best path, open leaves
    (score, screen, path) and depth searched; `offset`: how far into `every` it has looked."""

    screen: Screen
    goal: str
    every: list[Candidate]
    offset: int = 0
    chosen: list[Candidate] = field(default_factory=list)
    first: list[float] = field(default_factory=list)
    future: list[float | None] = field(default_factory=list)
    paths: list[list[Prediction]] = field(default_factory=list)
    leaves: list[list[tuple[float, Screen | None, list[Prediction]]]] = field(default_factory=list)
    depth_of: list[int] = field(default_factory=list)

    def value(self, i: int) -> float:
        f = self.future[i]
        return self.first[i] if f is None else max(self.first[i], f)


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
        budget: int | None = None,
        margin: float = 0.05,
        repeat_factor: float = 0.5,
    ):
        if depth < 1 or beam < 1:
            raise ValueError(f"depth ({depth}) and beam ({beam}) must be at least 1")
        if depth > 1 and proposer is None:
            raise ValueError("rolling out past one step needs a proposer for the later actions")
        if budget is not None and budget < 1:
            raise ValueError(f"budget ({budget}) must be at least 1 imagined step")
        self.world_model = WorldModel.load(world_model, renderer)
        self.scorer, self.proposer = scorer, proposer
        self.depth, self.beam, self.top_k = depth, beam, top_k
        self.confident_at, self.discount, self.renderer = confident_at, discount, renderer
        self.mode = mode  # the prediction mode: document, edit, auto; None: the world model's own
        # With a budget (imagined steps per decision) the search is not of a fixed shape: see
        # _rank_within_budget. `margin`: scores this close to the best are still unsure.
        self.budget, self.margin = budget, margin
        # A score's share kept by an action already taken in reality in the episode, taken
        # again, where the imagination shows it changing nothing (see _after_taken).
        self.repeat_factor = repeat_factor
        self._states = TaskStates()
        # the decision's screen and the real screens before it: its first imagined steps are
        # asked with that past (`Query.history`), steps from an imagined screen without it
        self._now: Screen | None = None
        self._past: tuple[Screen, ...] = ()
        self.imagined_steps = 0
        self.last_spent = 0  # imagined steps the last decision took

    def rank(
        self,
        screen: Screen,
        goal: str,
        candidates: Sequence[Candidate],
        taken: Sequence[tuple[Screen, Action]] = (),
    ) -> list[Ranked]:
        """Candidates ranked best first, each with the screens imagined for it.

        The first imagined step of every candidate is one batch; past it, the beams of all
        candidates advance together, one batch per depth. `taken`: the steps taken in reality so
        far in this episode, (screen, action), the last one leading to `screen` (_after_taken)."""
        every = sorted(candidates, key=lambda c: -c.confidence)
        self._now, self._past = screen, tuple(s for s, _ in taken)
        cands = every[: self.top_k]
        if not cands:
            return []
        if self.confident_at is not None and cands[0].confidence >= self.confident_at:
            return [Ranked(c.action, c.confidence, [], c.confidence) for c in cands]  # gate: trust the agent
        if self.budget is not None:
            return self._after_taken(screen, self._rank_within_budget(screen, goal, every), taken)
        before = self.imagined_steps
        preds = self._imagine([(screen, c.action) for c in cands], goal)
        scores = [self.scorer(screen, c.action, p, goal) for c, p in zip(cands, preds)]
        paths = [[p] for p in preds]
        if self.depth > 1:
            render_pending(preds)
            starts = [
                p.as_screen(screen) if p.ok and not self._done(screen, c.action, p, goal) else None
                for c, p in zip(cands, preds)
            ]
            for i, (future, fpath) in enumerate(self._rollouts(starts, goal, self.depth - 1)):
                if future is not None:
                    scores[i] += self.discount * future
                    paths[i] += fpath
        ranked = [Ranked(c.action, s, path, c.confidence) for c, s, path in zip(cands, scores, paths)]
        self.last_spent = self.imagined_steps - before
        return self._after_taken(screen, ranked, taken)

    def choose(
        self,
        screen: Screen,
        goal: str,
        candidates: Sequence[Candidate],
        taken: Sequence[tuple[Screen, Action]] = (),
    ) -> Action | None:
        ranked = self.rank(screen, goal, candidates, taken)
        return ranked[0].action if ranked else None

    def _after_taken(
        self, screen: Screen, ranked: list[Ranked], taken: Sequence[tuple[Screen, Action]]
    ) -> list[Ranked]:
        """Best first (ties to the agent's preference), an action already taken in reality in this
        episode on a screen whose fields and boxes held what they hold now, taken again, keeping
        `repeat_factor` of its score where its imagined screen shows no change (no value,
        checked state or text; focus aside). The imagination cannot show what such an action
        does (an app's script reacts to it), but reality did: the screens since are what it
        does, so its score (what the scorer read off its target, a Search button, a menu) was
        for a step already taken."""
        if taken:
            before = self._states.of(screen.html)
            form = ([f.value for f in before.fields], before.checked)
            done = [a for s, a in taken if _form(self._states.of(s.html)) == form]
            for r in ranked:
                first = r.imagined[0] if r.imagined else None
                if first is None or not first.ok or not any(_same_action(r.action, a) for a in done):
                    continue
                after = self._states.of(first.html)
                if (after.words, *_form(after)) == (before.words, *form):
                    r.score *= self.repeat_factor
        return sorted(ranked, key=lambda r: (-r.score, -r.confidence))

    def _done(self, current: Screen, action: Action, imagined: Prediction, goal: str) -> bool:
        return says_done(self.scorer, current, action, imagined, goal)

    def _imagine(self, pairs: list[tuple[Screen, Action]], goal: str) -> list[Prediction]:
        self.imagined_steps += len(pairs)
        return self.world_model.predict_many(
            [Query(s, a, goal, history=self._past if s is self._now else ()) for s, a in pairs],
            self.mode,
            lazy=True,
        )

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
            preds = self._imagine(pairs, goal)
            render_pending([p for p, (s, a) in zip(preds, pairs) if p.ok and not self._done(s, a, p, goal)])
            for (s, a), (i, acc, _, path), p in zip(pairs, owners, preds):
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

    def _rank_within_budget(self, screen: Screen, goal: str, every: list[Candidate]) -> list[Ranked]:
        """Best-first search in at most `budget` imagined steps for this decision.

        The agent's top_k candidates are imagined first. While steps remain and the decision is
        unsure:
        - wider: when no candidate stands out (the best is within `margin` of the median), the
          agent's next top_k candidates are imagined;
        - deeper: when several are within `margin` of the best, each of their best paths is
          extended by one step (the proposer's `beam` best actions on its last imagined screen).
        A candidate's value is the best of its own score and the scores found below it, each
        discounted by its depth: a deeper search cannot add up to more than a shallow one, so
        searching only the unsure candidates deeper does not favour them. A clear winner,
        finished paths, or the budget ends the search."""
        start = self.imagined_steps
        search = _Search(screen, goal, every)
        left = lambda: self.budget - (self.imagined_steps - start)  # noqa: E731
        self._widen(search, left())
        while left() > 0 and search.chosen:
            values = [search.value(i) for i in range(len(search.chosen))]
            best = max(values)
            unsure = [i for i, v in enumerate(values) if v >= best - self.margin]
            if best <= sorted(values)[len(values) // 2] + self.margin and search.offset < len(every):
                self._widen(search, left())  # nothing shows progress: look wider
                continue
            if len(unsure) <= 1 or not self._deepen(search, unsure, left()):
                break  # a clear winner, or nothing left to extend
        self.last_spent = self.imagined_steps - start
        ranked = [
            Ranked(c.action, search.value(i), search.paths[i], c.confidence)
            for i, c in enumerate(search.chosen)
        ]
        return sorted(ranked, key=lambda r: (-r.score, -r.confidence))

    def _widen(self, search: _Search, left: int) -> bool:
        """Imagine the agent's next top_k candidates (at most `left`) from the current screen;
        False when none are left."""
        screen, goal = search.screen, search.goal
        more = search.every[search.offset : search.offset + min(self.top_k, left)]
        search.offset += len(more)
        if not more:
            return False
        preds = self._imagine([(screen, c.action) for c in more], goal)
        done = [self._done(screen, c.action, p, goal) for c, p in zip(more, preds)]
        render_pending([p for p, d in zip(preds, done) if p.ok and not d] if self.proposer else [])
        for c, p, d in zip(more, preds, done):
            search.chosen.append(c)
            search.first.append(self.scorer(screen, c.action, p, goal))
            search.future.append(None)
            search.paths.append([p])
            alive = p.ok and not d and self.proposer is not None
            search.leaves.append([(0.0, p.as_screen(screen), [p])] if alive else [])
            search.depth_of.append(1)
        return True

    def _deepen(self, search: _Search, unsure: list[int], left: int) -> bool:
        """Extend each unsure candidate's best paths by one imagined step (the proposer's `beam`
        best actions on each leaf, each candidate's best options first, at most `left` steps);
        False when there was nothing to extend."""
        goal = search.goal
        options = []  # (rank, candidate, leaf, action): each candidate's best options first
        for i in unsure:
            for acc, s, path in search.leaves[i]:
                ranked = sorted(self.proposer(s, goal), key=lambda c: -c.confidence)[: self.beam]
                options += [(r, i, acc, s, path, c.action) for r, c in enumerate(ranked)]
        options.sort(key=lambda o: o[0])  # stable: a short budget still reaches every candidate
        options = options[:left]
        pairs = [(s, a) for _, _, _, s, _, a in options]
        owners = [(i, path) for _, i, _, _, path, _ in options]
        if not pairs:
            return False
        preds = self._imagine(pairs, goal)
        done = [self._done(s, a, p, goal) for (s, a), p in zip(pairs, preds)]
        render_pending([p for p, d in zip(preds, done) if p.ok and not d])
        grown: dict[int, list] = {}
        for (s, a), (i, path), p, d in zip(pairs, owners, preds, done):
            if not p.ok:
                continue
            v = (self.discount ** search.depth_of[i]) * self.scorer(s, a, p, goal)
            if search.future[i] is None or v > search.future[i]:
                search.future[i], search.paths[i] = v, [*path, p]
            grown.setdefault(i, []).append((v, None if d else p.as_screen(s), path + [p]))
        for i in unsure:
            ex = sorted(grown.get(i, []), key=lambda e: -e[0])
            search.leaves[i] = [e for e in ex[: self.beam] if e[1] is not None]
            search.depth_of[i] += 1
        return True
