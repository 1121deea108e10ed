"""Same-app memory: what this app did before, from its own recorded transitions, or nothing.

A user who records their own app and trains an agent offline on it needs a model of *that* app.
Retrieval (retrieval.py) looks across every app and transplants whatever the nearest screen
did, which on an app it was not built around does harm. This backend answers from the same
app's recordings first, from another app's only where that app recorded this very screen or one
as alike as the same program, and only when it can tell it knows:

- **exact**: the same screen (a hash of its captured DOM, canonicalised: the capture's hover,
  focus and ring markers and whitespace left out) and the same action (same type, text, key,
  direction; a point on the same element): the recorded next screen;
- **destination**: where the app is known to go whatever screen the action starts from: a tap on
  a link to another page whose target (its `href`) a recording of the same app reached, or an
  action without a point (home, a key) that led to one and the same recorded screen from at
  least two different screens: that recorded screen;
- **near**: a recorded screen of the same app, nearest first in structure (the elements' tags,
  ids and classes it holds: a list in selection mode is another state of the app than the
  same list browsed) and then in looks, whose action was of the same type on an element of the
  same role and text (tag, role, own text): its edit transplanted onto this screen
  (worldmodel/transplant.py), kept only where at least `min_agreement` of its lines find a
  home here;
- **another app's**: where this app's recordings give none of the above, another app's
  recording of this very screen (exact), or of a screen at least `min_alike_elsewhere` alike in
  structure (near): apps built on one shell (a phone's tabs recorded as separate apps, a system
  dialog, a shared launcher) show the same screens, and a screen that alike is the same program;
  `elsewhere` counts these answers (they count as exact or near in `stats` too);
- **none**: no change (the screen as it is, or as the stage before made it), and the
  prediction's note says why.

After another stage (`sim+memory`) it still looks up the screen the caller gave
(`Query.origin`). An exact or destination hit's recorded next screen replaces what the stage
before made. A near one does too where that stage left the screen as it was (on the phone apps
the recorded reaction, browser part included, is nearer the truth); where that stage changed
it (the browser scrolled, checked, typed) only the app's part of the reaction is carried over
onto it (on the docs apps the sim's scroll is nearer the truth). Where it knows nothing, that stage's
screen is kept as it is. An exact or destination answer is marked settled: a stage after memory
(`sim+memory+CHECKPOINT`) writes only where memory had a near answer or none; an answer of none
is marked not known, so that stage can tell it from a near answer of "the app did nothing".

`stats` counts the four outcomes. It indexes the corpus' train and validation splits by
default, never the id-test or test rows a model is evaluated on.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict

import numpy as np

from render.metrics import visible_text

from ..doc import Doc
from ..edit import diff
from ..focus import POINTED, action_targets, own_text
from ..transplant import reaction, transplant
from ..types import Action, Completion, Query, Screen, Transition
from .base import Backend
from .similarity import features

DEFAULT_SPLITS = ("train", "validation")
MIN_AGREEMENT = 0.5  # share of a near neighbour's edit lines that must find a home here
MIN_ALIKE = 0.7  # how alike in structure (skeleton Jaccard) a near neighbour's screen must be; chosen on
# the train split, each episode left out of the index in turn (benchmarks/RESULTS.md)
MIN_ALIKE_ELSEWHERE = 0.9  # the same for another app's recordings, and how alike in words (Jaccard of the
MIN_WORDS_ELSEWHERE = 0.2  # words a reader sees) its screen must be too: real apps share one toolkit's
# structure, not their words; both chosen on the train split, each app left out in turn (RESULTS.md)
NEAR_CANDIDATES = 6  # nearest same-app screens whose action target is checked, per query
_STATE_TOKEN = re.compile(r"(?<![\w-])wm-[\w-]+")
_CLASS_ATTR = re.compile(r'class="([^"]*)"')
_RING = re.compile(r'\s*data-wm-ring="[^"]*"')
_OPEN_TAG = re.compile(r"<([a-zA-Z][\w-]*)([^>]*)>")
_ID_ATTR = re.compile(r'\sid="([^"]*)"')
OUTCOMES = ("exact", "destination", "near", "none")


def screen_key(html: str) -> str:
    """A hash of a captured screen's DOM that two captures of the same screen share: the
    capture's state markers (hover, focus, active classes; the focus ring) and whitespace, which
    depend on where the pointer was left, are left out."""
    h = _RING.sub("", html or "")
    h = _CLASS_ATTR.sub(lambda m: 'class="' + " ".join(_STATE_TOKEN.sub("", m.group(1)).split()) + '"', h)
    h = re.sub(r'\s*class=""', "", h)
    h = re.sub(r"\s+", " ", h).strip()
    return hashlib.sha1(h.encode("utf-8", "replace")).hexdigest()


def skeleton(html: str) -> frozenset[str]:
    """What kinds of element a screen holds, text and counts aside: `tag`, `tag#id` and
    `tag.class` of every element (the capture's state classes left out). Two screens of one
    state of an app (the list browsed, with other items) share it; another state (the list in
    selection mode, a dialog open) adds or drops some."""
    out = set()
    for tag, attrs in _OPEN_TAG.findall(html or ""):
        tag = tag.lower()
        out.add(tag)
        m = _ID_ATTR.search(attrs)
        if m:
            out.add(f"{tag}#{m.group(1)}")
        c = _CLASS_ATTR.search(attrs)
        if c:
            out.update(f"{tag}.{k}" for k in _STATE_TOKEN.sub("", c.group(1)).split())
    return frozenset(out)


def words(html: str) -> frozenset[str]:
    """The words a reader sees on a screen (render/metrics.py's tokens), as a set."""
    return frozenset(visible_text(html or ""))


def jaccard(a: frozenset, b: frozenset) -> float:
    """How alike two sets are: shared over all (two empty sets are alike)."""
    return len(a & b) / len(a | b) if a or b else 1.0


def _element(html: str, n: int | None):
    """Element n of a screen (edit.py's numbering), or None where there is none."""
    if n is None or not html:
        return None
    els = Doc.of(html).elements
    return els[n] if 0 <= n < len(els) else None


def _link(html: str, n: int | None) -> str | None:
    """The `href` of the link element n is or sits in, where it leads to another page (not an
    anchor on this one, not a script)."""
    el = _element(html, n)
    a = el if el is None or el.name == "a" else el.find_parent("a")
    href = (a.get("href") or "").strip() if a is not None else ""
    return href if href and not href.startswith(("#", "javascript:")) else None


def _same_kind(a: Action, b: Action) -> bool:
    return (a.type, a.text, a.key, a.direction, a.app) == (b.type, b.text, b.key, b.direction, b.app)


def _role(html: str, n: int | None) -> tuple | None:
    """The element an action acts on, as what a person would call it: tag, role, own text."""
    el = _element(html, n)
    if el is None:
        return None
    return (el.name, el.get("role", ""), el.get("type", ""), own_text(el)[:60])


class MemoryBackend(Backend):
    name = "memory"
    edits = True
    OPTIONS = ("splits", "min_agreement", "min_alike", "min_alike_elsewhere", "min_words_elsewhere")

    def __init__(
        self,
        transitions,
        min_agreement: float = MIN_AGREEMENT,
        min_alike: float = MIN_ALIKE,
        min_alike_elsewhere: float = MIN_ALIKE_ELSEWHERE,
        min_words_elsewhere: float = MIN_WORDS_ELSEWHERE,
    ):
        self.sources: list[Transition] = [t for t in transitions if t.screen.html and t.next_screen.html]
        if not self.sources:
            raise ValueError("memory index is empty: the corpus splits have no transitions with HTML")
        self.min_agreement = min_agreement
        self.min_alike = min_alike
        self.min_alike_elsewhere = min_alike_elsewhere  # above 1: never answer from another app
        self.min_words_elsewhere = min_words_elsewhere
        self._words: dict[int, frozenset] = {}
        self.by_screen: dict[str, list[int]] = defaultdict(list)
        self.by_key: dict[tuple[str, str], list[int]] = defaultdict(list)
        self.by_app: dict[str, list[int]] = defaultdict(list)
        self.screen_keys = [screen_key(t.screen.html) for t in self.sources]
        for i, t in enumerate(self.sources):
            self.by_key[(t.app, self.screen_keys[i])].append(i)
            self.by_screen[self.screen_keys[i]].append(i)
            self.by_app[t.app].append(i)
        self.keys = np.stack([features(t.screen, t.action) for t in self.sources])
        self.stats: Counter = Counter()
        self.elsewhere: Counter = Counter()  # answers from another app's recordings, by outcome
        self._targets: dict[int, int | None] = {}
        self._roles: dict[int, tuple | None] = {}
        self._edits: dict[int, str] = {}
        self._skeletons: dict[int, frozenset] = {}
        self._next_keys: dict[int, str] = {}
        self._renderer = None
        self._left_out: str | None = None
        self._left_out_app: str | None = None

    def leave_out(self, episode_id: str | None, app: str | None = None) -> None:
        """Answer as if episode `episode_id`'s recordings (or every recording of `app`) were not
        indexed (None: answer from all). Training asks memory about each recorded episode from the
        rest of its app's recordings, as memory is asked about a new visit to an app it knows;
        what was computed stays cached."""
        self._left_out = episode_id
        self._left_out_app = app

    def each_episode_left_out(self, ts):
        """Yield, per episode of transitions `ts` in episode order, the indices of its transitions,
        with memory answering as if that episode's recordings were not indexed meanwhile; memory
        answers from all of them again after. The one loop every leave-one-episode-out caller runs."""
        episodes: dict[str, list[int]] = {}
        for i, t in enumerate(ts):
            episodes.setdefault(t.episode_id, []).append(i)
        try:
            for episode, mine in sorted(episodes.items()):
                self.leave_out(episode)
                yield mine
        finally:
            self.leave_out(None)

    def _kept(self, rows: list[int]) -> list[int]:
        if self._left_out is None and self._left_out_app is None:
            return rows
        return [
            i
            for i in rows
            if self.sources[i].episode_id != self._left_out and self.sources[i].app != self._left_out_app
        ]

    def use_renderer(self, renderer) -> None:
        """Which element an action acts on comes from the browser's hit test: a WorldModel lends its renderer."""
        if self._renderer is None:
            self._renderer = renderer

    @classmethod
    def from_corpus(cls, path=None, splits=DEFAULT_SPLITS, **kw) -> MemoryBackend:
        from ..dataset import ID_TEST, CorpusError, iter_transitions, load_corpus

        dd = load_corpus(path)
        if ID_TEST in splits or "test" in splits:
            raise ValueError("memory never indexes the test or id-test rows it is evaluated on")
        have = [s for s in splits if s in dd]
        if not have:
            raise CorpusError(f"corpus {path or 'bundled'} has none of the splits {', '.join(splits)}")
        return cls([t for s in have for t in iter_transitions(dd[s], skipped=[])], **kw)

    @classmethod
    def from_spec(
        cls,
        spec,
        splits=DEFAULT_SPLITS,
        min_agreement: float = MIN_AGREEMENT,
        min_alike: float = MIN_ALIKE,
        min_alike_elsewhere: float = MIN_ALIKE_ELSEWHERE,
        min_words_elsewhere: float = MIN_WORDS_ELSEWHERE,
    ) -> MemoryBackend:
        if isinstance(splits, str):
            splits = tuple(s for s in splits.split(",") if s)
        return cls.from_corpus(
            spec.arg or None,
            splits,
            min_agreement=float(min_agreement),
            min_alike=float(min_alike),
            min_alike_elsewhere=float(min_alike_elsewhere),
            min_words_elsewhere=float(min_words_elsewhere),
        )

    # ---- looking up ----------------------------------------------------------------------
    def _origin(self, q: Query) -> Screen:
        return q.origin or q.screen

    def _app(self, q: Query) -> str | None:
        return self._origin(q).app or q.screen.app

    def _hits(self, pairs: list[tuple[Screen, Action]]) -> list[int | None]:
        """The element each action acts on in its screen's HTML (None where unknown or no renderer)."""
        if self._renderer is None:
            return [None] * len(pairs)
        return action_targets(self._renderer, [Query(s, a) for s, a in pairs])

    def _source_targets(self, idx: list[int]) -> None:
        todo = [i for i in dict.fromkeys(idx) if i not in self._targets]
        if not todo:
            return
        got = self._hits([(self.sources[i].screen, self.sources[i].action) for i in todo])
        for i, n in zip(todo, got):
            self._targets[i] = n

    def _exact(self, q: Query, target: int | None, elsewhere: bool = False) -> int | None:
        origin = self._origin(q)
        key, app = screen_key(origin.html or ""), self._app(q)
        if elsewhere:
            same = [i for i in self._kept(self.by_screen.get(key, [])) if self.sources[i].app != app]
        else:
            same = self._kept(self.by_key.get((app, key), []))
        same = [i for i in same if _same_kind(self.sources[i].action, q.action)]
        if not same:
            return None
        if q.action.type not in POINTED or q.action.x is None:
            return same[0]
        # the same screen: a point on the same element is the same action
        self._source_targets(same)
        s = origin.device_scale_factor
        for i in same:
            a = self.sources[i].action
            if a.x is not None and abs(a.x - q.action.x) <= 2 * s and abs(a.y - q.action.y) <= 2 * s:
                return i
        if target is not None:
            for i in same:
                if self._targets.get(i) == target:
                    return i
        return None

    def _near(
        self, q: Query, role: tuple | None, here: frozenset, said: frozenset | None = None
    ) -> list[int]:
        """Same-app recorded transitions whose action is of the same kind on an element of the
        same role and text: nearest in structure (`here`: the caller's screen's skeleton) first,
        then in looks. Given `said` (the caller's screen's words), other apps' instead, whose
        screens must share those words too, or they are only the same toolkit."""
        app, elsewhere = self._app(q), said is not None
        rows = (
            [i for i in range(len(self.sources)) if self.sources[i].app != app]
            if elsewhere
            else self.by_app.get(app, [])
        )
        mine = [i for i in self._kept(rows) if _same_kind_loose(self.sources[i].action, q.action)]
        if not mine:
            return []
        origin = self._origin(q)
        d = ((self.keys[mine] - features(origin, q.action)) ** 2).sum(1)
        apart = [round(1.0 - jaccard(here, self._skeleton(i)), 2) for i in mine]
        ranked = sorted(range(len(mine)), key=lambda k: (apart[k], d[k]))
        least = self.min_alike_elsewhere if elsewhere else self.min_alike
        order = [mine[k] for k in ranked if apart[k] <= 1.0 - least]
        if elsewhere:
            order = [i for i in order if jaccard(said, self._words_of(i)) >= self.min_words_elsewhere]
        order = order[:NEAR_CANDIDATES]
        if q.action.type not in POINTED and q.action.type not in ("key",):
            return order
        if role is None:
            return []
        self._source_targets(order)
        return [i for i in order if self._source_role(i) == role]

    def _skeleton(self, i: int) -> frozenset:
        if i not in self._skeletons:
            self._skeletons[i] = skeleton(self.sources[i].screen.html)
        return self._skeletons[i]

    def _words_of(self, i: int) -> frozenset:
        if i not in self._words:
            self._words[i] = words(self.sources[i].screen.html)
        return self._words[i]

    def _destination(self, q: Query, target: int | None) -> int | None:
        """A recording of where this action leads from any screen of the app: the page a link's
        `href` leads to, or the one screen an unpointed action (home, a key) led to from two or
        more different screens. None where the recordings do not say."""
        origin = self._origin(q)
        app_rows = self._kept(self.by_app.get(self._app(q), []))
        if q.action.type in POINTED:
            href = _link(origin.html, target) if q.action.type == "tap" else None
            if href is None:
                return None
            # a recorded tap on a link to the same target that left its page
            cands = [
                i
                for i in app_rows
                if self.sources[i].action.type == "tap" and f'href="{href}"' in self.sources[i].screen.html
            ]
            self._source_targets(cands)
            went = [
                i
                for i in cands
                if _link(self.sources[i].screen.html, self._targets.get(i)) == href
                and self.screen_keys[i] != self._next_key(i)
            ]
        else:
            same = [i for i in app_rows if _same_kind(self.sources[i].action, q.action)]
            starts = {self.screen_keys[i] for i in same}
            ends = {self._next_key(i) for i in same}
            went = same if len(starts) >= 2 and len(ends) == 1 else []
        if not went:
            return None
        f = features(origin, q.action)
        return min(went, key=lambda i: float(((self.keys[i] - f) ** 2).sum()))

    def _next_key(self, i: int) -> str:
        if i not in self._next_keys:
            self._next_keys[i] = screen_key(self.sources[i].next_screen.html)
        return self._next_keys[i]

    def _source_role(self, i: int) -> tuple | None:
        """The role of the element recorded action i acted on, parsed once (pages run to 100s of KB)."""
        if i not in self._roles:
            self._roles[i] = _role(self.sources[i].screen.html, self._targets.get(i))
        return self._roles[i]

    def _edit(self, i: int) -> str:
        if i not in self._edits:
            t = self.sources[i]
            self._edits[i] = diff(t.screen.html, t.next_screen.html)
        return self._edits[i]

    def _answers(self, queries: list[Query], edit: bool) -> list[Completion]:
        """Per query: the next screen this app's recordings give for the caller's screen, as a
        document or as an edit of the screen being edited (after the sim, the sim's result); or
        no change where they give none."""
        from ..edit import try_apply

        origins = [self._origin(q) for q in queries]
        targets = self._hits([(o, q.action) for o, q in zip(origins, queries)])
        out = []
        for q, o, target in zip(queries, origins, targets):
            if not o.html or not q.screen.html:
                self.stats["none"] += 1
                out.append(
                    Completion(
                        "" if edit else (q.screen.html or ""), "no HTML to look up: no change", known=False
                    )
                )
                continue
            i = self._exact(q, target)
            j = self._destination(q, target) if i is None else None
            got, of = None, ""
            if i is None and j is None:
                here, role = skeleton(o.html), _role(o.html, target)
                got = self._transplanted(q, o, self._near(q, role, here), target)
                if got is None and self.min_alike_elsewhere <= 1.0:
                    # another app's recording of this screen, or of one as alike as one program's
                    said = words(o.html)
                    i = self._exact(q, target, elsewhere=True)
                    if i is None:
                        got = self._transplanted(
                            q, o, self._near(q, role, here, said), target, elsewhere=True
                        )
                    if i is not None or got:
                        k = i if got is None else got[1]
                        shared = jaccard(said, self._words_of(k))
                        of = f" (app {self.sources[k].app!r}, words {shared:.0%} alike)"
            if i is not None:
                kind, nxt, src = "exact", self.sources[i].next_screen.html, self.sources[i]
                note = f"exact: the recorded next screen of {src.episode_id} step {src.step}{of}"
                ed = None
            elif j is not None:
                kind, nxt, src, ed = "destination", self.sources[j].next_screen.html, self.sources[j], None
                note = f"destination: where {src.episode_id} step {src.step} went with this action"
            else:
                if got is None:
                    self.stats["none"] += 1
                    why = (
                        f"no recorded screen of {self._app(q)!r} with this action on this element"
                        if self._kept(self.by_app.get(self._app(q), []))
                        else f"no recordings of app {self._app(q)!r}"
                    )
                    out.append(Completion("" if edit else q.screen.html, f"{why}: no change", known=False))
                    continue
                ed, i, share = got
                src = self.sources[i]
                kind, nxt = "near", try_apply(o.html, ed)[0] or o.html
                alike = jaccard(here, self._skeleton(i))
                note = (
                    f"near: {src.episode_id} step {src.step}'s reaction transplanted ({share:.0%} of its"
                    f" lines; the screens {alike:.0%} alike in structure){of}"
                )
                if edit and q.origin is not None and _changed(o.html, q.screen.html):
                    # the stage before changed the screen (the browser scrolled, checked, typed):
                    # keep that, and carry over only the app's part of the recorded reaction
                    self.stats[kind] += 1
                    self.elsewhere[kind] += bool(of)
                    rec = self._edit(i)
                    anchors = (
                        {self._targets[i]: target}
                        if self._targets.get(i) is not None and target is not None
                        else {}
                    )
                    typing = src.action.type == q.action.type == "type"
                    react = transplant(
                        rec,
                        src.screen.html,
                        q.screen.html,
                        anchors,
                        src.action.text if typing else None,
                        q.action.text if typing else None,
                        reaction_only=True,
                    )
                    out.append(Completion(react, note + " after the stage before"))
                    continue
            self.stats[kind] += 1
            self.elsewhere[kind] += bool(of)
            if not edit:
                text = nxt
            elif ed is not None and q.origin is None:
                text = ed
            else:  # sure of the whole next screen: it replaces what the stage before made of it
                text = diff(q.screen.html, nxt)
            # a recording of this very transition: a later stage (a checkpoint) keeps it
            out.append(Completion(text, note, settled=kind in ("exact", "destination")))
        return out

    def _transplanted(
        self, q: Query, origin: Screen, near: list[int], target: int | None, elsewhere: bool = False
    ):
        """(edit of `origin`, source, agreement) from the first near neighbour whose recorded
        edit carries over onto the caller's screen well enough. Another app doing nothing on a
        screen like this one (beyond the browser's hover and focus markers) says nothing of this
        app, and would only silence a later stage: `elsewhere` passes such a neighbour by."""
        for i in near:
            src = self.sources[i]
            rec = self._edit(i)
            if elsewhere and not reaction(rec, src.screen.html).strip():
                continue
            if not rec.strip():
                return "", i, 1.0  # the app did nothing there
            anchors = (
                {self._targets[i]: target} if self._targets.get(i) is not None and target is not None else {}
            )
            typing = src.action.type == q.action.type == "type"
            stats: dict = {}
            ed = transplant(
                rec,
                src.screen.html,
                origin.html,
                anchors,
                src.action.text if typing else None,
                q.action.text if typing else None,
                stats=stats,
            )
            share = min(1.0, stats["carried"] / stats["lines"]) if stats.get("lines") else 0.0
            if ed and share >= self.min_agreement:
                return ed, i, share
        return None

    # ---- the Backend interface -----------------------------------------------------------
    def complete(self, queries: list[Query]) -> list[Completion]:
        return self._answers(list(queries), edit=False) if queries else []

    def complete_edits(self, queries: list[Query]) -> list[Completion]:
        return self._answers(list(queries), edit=True) if queries else []

    def hit_rates(self) -> dict[str, float]:
        n = sum(self.stats.values())
        return {k: self.stats[k] / n if n else 0.0 for k in OUTCOMES}


def _changed(before: str, after: str) -> bool:
    """Whether a stage changed the screen beyond the browser's hover and focus markers."""
    if screen_key(before) == screen_key(after):
        return False
    return bool(reaction(diff(before, after), before).strip())


def _same_kind_loose(a: Action, b: Action) -> bool:
    """Same type, and for keys, scrolls and swipes the same key or direction (typed text may differ)."""
    return a.type == b.type and a.key == b.key and a.direction == b.direction and a.app == b.app
