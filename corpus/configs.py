"""The options of `wm corpus record`, `import-android` and `import-droidbot`, one dataclass each.

A pipeline's options are written once, as fields: the pipeline (corpus/pipelines.py) takes the
dataclass, and the command line's flags are generated from its fields (wmcli/options.py, after
trl's `TrlParser`), so a flag cannot drift from what the pipeline takes. Each field's metadata
says its flag when that is not `--field-name`, its help and its range (`opt`). `wm corpus build`
and `add-id-test` take corpus.build.BuildConfig and corpus.heldout.HeldOutConfig the same way.
What is not an option of the work itself (the target, `--out`, `--num-proc`, `--shard`) stays a
parameter of the pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .phone import FLOOR, MAX_OFF


def opt(default, help: str | None = None, **cli):
    """A field and its command-line option: `help`, and `flag`, `min`, `max`, `choices`, `empty`,
    `cli` as wmcli/options.py reads them."""
    return field(default=default, metadata={"help": help, **cli})


@dataclass
class RecordConfig:
    """How `record_app` records one web app. `policy` may also be a callable from Python."""

    episodes: int = opt(3, "episodes to record", min=1)
    steps: int = opt(8, "actions per episode at most", min=1)
    seed: int = 0
    viewport: str = opt("phone", "phone, phone-hd, tablet, desktop, or WIDTHxHEIGHT (CSS px)")
    scale: float = opt(1.0, "device scale factor", min=0.25, max=8.0)
    policy: str = opt("explore", "'explore' or module:function taking a StepContext")
    goal: str = opt("", "the goal text recorded with every step")
    name: str | None = opt(None, "app name (default: from the folder or URL)")
    entry: str = opt("index.html", "for a folder: the page to start on")
    capture: str = opt("stylesheets", "stylesheets (the page's own CSS) or computed (per-element styles)")
    licence: str = opt("", "the app's licence, written into the dataset card")
    split: str = opt(
        "auto", "split for this app: train, validation, test, or auto (by a stable hash; a lone app trains)"
    )
    append: bool = opt(False, "add to the corpus at --out instead of replacing it")
    compact: bool = opt(
        True, "shorten each screen's HTML where its render stays identical", flag="--compact/--no-compact"
    )
    held_out: int = opt(
        0,
        "the last N episodes go to the id-test split (the app trains; its held-out episodes are unseen)",
        flag="--hold-out",
        min=0,
    )


@dataclass
class PhoneImportConfig:
    """What both phone imports take: when a translated screen is good enough, the licence, and
    the share held out as id-test."""

    floor: float = opt(
        FLOOR, "blurred SSIM a translated screen must reach", flag="--floor --threshold", min=0.0, max=1.0
    )
    max_off: float = opt(MAX_OFF, "share of pixels a screen may have off", min=0.0, max=1.0)
    rounds: int = opt(2, "revision rounds before a screen is dropped", min=0)
    licence: str | None = opt(
        None, "the data's licence for the dataset card (default: what the source states)"
    )
    id_test_share: float = opt(
        0.0,
        "hold out this share of each training app's episodes (of a lone DroidBot run: its last steps) "
        "as id-test, for in-app figures beside unseen apps",
        min=0.0,
        max=0.9,
    )


@dataclass
class AndroidImportConfig(PhoneImportConfig):
    """`import_android_corpus`'s options."""

    scale: float = opt(1.0, "device scale factor of the screenshots", min=0.25, max=8.0)
    coder: str = opt("rules", "reviser: 'rules' (per-region fixes from the screenshot) or a model spec")


@dataclass
class DroidBotImportConfig(PhoneImportConfig):
    """`import_droidbot_corpus`'s options."""

    app: str | None = opt(None, "app name (default: the states' commonest package)")
