"""The `sim` world model: the browser's own physics on the current screen's HTML.

Load the screen's HTML in the sandbox, perform the action with real input events, capture the
result with the corpus' capture (render/interact.py). What a browser does with no scripts, it
gets right by construction: a tap checks a checkbox, picks a radio, focuses a field or follows an
in-page anchor; typed text lands in the field; Enter, Tab, arrows and Backspace act as keys do;
scroll and swipe move the box under the finger. What an app's scripts would do (a reply after
Submit, a new page after a link) it cannot know: the screen stays as it was and the Prediction's
note says why. Compose it with a learned model (`sim+MODEL`) for those reactions.

A screen without HTML has nothing to act on: the sim then copies the screenshot and says so.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import OrderedDict

from render import Interaction, Renderer, RenderError
from render.capture import FOCUS_CLASS, STATE_CLASS
from render.interact import action_events, sim_ops

from ..doc import Doc
from ..edit import diff, parse_edit, quote, try_apply
from ..types import Action, Completion, Query
from .base import Backend
from .copy import CopyBackend


def action_ops(action: Action, scale: float, width: int, height: int) -> tuple[list[tuple], str]:
    """The input operations (CSS pixels) that carry out `action`, and a note when it has none: the
    one action -> input events mapping (render/interact.py), as a page with scripts off takes it."""
    return sim_ops(action_events(action, scale, width, height))


def _rule_key(rule: str) -> str:
    """A stylesheet rule with the CSSOM's spacing and last semicolons taken out."""
    return re.sub(r"\s+", "", rule).replace(";}", "}")


def as_edit_of(current: str, captured: str) -> str:
    """The sim's capture written as the current screen with the sim's element changes made.

    With scripts off nothing the sim does touches a stylesheet: when the current screen is a
    capture, the capture after acting only writes its rules out again, in another form (the
    CSSOM's spacing; rules for elements the corpus' compaction removed left out). So the current
    stylesheet stays. State classes no rule reads (`wm-focus-within` on every ancestor of a tapped
    field), bar the focused element's own, and `data-` attributes no rule reads (the capture's
    focus-ring marker) are left out, as the corpus' compaction leaves them out
    (render/compact.py). What comes back reads like a recorded screen: a model after the sim
    (`sim+MODEL`) edits the form it was trained on, and the sim's edit is only what it did.
    The capture as it is where it wrote rules of its own (the current screen was not a capture)
    or its change is a whole other document."""
    if not current or not captured:
        return captured
    sheet, again = Doc.of(current).stylesheet, Doc.of(captured).stylesheet
    rules = (sheet.string or "") if sheet is not None else ""
    known = {_rule_key(r) for r in rules.split("\n")}
    if again is not None and any(
        _rule_key(r) not in known for r in (again.string or "").split("\n") if r.strip()
    ):
        return captured

    def read(c: str) -> bool:
        return not STATE_CLASS.match(c) or c == FOCUS_CLASS or f".{c}" in rules

    lines = []
    for e in parse_edit(diff(current, captured)):
        if e.op == "screen":
            return captured
        if e.op in ("css-del", "css-ins"):
            continue
        line = e.line
        if e.op == "class":
            changes = [c for c in e.args if read(c[1:])]
            if not changes:
                continue
            line = " ".join(["class", str(e.number), *changes])
        elif e.op == "attr" and e.args[0].startswith("data-") and e.args[0] not in rules:
            continue
        elif e.op == "attr" and e.args[0] == "class":
            line = f"attr {e.number} class {quote(' '.join(c for c in e.args[1].split() if read(c)))}"
        lines.append(line)
    html, err = try_apply(current, "\n".join(lines))
    return captured if err else html


