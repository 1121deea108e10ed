"""WorldModel: the one object users hold. Load a spec, predict, roll out, close.

`WorldModel.load` is the one way a model spec becomes something that runs: every caller (`wm
eval`, `wm predict`, `predict_next`, planning, revision, benchmarks) goes through it, so the
rules of loading live here once: a checkpoint trained after the sim (its card's `after`) runs as
`sim+CHECKPOINT`, options go to the stages that take them, and a checkpoint's card decides what
it is asked for when a caller names no mode. It owns (or borrows) a renderer, keeps its loaded
backends for its own lifetime only, and sends every batch as one generation call per stage and
one concurrent render batch.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import NamedTuple

from render import Renderer, RenderError

from .backends.base import Backend
from .backends.registry import backend_class
from .edit import apply_lenient, diff, extract_edit, try_apply
from .extract import extract_html
from .prompt import MODES
from .spec import DEFAULT_MODEL, BackendSpec, ModelSpec, parse_spec
from .types import Action, Completion, Prediction, Query, Screen


class WorldModel:
    """Imagines next screens as HTML and renders them.

    `stages` are backends run in order: each after the first receives the previous stage's
    prediction (its render and HTML) as the screen to edit, unless it takes the stage before it
    in as a part of its own (`Backend.absorbs`: a checkpoint trained on memory's answers as its
    hints takes the memory stage of `sim+memory+PATH` as their source).

    An edit with lines that cannot be applied (a wrong number, an unclosed quote) is carried out
    without them, and `Prediction.edit_error` names the first such line; with `strict_edits`
    such an edit yields no screen at all (`render_error`), as rewards treat it.

    `mode` is what a prediction asks for when its caller names none: by default the last
    stage's `target` (a checkpoint trained on edits is asked for edits).
    """

    def __init__(
        self,
        stages: Backend | Sequence[Backend],
        renderer: Renderer | None = None,
        name: str = "",
        strict_edits: bool = False,
        mode: str | None = None,
    ):
        self.stages = list(stages) if isinstance(stages, (list, tuple)) else [stages]
        if not self.stages:
            raise ValueError("a WorldModel needs at least one backend")
        for b in self.stages:
            if not isinstance(b, Backend):
                raise TypeError(
                    f"not a backend: {type(b).__name__} (subclass worldmodel.Backend; "
                    "worldmodel.check_backend says what it lacks)"
                )
        self._owns_renderer = renderer is None
        self._renderer = renderer
        self.name = name or "+".join(b.name or type(b).__name__ for b in self.stages)
        self._absorbed: list[Backend] = []
        for k in range(len(self.stages) - 1, 0, -1):
            if self.stages[k].absorbs(self.stages[k - 1]):
                self._absorbed.append(self.stages.pop(k - 1))
        self.strict_edits = strict_edits
        self.mode = mode or self.stages[-1].target
        if self.mode not in MODES:
            raise ValueError(f"mode {self.mode!r} is not one of {', '.join(MODES)}")

    @classmethod
    def load(
        cls,
        spec: str | ModelSpec | Backend | WorldModel = DEFAULT_MODEL,
        renderer: Renderer | None = None,
        strict_edits: bool = False,
        only_known_options: bool = False,
        **options,
    ) -> WorldModel:
        """Load every stage of `spec` (a spec string or ModelSpec, by default DEFAULT_MODEL; a
        Backend is wrapped and a WorldModel returned as it is, neither taking options).

        Options (device, dtype, max_new_tokens, html_chars, api_key, ...) go to the stages that
        take them; an option left None is not given, so the stage's default (for a checkpoint:
        its card's value) holds. An option no stage takes is an error, unless
        `only_known_options` (a command line's flags shared by several models). A checkpoint
        trained on the sim's screens (its card's `after`) runs after the sim: `sim+PATH`."""
        if isinstance(spec, (WorldModel, Backend)):
            if options:
                raise ValueError(
                    f"options {', '.join(sorted(options))} need a spec to load, not a loaded model"
                )
            return spec if isinstance(spec, WorldModel) else cls(spec, renderer, strict_edits=strict_edits)
        ms = parse_spec(spec)
        options = {k: v for k, v in options.items() if v is not None}
        known = set().union(*(backend_class(s.kind).OPTIONS for s in ms.stages))
        unknown = set(options) - known
        if unknown and not only_known_options:
            raise ValueError(
                f"model {str(ms)!r} takes no option(s) {', '.join(sorted(unknown))} "
                f"(it takes: {', '.join(sorted(known)) or 'none'})"
            )
        stages: list[Backend] = []
        names: list[str] = []
        try:
            for s in ms.stages:
                backend = _build(s, options)
                # a checkpoint trained on the sim's screens (`wm train --after sim`) runs after the
                # sim, once: after `sim+memory` it edits what memory made of the sim's screen
                if backend.after == "sim" and "sim" not in names:
                    stages.append(_build(BackendSpec("sim"), options))
                    names.append("sim")
                stages.append(backend)
                names.append(str(s))
                for extra in backend.followers():  # e.g. a checkpoint's revisit head
                    stages.append(extra)
                    names.append(extra.name)
        except BaseException:
            for b in stages:
                b.close()
            raise
        return cls(stages, renderer, "+".join(names), strict_edits)

    @property
    def renderer(self) -> Renderer:
        if self._renderer is None:
            self._renderer = Renderer()
        return self._renderer

    # ---- predicting --------------------------------------------------------------
    def predict(
        self,
        screen: Screen,
        action: Action,
        goal: str | None = None,
        mode: str | None = None,
        history: Sequence[Screen] = (),
    ) -> Prediction:
        """The next screen after `action` on `screen` (shown after `history`, oldest first), as
        HTML and rendered pixels."""
        return self.predict_many([Query(screen, action, goal, history=tuple(history))], mode)[0]

    def predict_many(
        self, queries: Sequence[Query], mode: str | None = None, lazy: bool = False
    ) -> list[Prediction]:
        """A batch: one generation call per stage and one concurrent render batch per stage.

        `mode` "document": every backend writes the next screen whole. "edit": it writes an edit
        of the current screen (worldmodel/edit.py) that is applied, and the Prediction keeps
        both; a backend that only writes documents has its document diffed into the edit, and a
        screen without HTML gets a document. "auto": edit where the current HTML is known.
        None: this WorldModel's `mode` (the last stage's target, e.g. a checkpoint's card).

        `lazy`: the last stage's screens are rendered only when their image or boxes are first
        read (LazyPrediction; `render_pending` renders a batch of them at once), so a caller that
        reads only the HTML (a planner's progress scorer) never waits for pixels."""
        mode = mode or self.mode
        if mode not in MODES:
            raise ValueError(f"mode {mode!r} is not one of {', '.join(MODES)}")
        queries = [q if isinstance(q, Query) else Query(*q) for q in queries]
        if not queries:
            return []
        edit = [mode != "document" and bool(q.screen.html) for q in queries]
        preds: list[Prediction] = [None] * len(queries)  # type: ignore[list-item]
        current = list(queries)
        notes: list[list[str]] = [[] for _ in queries]
        for k, backend in enumerate(self.stages):
            # a screen a stage settled (a recording of this very transition) passes the rest by
            todo = [i for i, p in enumerate(preds) if p is None or not p.settled or backend.revises_settled]
            if not todo:
                break
            asked = None
            if backend.revises_settled:  # where it knew nothing, the answer before it stands
                backend.use_renderer(self.renderer)
                got_all = _complete(backend, [current[i] for i in todo], [edit[i] for i in todo])
                spoke = [j for j, c in enumerate(got_all) if c.known or preds[todo[j]] is None]
                todo, asked = [todo[j] for j in spoke], [got_all[j] for j in spoke]
                if not todo:
                    continue
            got = self._stage(
                backend,
                [current[i] for i in todo],
                [edit[i] for i in todo],
                lazy and k + 1 == len(self.stages),
                asked,
            )
            for i, p in zip(todo, got):
                if p.note:
                    notes[i].append(f"{backend.name}: {p.note}" if len(self.stages) > 1 else p.note)
                p.note = "; ".join(notes[i])
                preds[i] = p
                if k + 1 < len(self.stages) and p.ok:
                    q = queries[i]
                    current[i] = Query(
                        p.as_screen(q.screen),
                        q.action,
                        q.goal,
                        applied=True,
                        origin=q.origin or q.screen,
                        history=q.history,
                    )
                elif k + 1 < len(self.stages):
                    current[i] = queries[i]
        if len(self.stages) > 1:  # the edit of the screen the caller gave, not of a stage's result
            for p, q, e in zip(preds, queries, edit):
                if e and p.ok:
                    p.edit = diff(q.screen.html, p.html)
        if mode == "edit":
            for p, q in zip(preds, queries):
                if not q.screen.html:
                    p.note = "; ".join(x for x in (p.note, "no current HTML to edit: wrote a document") if x)
        return preds

    def _stage(
        self,
        backend: Backend,
        queries: list[Query],
        edit: list[bool],
        lazy: bool = False,
        completions: list[Completion] | None = None,
    ) -> list[Prediction]:
        """One stage over the batch: generate (unless its `completions` are given), turn each
        completion into a document, render."""
        backend.use_renderer(self.renderer)  # backends that act in a browser share this one
        t0 = time.perf_counter()
        if completions is None:
            completions = _complete(backend, queries, edit)
        gen_s = (time.perf_counter() - t0) / len(queries)
        written = [self._write(q, c, e and backend.edits, e) for q, c, e in zip(queries, completions, edit)]
        if lazy:
            return [
                LazyPrediction(
                    self.renderer,
                    q.screen.viewport() if w.error is None else None,
                    html=w.html,
                    completion=c.text,
                    render_error=w.error,
                    timings={"generate_s": gen_s},
                    repaired=w.repaired,
                    note=getattr(c, "note", ""),
                    edit=w.edit,
                    edit_error=w.edit_error,
                    confidence=getattr(c, "confidence", None),
                    settled=c.settled,
                )
                for q, c, w in zip(queries, completions, written)
            ]
        return self._render(queries, completions, written, gen_s)

    def _write(self, q: Query, c: Completion, native_edit: bool, edit: bool) -> _Written:
        """One completion as a document: a native edit applied (leniently unless
        `strict_edits`), a document diffed into the edit it makes, or a document alone."""
        if native_edit:
            ed = extract_edit(c.text)
            html, edit_err = try_apply(q.screen.html, ed)
            if edit_err is not None and self.strict_edits:
                return _Written(html or "", False, ed, edit_err, edit_err)
            if edit_err is not None:
                html, done, total = apply_lenient(q.screen.html, ed)
                edit_err = f"{total - done} of {total} edit lines left out; first: {edit_err}"
            return _Written(html or "", False, ed, None, edit_err)
        html, repaired = extract_html(c.text)
        return _Written(html, repaired, diff(q.screen.html, html) if edit else None, None, None)

    def _render(
        self, queries: list[Query], completions: list[Completion], written: list[_Written], gen_s: float
    ) -> list[Prediction]:
        """Render every written document in one batch; a write error or render error is the
        Prediction's `render_error`."""
        t1 = time.perf_counter()
        todo = [i for i, w in enumerate(written) if w.error is None]
        rendered = self.renderer.render_many([(written[i].html, queries[i].screen.viewport()) for i in todo])
        results: list = [None] * len(queries)
        for i, res in zip(todo, rendered):
            results[i] = res
        render_s = (time.perf_counter() - t1) / len(queries)
        out = []
        for c, res, w in zip(completions, results, written):
            failed = w.error is not None or isinstance(res, RenderError)
            out.append(
                Prediction(
                    html=w.html,
                    image=None if failed else res.pil(),
                    completion=c.text,
                    render_error=w.error if w.error is not None else (str(res) if failed else None),
                    timings={"generate_s": gen_s, "render_s": render_s},
                    repaired=w.repaired,
                    boxes=[] if failed else res.boxes,
                    note=c.note,
                    edit=w.edit,
                    edit_error=w.edit_error,
                    confidence=c.confidence,
                    settled=c.settled,
                )
            )
        return out

    def rollout(
        self,
        screen: Screen,
        actions: Sequence[Action],
        goal: str | None = None,
        mode: str | None = None,
        history: Sequence[Screen] = (),
    ) -> list[Prediction]:
        """Imagine `actions` one after another from `screen` (shown after `history`, oldest
        first): one Prediction per step.

        Each step starts from the previous imagined screen; a step whose render failed ends the
        rollout (its Prediction, with the error, is the last one)."""
        return self.rollout_many([screen], [actions], goal, mode, history)[0]

    def rollout_many(
        self,
        screens: Sequence[Screen],
        plans: Sequence[Sequence[Action]],
        goal: str | None = None,
        mode: str | None = None,
        history: Sequence[Screen] = (),
    ) -> list[list[Prediction]]:
        """Several rollouts, batched across them at every depth. Each step is asked with the
        screens its rollout imagined before it (`Query.history`), after `history`, the screens
        shown before the first (the same for every rollout)."""
        if len(screens) != len(plans):
            raise ValueError(f"{len(screens)} screens but {len(plans)} action sequences")
        out: list[list[Prediction]] = [[] for _ in screens]
        state = list(screens)
        past = [tuple(history) for _ in screens]
        alive = [i for i, p in enumerate(plans) if len(p)]
        depth = 0
        while alive:
            preds = self.predict_many(
                [Query(state[i], plans[i][depth], goal, history=past[i]) for i in alive], mode
            )
            nxt = []
            for i, p in zip(alive, preds):
                out[i].append(p)
                if p.ok and depth + 1 < len(plans[i]):
                    past[i] = (*past[i], state[i])
                    state[i] = p.as_screen(state[i])
                    nxt.append(i)
            alive, depth = nxt, depth + 1
        return out

    # ---- lifetime ----------------------------------------------------------------
    def close(self) -> None:
        for b in self.stages + self._absorbed:
            b.close()
        if self._owns_renderer and self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    def __enter__(self) -> WorldModel:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"WorldModel({self.name!r})"


class _Written(NamedTuple):
    """One completion turned into a document, before rendering."""

    html: str
    repaired: bool
    edit: str | None
    error: str | None  # no screen at all (a strict edit that failed)
    edit_error: str | None


def _complete(backend: Backend, queries: list[Query], edit: list[bool]) -> list[Completion]:
    """The backend's completions, asking for edits (where it writes them natively) on the
    queries marked `edit` and for documents on the rest; in the queries' order."""
    completions: list[Completion] = [Completion("")] * len(queries)
    groups = [[i for i, e in enumerate(edit) if e == want] for want in (True, False)]
    for want_edit, idx in zip((True, False), groups):
        if not idx:
            continue
        sub = [queries[i] for i in idx]
        got = backend.complete_edits(sub) if (want_edit and backend.edits) else backend.complete(sub)
        if len(got) != len(sub):
            raise RuntimeError(f"backend {backend.name} returned {len(got)} completions for {len(sub)}")
        for i, c in zip(idx, got):
            completions[i] = Completion.of(c)
    return completions


def _build(stage: BackendSpec, options: dict) -> Backend:
    """One stage's backend, given the options it takes."""
    cls = backend_class(stage.kind)
    return cls.from_spec(stage, **{k: v for k, v in options.items() if k in cls.OPTIONS})


class LazyPrediction(Prediction):
    """A Prediction rendered on first read of its image or boxes (WorldModel.predict_many's
    `lazy`). Until then `ok` says whether the world model wrote a screen at all; a render that
    then fails sets `render_error` and `ok` turns False, as for an eager Prediction."""

    def __init__(self, renderer: Renderer, viewport, **kw):
        self._pending = (renderer, viewport) if viewport is not None else None
        self._image = None
        self._boxes: list = []
        super().__init__(image=None, **kw)

    def _get_image(self):
        if self._pending is not None:
            self._settle(self._pending[0].render_many([(self.html, self._pending[1])])[0], 0.0)
        return self._image

    def _set_image(self, image) -> None:
        self._image = image

    def _get_boxes(self) -> list:
        self._get_image()
        return self._boxes

    def _set_boxes(self, boxes) -> None:
        self._boxes = boxes

    image = property(_get_image, _set_image)
    boxes = property(_get_boxes, _set_boxes)

    @property
    def ok(self) -> bool:
        if self._pending is not None:
            return self.render_error is None
        return self._image is not None

    @property
    def pending(self) -> bool:
        """Not rendered yet."""
        return self._pending is not None

    def _settle(self, res, seconds: float) -> None:
        self._pending = None
        if isinstance(res, RenderError):
            self.render_error = str(res)
        else:
            self._image, self._boxes = res.pil(), res.boxes
            self.timings["render_s"] = seconds or res.elapsed_s

    def __repr__(self) -> str:
        state = "pending" if self._pending is not None else ("ok" if self._image is not None else "failed")
        return f"LazyPrediction({state}, html={len(self.html or '')} chars, note={self.note!r})"


def render_pending(predictions: Sequence[Prediction]) -> None:
    """Render every not-yet-rendered LazyPrediction among `predictions` in one batch per renderer."""
    todo = [p for p in predictions if isinstance(p, LazyPrediction) and p.pending]
    by_renderer: dict[int, list[LazyPrediction]] = {}
    for p in todo:
        by_renderer.setdefault(id(p._pending[0]), []).append(p)
    for group in by_renderer.values():
        t0 = time.perf_counter()
        got = group[0]._pending[0].render_many([(p.html, p._pending[1]) for p in group])
        each = (time.perf_counter() - t0) / len(group)
        for p, res in zip(group, got):
            p._settle(res, each)
