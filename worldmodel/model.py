"""WorldModel: the one object users hold. Load a spec, predict, roll out, close.

It owns (or borrows) a renderer, keeps its loaded backends for its own lifetime only, and sends
every batch as one generation call per stage and one concurrent render batch.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from render import Renderer, RenderError

from .backends.base import Backend, load_stage, option_names
from .edit import apply_lenient, diff, extract_edit, try_apply
from .extract import extract_html
from .prompt import MODES
from .spec import BackendSpec, ModelSpec, parse_spec
from .types import Action, Prediction, Query, Screen


class WorldModel:
    """Imagines next screens as HTML and renders them.

    `stages` are backends run in order: each after the first receives the previous stage's
    prediction (its render and HTML) as the screen to edit.

    An edit with lines that cannot be applied (a wrong number, an unclosed quote) is carried out
    without them, and `Prediction.edit_error` names the first such line; with `strict_edits`
    such an edit yields no screen at all (`render_error`), as rewards treat it.
    """

    def __init__(
        self,
        stages: Backend | Sequence[Backend],
        renderer: Renderer | None = None,
        name: str = "",
        strict_edits: bool = False,
    ):
        self.stages = list(stages) if isinstance(stages, (list, tuple)) else [stages]
        if not self.stages:
            raise ValueError("a WorldModel needs at least one backend")
        self._owns_renderer = renderer is None
        self._renderer = renderer
        self.name = name or "+".join(getattr(b, "name", type(b).__name__) for b in self.stages)
        self.strict_edits = strict_edits

    @classmethod
    def load(
        cls, spec: str | ModelSpec, renderer: Renderer | None = None, strict_edits: bool = False, **options
    ) -> WorldModel:
        """Load every stage of `spec`; options (device, dtype, max_new_tokens, api_key, ...) go to
        the stages that take them, and an option no stage takes is an error."""
        ms = parse_spec(spec)
        known = set().union(*(option_names(s.kind) for s in ms.stages))
        unknown = set(options) - known
        if unknown:
            raise ValueError(
                f"model {str(ms)!r} takes no option(s) {', '.join(sorted(unknown))} "
                f"(it takes: {', '.join(sorted(known)) or 'none'})"
            )
        stages, names = [], []
        for s in ms.stages:
            backend = load_stage(s, **options)
            # a checkpoint trained on the sim's screens (`wm train --after sim`) runs after the sim
            if getattr(backend, "after", "") == "sim" and (not names or names[-1] != "sim"):
                stages.append(load_stage(BackendSpec("sim"), **options))
                names.append("sim")
            stages.append(backend)
            names.append(str(s))
        return cls(stages, renderer, "+".join(names), strict_edits)

    @property
    def renderer(self) -> Renderer:
        if self._renderer is None:
            self._renderer = Renderer()
        return self._renderer

    # ---- predicting --------------------------------------------------------------
    def predict(
        self, screen: Screen, action: Action, goal: str | None = None, mode: str = "document"
    ) -> Prediction:
        """The next screen after `action` on `screen`, as HTML and rendered pixels."""
        return self.predict_many([Query(screen, action, goal)], mode)[0]

    def predict_many(self, queries: Sequence[Query], mode: str = "document") -> list[Prediction]:
        """A batch: one generation call per stage and one concurrent render batch per stage.

        `mode` "document": every backend writes the next screen whole. "edit": it writes an edit
        of the current screen (worldmodel/edit.py) that is applied, and the Prediction keeps
        both; a backend that only writes documents has its document diffed into the edit, and a
        screen without HTML gets a document. "auto": edit where the current HTML is known."""
        if mode not in MODES:
            raise ValueError(f"mode {mode!r} is not one of {', '.join(MODES)}")
        queries = [q if isinstance(q, Query) else Query(*q) for q in queries]
        if not queries:
            return []
        edit = [mode != "document" and bool(q.screen.html) for q in queries]
        preds: list[Prediction] = []
        current = list(queries)
        notes: list[list[str]] = [[] for _ in queries]
        for k, backend in enumerate(self.stages):
            preds = self._stage(backend, current, edit)
            for p, n in zip(preds, notes):
                if p.note:
                    n.append(f"{backend.name}: {p.note}" if len(self.stages) > 1 else p.note)
                p.note = "; ".join(n)
            if k + 1 < len(self.stages):
                current = [
                    Query(p.as_screen(q.screen), q.action, q.goal, applied=True, origin=q.origin or q.screen)
                    if p.ok
                    else q
                    for p, q in zip(preds, queries)
                ]
        if len(self.stages) > 1:  # the edit of the screen the caller gave, not of a stage's result
            for p, q, e in zip(preds, queries, edit):
                if e and p.ok:
                    p.edit = diff(q.screen.html, p.html)
        if mode == "edit":
            for p, q in zip(preds, queries):
                if not q.screen.html:
                    p.note = "; ".join(x for x in (p.note, "no current HTML to edit: wrote a document") if x)
        return preds

    def _stage(self, backend: Backend, queries: list[Query], edit: list[bool]) -> list[Prediction]:
        if hasattr(backend, "use_renderer"):  # backends that act in a browser share this one
            backend.use_renderer(self.renderer)
        t0 = time.perf_counter()
        native = callable(getattr(backend, "complete_edits", None))
        completions: list = [None] * len(queries)
        groups = [[i for i, e in enumerate(edit) if e == want] for want in (True, False)]
        for want_edit, idx in zip((True, False), groups):
            if not idx:
                continue
            sub = [queries[i] for i in idx]
            got = backend.complete_edits(sub) if (want_edit and native) else backend.complete(sub)
            if len(got) != len(sub):
                raise RuntimeError(f"backend {backend.name} returned {len(got)} completions for {len(sub)}")
            for i, c in zip(idx, got):
                completions[i] = c
        gen_s = (time.perf_counter() - t0) / len(queries)
        docs: list[tuple[str, bool]] = []
        edits: list[str | None] = []
        errors: list[str | None] = []
        edit_errors: list[str | None] = []
        for q, c, e in zip(queries, completions, edit):
            err = edit_err = None
            if e and native:
                ed = extract_edit(c)
                html, edit_err = try_apply(q.screen.html, ed)
                if edit_err is not None and self.strict_edits:
                    err = edit_err
                elif edit_err is not None:
                    html, done, total = apply_lenient(q.screen.html, ed)
                    edit_err = f"{total - done} of {total} edit lines left out; first: {edit_err}"
                docs.append((html or "", False))
                edits.append(ed)
            elif e:
                html, repaired = extract_html(c)
                docs.append((html, repaired))
                edits.append(diff(q.screen.html, html))
            else:
                docs.append(extract_html(c))
                edits.append(None)
            errors.append(err)
            edit_errors.append(edit_err)
        t1 = time.perf_counter()
        todo = [i for i, err in enumerate(errors) if err is None]
        rendered = self.renderer.render_many([(docs[i][0], queries[i].screen.viewport()) for i in todo])
        results: list = [None] * len(queries)
        for i, res in zip(todo, rendered):
            results[i] = res
        render_s = (time.perf_counter() - t1) / len(queries)
        out = []
        for (html, repaired), c, res, ed, err, edit_err in zip(
            docs, completions, results, edits, errors, edit_errors
        ):
            failed = err is not None or isinstance(res, RenderError)
            out.append(
                Prediction(
                    html=html,
                    image=None if failed else res.pil(),
                    completion=c,
                    render_error=err if err is not None else (str(res) if failed else None),
                    timings={"generate_s": gen_s, "render_s": render_s},
                    repaired=repaired,
                    boxes=[] if failed else res.boxes,
                    note=getattr(c, "note", ""),
                    edit=ed,
                    edit_error=edit_err,
                    confidence=getattr(c, "confidence", None),
                )
            )
        return out

    def rollout(
        self, screen: Screen, actions: Sequence[Action], goal: str | None = None, mode: str = "document"
    ) -> list[Prediction]:
        """Imagine `actions` one after another from `screen`: one Prediction per step.

        Each step starts from the previous imagined screen; a step whose render failed ends the
        rollout (its Prediction, with the error, is the last one)."""
        return self.rollout_many([screen], [actions], goal, mode)[0]

    def rollout_many(
        self,
        screens: Sequence[Screen],
        plans: Sequence[Sequence[Action]],
        goal: str | None = None,
        mode: str = "document",
    ) -> list[list[Prediction]]:
        """Several rollouts, batched across them at every depth."""
        if len(screens) != len(plans):
            raise ValueError(f"{len(screens)} screens but {len(plans)} action sequences")
        out: list[list[Prediction]] = [[] for _ in screens]
        state = list(screens)
        alive = [i for i, p in enumerate(plans) if len(p)]
        depth = 0
        while alive:
            preds = self.predict_many([Query(state[i], plans[i][depth], goal) for i in alive], mode)
            nxt = []
            for i, p in zip(alive, preds):
                out[i].append(p)
                if p.ok and depth + 1 < len(plans[i]):
                    state[i] = p.as_screen(state[i])
                    nxt.append(i)
            alive, depth = nxt, depth + 1
        return out

    # ---- lifetime ----------------------------------------------------------------
    def close(self) -> None:
        for b in self.stages:
            close = getattr(b, "close", None)
            if callable(close):
                close()
        if self._owns_renderer and self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    def __enter__(self) -> WorldModel:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"WorldModel({self.name!r})"


def as_world_model(model, renderer: Renderer | None = None) -> WorldModel:
    """A WorldModel from a spec string, a ModelSpec, a bare backend, or a WorldModel (returned as is)."""
    if isinstance(model, WorldModel):
        return model
    if isinstance(model, (str, ModelSpec)):
        return WorldModel.load(model, renderer)
    if hasattr(model, "complete"):
        return WorldModel(model, renderer)
    raise TypeError(
        f"not a world model: {type(model).__name__} (give a spec string, a backend or a WorldModel)"
    )
