"""The one interface every backend implements, every hook WorldModel calls, and a checker for it.

A backend turns queries (screen, action, goal) into completions. `WorldModel` calls the hooks
declared on `Backend` directly, never probing with hasattr: a backend subclasses `Backend`,
overrides `complete` (and, if it writes edits itself, sets `edits = True` and overrides
`complete_edits`), and inherits a sensible default for every other hook. `check_backend` says,
in the spirit of gymnasium's `check_env`, exactly what a backend gets wrong: it reads the
declaration, then runs the backend on two small queries and checks what comes back.
"""

from __future__ import annotations

import inspect

from ..card import AFTER, TARGETS, CheckpointCard
from ..types import Action, BackendSpec, Completion, Query, Screen

__all__ = ["Backend", "BackendContractError", "Completion", "Query", "check_backend"]


class Backend:
    """Base of every world-model backend; override `complete`, keep the defaults you do not need.

    Class attributes:
      name     how predictions and reports name it (required, non-empty)
      OPTIONS  the keyword options `from_spec` takes (`WorldModel.load(spec, **options)` sends a
               stage only its own, and refuses an option no stage takes)
      edits    True: `complete_edits` writes edits of the current screen (worldmodel/edit.py);
               False: in edit mode WorldModel diffs the documents `complete` writes
      after    "sim": it was trained on what the sim made of the screen, so `WorldModel.load`
               runs the sim stage before it
      target   the mode it is asked in when a caller gives none: "document" or "edit"
      card     a trained checkpoint's card as it runs (worldmodel/card.py, options applied);
               None for a backend without one
      revises_settled  True: it is asked about answers an earlier stage settled too, and a
               completion it marks `known=False` leaves the answer before it standing (a stage
               that knows what no recording can, e.g. the episode's own earlier screens)
    """

    name: str = ""
    OPTIONS: tuple[str, ...] = ()
    edits: bool = False
    after: str = ""
    target: str = "document"
    card: CheckpointCard | None = None
    revises_settled: bool = False

    @classmethod
    def from_spec(cls, spec: BackendSpec, **options) -> Backend:
        """Build it from its parsed spec (its path, URL or corpus) and the options in OPTIONS."""
        return cls(**options)

    def complete(self, queries: list[Query]) -> list[Completion | str]:
        """One completion per query (ideally the next screen as an HTML document), as one batch.
        A str stands for Completion(text)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement complete(queries)")

    def complete_edits(self, queries: list[Query]) -> list[Completion | str]:
        """One edit of each query's current screen. The default diffs the documents `complete`
        writes (what WorldModel does for a backend whose `edits` is False)."""
        from ..edit import diff
        from ..extract import extract_html

        out = []
        for q, c in zip(queries, self.complete(queries)):
            c = Completion.of(c)
            out.append(Completion(diff(q.screen.html or "", extract_html(c.text)[0]), c.note, c.confidence))
        return out

    def absorbs(self, previous: Backend) -> bool:
        """Whether this backend takes `previous`, the stage composed just before it, in as a part
        of its own (a checkpoint trained on memory's answers as hints takes the memory stage of
        `sim+memory+PATH` as their source); WorldModel then runs `previous` only through it. The
        default takes nothing in."""
        return False

    def followers(self) -> list[Backend]:
        """Stages it brings to run right after it when `WorldModel.load` builds it from a spec (a
        checkpoint folder's revisit head, worldmodel/backends/revisit.py). The default: none."""
        return []

    def use_renderer(self, renderer) -> None:
        """A WorldModel lends its renderer before each batch (for backends that act in a browser or
        need rendered boxes); the default needs none."""

    def close(self) -> None:
        """Free what it holds (a model, a client, a renderer it made); called by WorldModel.close."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class BackendContractError(TypeError):
    """A backend that does not meet the Backend contract; the message lists every problem found."""


_PAGE = (
    '<!DOCTYPE html><html><body style="margin:0"><div id="screen" style="width:120px;height:90px">'
    '<button style="width:80px;height:30px">OK</button><input value="a"></div></body></html>'
)


def _sample_queries() -> list[Query]:
    from PIL import Image

    shot = Image.new("RGB", (120, 90), "white")
    return [
        Query(Screen(shot, html=_PAGE), Action("tap", x=20, y=10), "press OK"),
        Query(Screen(shot), Action("back"), "go back"),
    ]


def _check_completions(hook: str, got, n: int, problems: list[str]) -> None:
    if not isinstance(got, list):
        problems.append(f"{hook} returned {type(got).__name__}, not a list")
        return
    if len(got) != n:
        problems.append(f"{hook} returned {len(got)} completions for {n} queries (one per query, in order)")
    for i, c in enumerate(got):
        if isinstance(c, str):
            continue
        if not isinstance(c, Completion):
            problems.append(f"{hook}: completion {i} is {type(c).__name__}, not a Completion or str")
        elif not isinstance(c.note, str):
            problems.append(f"{hook}: completion {i}'s note is {type(c.note).__name__}, not a str")
        elif c.confidence is not None and not isinstance(c.confidence, (int, float)):
            problems.append(
                f"{hook}: completion {i}'s confidence is {type(c.confidence).__name__}, not a number"
            )


def check_backend(backend, renderer=None, queries: list[Query] | None = None) -> None:
    """Raise BackendContractError listing everything `backend` gets wrong; return None if nothing.

    It reads the declaration (a Backend subclass, a name, `complete` overridden, `edits` matching
    an overridden `complete_edits`, `after` and `target` values, OPTIONS that `from_spec`
    accepts), then runs `complete` (and `complete_edits` where `edits`) on `queries` (default:
    a small page with a tap, and a screenshot alone with back), lending it `renderer` first, and
    checks one completion per query comes back, each a Completion or a str."""
    cls = type(backend)
    label = f"backend {getattr(backend, 'name', '') or cls.__name__!r} ({cls.__module__}.{cls.__qualname__})"
    if not isinstance(backend, Backend):
        missing = [
            h
            for h in (
                "name",
                "OPTIONS",
                "edits",
                "after",
                "target",
                "from_spec",
                "complete",
                "use_renderer",
                "close",
            )
            if not hasattr(backend, h)
        ]
        raise BackendContractError(
            f"{label} is not a worldmodel.Backend: subclass it (from worldmodel import Backend)"
            + (f"; it lacks {', '.join(missing)}" if missing else "")
        )
    problems: list[str] = []
    if not isinstance(backend.name, str) or not backend.name:
        problems.append("name is empty: set the class attribute name (e.g. name = 'mine')")
    if cls.complete is Backend.complete:
        problems.append("complete(queries) is not implemented")
    own_edits = cls.complete_edits is not Backend.complete_edits
    if backend.edits and not own_edits:
        problems.append("edits is True but complete_edits(queries) is not implemented")
    if own_edits and not backend.edits:
        problems.append("complete_edits is implemented but edits is False, so WorldModel never calls it")
    if backend.after not in AFTER:
        problems.append(f"after is {backend.after!r}, not one of {AFTER}")
    if backend.target not in TARGETS:
        problems.append(f"target is {backend.target!r}, not one of {TARGETS}")
    if backend.card is not None and not isinstance(backend.card, CheckpointCard):
        problems.append(f"card is {type(backend.card).__name__}, not a CheckpointCard or None")
    opts = backend.OPTIONS
    if not isinstance(opts, tuple) or not all(isinstance(o, str) for o in opts):
        problems.append(f"OPTIONS is {opts!r}, not a tuple of option names")
    else:
        # the default from_spec passes the options to the constructor
        inherited = cls.from_spec.__func__ is Backend.from_spec.__func__
        target = cls.__init__ if inherited else cls.from_spec
        params = {} if target is object.__init__ else inspect.signature(target).parameters
        takes_any = any(p.kind == p.VAR_KEYWORD for p in params.values())
        refused = [o for o in opts if not takes_any and o not in params]
        if refused:
            where = "its constructor" if inherited else "from_spec"
            problems.append(f"{where} takes no option(s) {', '.join(refused)} that OPTIONS lists")
    if not problems:
        qs = queries or _sample_queries()
        try:
            backend.use_renderer(renderer) if renderer is not None else None
            _check_completions("complete", backend.complete(list(qs)), len(qs), problems)
        except Exception as e:  # the checker's job is to report it, with its type
            problems.append(f"complete raised {type(e).__name__}: {e}")
        with_html = [q for q in qs if q.screen.html]
        if backend.edits and with_html:
            try:
                _check_completions(
                    "complete_edits", backend.complete_edits(with_html), len(with_html), problems
                )
            except Exception as e:
                problems.append(f"complete_edits raised {type(e).__name__}: {e}")
    if problems:
        raise BackendContractError(f"{label} breaks the Backend contract:\n  - " + "\n  - ".join(problems))
