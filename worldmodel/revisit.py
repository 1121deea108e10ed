"""The revisit head: a small learned scorer of whether the next screen is one the episode showed before.

Why: a world model asked one step at a time cannot know an episode's own state. Back from a note
lands on *this* episode's list, not the list another episode recorded; a tab tapped again shows
what it showed a minute ago. Memory and a checkpoint answer from other episodes' recordings, so
they name the right kind of screen with another episode's words. The episode's earlier screens
(`Query.history`) hold the words; which of them, if any, is the next screen is what this head
learns, from what the stages before it got wrong on the training split (training/revisit.py).

It scores each earlier screen (the latest copy of each distinct one, the current screen itself
left out) from how alike it is to the answer before it (in structure and in words), to the
current screen, how far back it lies, the action's type, whether the action's own words (the
app it opens, the text it types) are on the current screen or the candidate, and how often it came
right after an earlier showing of the current screen in this episode: a one-hidden-layer network whose
weights are plain numbers in `revisit.json` beside a checkpoint (no pickle, no torch needed to
run it). The best-scoring screen replaces the answer where its score reaches the threshold chosen
on held-out episodes of the training split; below it the head abstains and the answer stands.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

from render.metrics import visible_text

from .backends.memory import jaccard, screen_key, skeleton, words
from .files import write_whole
from .types import ACTION_TYPES, Query, Screen

REVISIT_FILE = "revisit.json"
# the most recent distinct earlier screens scored per query: the most a bundled training episode
# holds, so a long exploration (a DroidBot trace of hundreds of steps) is scored as training was
MAX_CANDIDATES = 8
FEATURES = (
    "alike_answer",  # skeleton Jaccard: candidate against the answer before this stage
    "words_answer",  # visible-words Jaccard: candidate against that answer
    "alike_current",  # the same against the screen the action was taken on
    "words_current",
    "answer_alike_current",  # how far the answer moved from the current screen
    "answer_words_current",
    "answer_unchanged",  # 1 where the answer is the current screen (nothing known, or no change)
    "latest",  # 1 for the screen shown just before the current one
    "steps_back",  # 1 / how many steps back the candidate was shown
    "action_words_current",  # share of the action's words (text typed, app opened, key) on the current screen
    "action_words_candidate",  # the same on the candidate
    "followed_current",  # share of the current screen's earlier showings this candidate came right after
    *(f"action_{a}" for a in ACTION_TYPES),
)


class RevisitError(ValueError):
    """A revisit head file that cannot be read or does not fit FEATURES; names the file and why."""


@dataclass(frozen=True)
class Candidate:
    """One earlier screen of the episode, as the head sees it."""

    screen: Screen
    steps_back: int
    features: tuple[float, ...]


def candidates(q: Query) -> list[Candidate]:
    """The distinct earlier screens of `q`'s episode (each at its latest showing, the current one
    left out: the MAX_CANDIDATES most recent, latest first, then any older one that followed an
    earlier showing of the current screen) with their features; none where `q` has no history or
    no HTML."""
    current = q.origin or q.screen
    if not q.history or not current.html or not q.screen.html:
        return []
    ans_key, ans_sk, ans_w = _parts(q.screen.html)
    here, cur_sk, cur_w = _parts(current.html)
    unchanged = float(ans_key == here)
    act = [float(q.action.type == a) for a in ACTION_TYPES]
    said = frozenset(visible_text(" ".join(x for x in (q.action.text, q.action.app, q.action.key) if x)))
    keys = [_parts(s.html)[0] if s.html else "" for s in q.history]
    # what the episode showed right after each earlier showing of the current screen
    after = [keys[j + 1] if j + 1 < len(keys) else here for j, k in enumerate(keys) if k == here]
    seen = {here}
    out = []
    for back, (s, key) in enumerate(zip(reversed(q.history), reversed(keys)), start=1):
        if not key or key in seen:
            continue
        seen.add(key)
        if len(out) >= MAX_CANDIDATES and key not in after:
            continue
        _, sk, w = _parts(s.html)
        f = (
            jaccard(sk, ans_sk),
            jaccard(w, ans_w),
            jaccard(sk, cur_sk),
            jaccard(w, cur_w),
            jaccard(ans_sk, cur_sk),
            jaccard(ans_w, cur_w),
            unchanged,
            float(back == 1),
            1.0 / back,
            _share(said, cur_w),
            _share(said, w),
            after.count(key) / len(after) if after else 0.0,
            *act,
        )
        out.append(Candidate(s, back, f))
    return out


@lru_cache(maxsize=1024)
def _parts(html: str) -> tuple[str, frozenset, frozenset]:
    """A screen's key, skeleton and words: every query of an episode scores the same earlier
    screens again, so each is parsed once."""
    return screen_key(html), skeleton(html), words(html)


def _share(part: frozenset, whole: frozenset) -> float:
    """How much of `part` is in `whole` (0 when `part` is empty)."""
    return len(part & whole) / len(part) if part else 0.0


@dataclass
class RevisitHead:
    """The scorer: inputs standardised by `mean`/`scale`, a tanh hidden layer, a sigmoid out."""

    mean: list[float]
    scale: list[float]
    w1: list[list[float]]  # hidden x features
    b1: list[float]
    w2: list[float]
    b2: float
    threshold: float = 0.5
    features: list[str] = field(default_factory=lambda: list(FEATURES))
    trained_on: dict = field(default_factory=dict)  # what training measured: corpus, counts, gains

    def probability(self, f: tuple[float, ...]) -> float:
        x = [(v - m) / s for v, m, s in zip(f, self.mean, self.scale)]
        h = [math.tanh(sum(w * v for w, v in zip(row, x)) + b) for row, b in zip(self.w1, self.b1)]
        z = sum(w * v for w, v in zip(self.w2, h)) + self.b2
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def choose(self, q: Query) -> tuple[Candidate, float] | None:
        """The earlier screen the head would answer with and its score, or None where it abstains."""
        scored = [(self.probability(c.features), -c.steps_back, c) for c in candidates(q)]
        if not scored:
            return None
        p, _, best = max(scored, key=lambda x: x[:2])
        return (best, p) if p >= self.threshold else None

    def save(self, folder: str | Path) -> Path:
        path = Path(folder) / REVISIT_FILE
        write_whole(path, json.dumps(asdict(self), indent=1))
        return path

    @classmethod
    def load(cls, path: str | Path) -> RevisitHead:
        """From a checkpoint folder holding REVISIT_FILE, or the file itself."""
        p = Path(path)
        if p.is_dir():
            p = p / REVISIT_FILE
        try:
            head = cls(**json.loads(p.read_text()))
        except (OSError, ValueError, TypeError) as e:
            raise RevisitError(f"revisit head {p}: cannot be read ({e})") from None
        if head.features != list(FEATURES):
            raise RevisitError(f"revisit head {p}: trained on other features than this version computes")
        n, k = len(FEATURES), len(head.b1)
        if (
            len(head.mean) != n
            or len(head.scale) != n
            or any(len(r) != n for r in head.w1)
            or len(head.w2) != k
        ):
            raise RevisitError(f"revisit head {p}: weights do not fit {n} features and {k} hidden units")
        return head
