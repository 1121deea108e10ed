"""The checkpoint card: everything a trained checkpoint's prompts and outputs depend on, in one record.

A checkpoint trained here is more than its weights: it learned to write documents or edits, with
the current HTML shown or not (and how much of it), with hints from a corpus or without, on the
recorded screen or on what the `sim` made of it, and it was calibrated to leave out the edits it
is least sure of. Loading it must rebuild its prompts exactly so, or it is asked something it
never learned. This module is the one place that writes and reads that record
(`worldmodel.json` beside the weights): training writes a `CheckpointCard`, the hf backend and
`WorldModel.load` read one, and nothing else touches the file's keys.

Cards written before the card had a version (five loose keys: with_html, html_chars, hints, after,
min_confidence) still load: their keys mean the same, and the target they never named is read
from what only edit training wrote (hints, after, a calibrated gate), else "document", as those
checkpoints were asked before.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from .files import write_whole
from .prompt import MAX_HTML_CHARS

CARD_FILE = "worldmodel.json"
FORMAT_VERSION = 2
# What a model is asked to write: a whole "document" or an "edit" of the current screen.
TARGETS = ("document", "edit")
# What a model can be trained to run after: "" (the recorded screen itself) or "sim".
AFTER = ("", "sim")
# Where an edit prompt's hint comes from: "retrieval", the nearest transition of any app (in
# training another app's, as on an app never seen); "memory", the same app's own recordings
# (worldmodel/backends/memory.py; in training the app's other episodes), whose answer a model
# trained on it keeps (`follow`), overrules, or leaves standing where it is unsure.
HINT_SOURCES = ("retrieval", "memory")


class CardError(ValueError):
    """A card that cannot be read or holds a value no checkpoint can have; names the file and field."""


@dataclass(frozen=True)
class CheckpointCard:
    """How a checkpoint was trained to be asked. The defaults describe a checkpoint that says nothing
    (e.g. a pretrained VLM from a local folder): documents, the current HTML shown, no hints."""

    # what the model writes: "document" (the whole next screen) or "edit" (worldmodel/edit.py)
    target: str = "document"
    # document prompts show the current screen's HTML (edit prompts always do)
    with_html: bool = True
    # the prompt's HTML budget, in characters, as in training
    html_chars: int = MAX_HTML_CHARS
    # edit prompts show the nearest recorded transition's edit, re-addressed onto the screen
    hints: bool = False
    # the corpus whose training split gives the hints (None: the bundled corpus)
    hint_corpus: str | None = None
    # what gives the hints: "retrieval" (any app's nearest transition) or "memory" (this app's own)
    hint_source: str = "retrieval"
    # edit prompts say where the hint's source knew nothing of the step (UNKNOWN_HINT), apart
    # from an answer of no change; cards written before this field show one string for both
    unknown_hint: bool = False
    # edit prompts say memory's hints come from this app's own recordings (MEMORY_HINT_NOTE);
    # cards before this field were trained with "from another app" for memory's hints too
    own_app_note: bool = False
    # "sim": trained on what the browser's physics made of the screen, so it runs as `sim+PATH`
    after: str = ""
    # the edit gate: an edit whose mean log-probability per token is below it is left out
    min_confidence: float | None = None
    # the completion budget training sampled to (GRPO's max completion length; in edit mode
    # measured from the training edits): a record of training, not a cap on prediction
    completion_budget: int | None = None
    # what training started from: the preset, and the local base checkpoint ("" = built here)
    preset: str = ""
    base_model: str = ""
    version: int = FORMAT_VERSION

    def __post_init__(self):
        problems = []
        if self.target not in TARGETS:
            problems.append(f"target {self.target!r} is not one of {', '.join(TARGETS)}")
        if self.after not in AFTER:
            problems.append(f"after {self.after!r} is not 'sim' or ''")
        if self.hint_source not in HINT_SOURCES:
            problems.append(f"hint_source {self.hint_source!r} is not one of {', '.join(HINT_SOURCES)}")
        if not all(
            isinstance(v, bool) for v in (self.with_html, self.hints, self.unknown_hint, self.own_app_note)
        ):
            problems.append("with_html, hints, unknown_hint and own_app_note are true or false")
        if isinstance(self.html_chars, bool) or not isinstance(self.html_chars, int) or self.html_chars < 0:
            problems.append(f"html_chars {self.html_chars!r} is not a count of characters")
        if self.completion_budget is not None and (
            isinstance(self.completion_budget, bool)
            or not isinstance(self.completion_budget, int)
            or self.completion_budget < 1
        ):
            problems.append(f"completion_budget {self.completion_budget!r} is not a count of tokens")
        if self.min_confidence is not None and (
            isinstance(self.min_confidence, bool) or not isinstance(self.min_confidence, (int, float))
        ):
            problems.append(f"min_confidence {self.min_confidence!r} is not a number")
        if self.hint_corpus is not None and not isinstance(self.hint_corpus, str):
            problems.append(f"hint_corpus {self.hint_corpus!r} is not a path")
        if problems:
            raise CardError("checkpoint card: " + "; ".join(problems))

    # ---- files ---------------------------------------------------------------
    def write(self, folder: str | Path) -> Path:
        """Write the card into `folder`, whole or not at all (a temporary file, then one rename)."""
        return write_whole(Path(folder) / CARD_FILE, json.dumps(asdict(self), indent=2) + "\n")

    @classmethod
    def read(cls, folder: str | Path) -> CheckpointCard | None:
        """The card in `folder`, None when it has none; CardError naming the file when it is bad."""
        path = Path(folder) / CARD_FILE
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise CardError(f"{path} is not readable JSON: {e}") from None
        if not isinstance(data, dict):
            raise CardError(f"{path} holds {type(data).__name__}, not a checkpoint card")
        try:
            return cls.from_dict(data)
        except CardError as e:
            raise CardError(f"{path}: {e}") from None

    @classmethod
    def of(cls, folder: str | Path) -> CheckpointCard:
        """The card in `folder`, or the card of a checkpoint that says nothing."""
        return cls.read(folder) or cls()

    @classmethod
    def from_dict(cls, data: dict) -> CheckpointCard:
        """A card from its JSON form, this version's or the versionless five keys training wrote before."""
        version = data.get("version", 1)
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise CardError(f"card format {version!r} is newer than this version reads ({FORMAT_VERSION})")
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise CardError(f"unknown card field(s) {', '.join(sorted(unknown))}")
        data = dict(data)
        if version == 1:
            # only edit training recorded hints, `after` or a gate; the rest asked for documents
            edit = bool(data.get("hints")) or bool(data.get("after")) or "min_confidence" in data
            data.setdefault("target", "edit" if edit else "document")
            data["version"] = FORMAT_VERSION
        return cls(**data)

    def updated(self, **changes) -> CheckpointCard:
        """A copy with `changes` (validated as a new card is)."""
        return replace(self, **changes)

    @property
    def mode(self) -> str:
        """The prediction mode a WorldModel asks this checkpoint for when none is given."""
        return self.target