class SimBackend(Backend):
    """Browser physics as a backend: one concurrent batch of interactions per call.

    By default it acts on pooled pages (Renderer.interact_many's `pooled`: a page is not opened
    and closed per step) and keeps the last `cache_size` steps by (screen HTML, viewport,
    action): a planner reaches the same imagined screen by several paths. `cache_hits` and
    `cache_misses` count how the cache served; `pooled=False, cache_size=0` is the reference
    (a fresh page per step, nothing kept), which gives the same next screens."""

    name = "sim"
    OPTIONS = ("timeout_s",)

    def __init__(
        self,
        renderer: Renderer | None = None,
        timeout_s: float = 10.0,
        pooled: bool = True,
        cache_size: int = 512,
    ):
        self._renderer = renderer
        self._owns = False
        self.timeout_s = timeout_s
        self._copy = CopyBackend()
        self.pooled = pooled
        self.cache_size = cache_size
        self._cache: OrderedDict[str, Interaction] = OrderedDict()
        self.cache_hits = self.cache_misses = 0
        # seconds spent, for profiling: the interactions' wall time, and in them the pages'
        # load and the operations with the capture (summed over concurrent pages), the edits
        self.seconds = {"interact": 0.0, "load": 0.0, "act+capture": 0.0, "edit": 0.0}

    @classmethod
    def from_spec(cls, spec=None, timeout_s: float = 10.0) -> SimBackend:
        return cls(timeout_s=timeout_s)

    def _interact(self, jobs: list) -> list:
        """Renderer.interact_many on pooled pages or fresh ones, each step served from the cache
        where it was imagined before."""
        keys = [self._job_key(*j) for j in jobs] if self.cache_size else [None] * len(jobs)
        todo = [i for i, k in enumerate(keys) if k not in self._cache]
        self.cache_hits += len(jobs) - len(todo)
        self.cache_misses += len(todo)
        t0 = time.perf_counter()
        got = self.renderer.interact_many([jobs[i] for i in todo], pooled=self.pooled) if todo else []
        self.seconds["interact"] += time.perf_counter() - t0
        for res in got:
            if not isinstance(res, RenderError):
                self.seconds["load"] += res.elapsed_s - res.act_s
                self.seconds["act+capture"] += res.act_s
        if not self.cache_size:
            return got
        fresh = dict(zip(todo, got))
        out = []
        for i, k in enumerate(keys):
            if i in fresh:
                res = fresh[i]
                if not isinstance(res, RenderError):  # a failure may be the machine's, not the page's
                    self._cache[k] = res
                    while len(self._cache) > self.cache_size:
                        self._cache.popitem(last=False)
                out.append(res)
            else:
                self._cache.move_to_end(k)
                out.append(self._cache[k])
        return out

    def clear_cache(self) -> None:
        """Forget every imagined step (the counters stay)."""
        self._cache.clear()

    def _as_edit(self, current: str, res: Interaction) -> str:
        """as_edit_of, once per interaction (a cached one was written out when it was made)."""
        done = getattr(res, "_as_edit", None)
        if done is None or done[0] != current:
            t0 = time.perf_counter()
            done = (current, as_edit_of(current, res.html))
            res._as_edit = done
            self.seconds["edit"] += time.perf_counter() - t0
        return done[1]

    @staticmethod
    def _job_key(html: str, vp, ops) -> str:
        h = hashlib.sha256(html.encode("utf-8", "surrogatepass"))
        h.update(f"|{vp.width}x{vp.height}@{vp.device_scale_factor}|{json.dumps(ops)}".encode())
        return h.hexdigest()

    def use_renderer(self, renderer: Renderer) -> None:
        """Act in this renderer's browser (a WorldModel hands over its own)."""
        if self._renderer is None:
            self._renderer = renderer

    @property
    def renderer(self) -> Renderer:
        if self._renderer is None:
            self._renderer, self._owns = Renderer(timeout_s=self.timeout_s), True
        return self._renderer

    def complete(self, queries: list[Query]) -> list[Completion]:
        out: list[Completion | None] = [None] * len(queries)
        jobs, where = [], []
        for i, q in enumerate(queries):
            if not q.screen.html:
                text = self._copy.complete([q])[0].text
                out[i] = Completion(text, "no current HTML to act on: copied the screenshot")
                continue
            vp = q.screen.viewport()
            ops, note = action_ops(q.action, vp.device_scale_factor, vp.width, vp.height)
            if not ops:
                out[i] = Completion(q.screen.html, note)
                continue
            jobs.append((q.screen.html, vp, ops))
            where.append((i, note))
        if jobs:
            for (i, note), res in zip(where, self._interact(jobs)):
                q = queries[i]
                if isinstance(res, RenderError):
                    out[i] = Completion(q.screen.html, f"could not act on the page ({res}): screen kept")
                else:
                    html = self._as_edit(q.screen.html, res)
                    out[i] = Completion(html, "; ".join([n for n in [note, *res.notes] if n]))
        return out  # type: ignore[return-value]

    def close(self) -> None:
        if self._owns and self._renderer is not None:
            self._renderer.close()
            self._renderer = None
