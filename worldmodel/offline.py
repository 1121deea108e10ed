"""Nothing from a hub at run time: models, tokenizers and kernels load from local files only.

transformers (>= 5.2x, with the `kernels` package it now requires) swaps some layers for "hub
kernels" it downloads at run time (e.g. `kernels-community/rotary` on CUDA): on an offline GPU
node SFT stopped at step 0 on it. So hub kernels are off (`USE_HUB_KERNELS=NO`) and the hub
client is offline (`HF_HUB_OFFLINE=1` and its siblings) by default, set when `worldmodel` is
imported (some transformers versions read them at import) and again before each model load.
A user opts in explicitly: `hub_kernels=True` (`WorldModel.load(..., hub_kernels=True)`,
`wm train --hub-kernels`), or by setting those variables in the environment themselves.
"""

from __future__ import annotations

import os
import sys

# what transformers, huggingface_hub and datasets read: hub kernels, and the hub client offline
KERNELS_ENV = "USE_HUB_KERNELS"
OFFLINE_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


def defaults() -> None:
    """Hub kernels off and the hub client offline, unless the environment already says otherwise."""
    os.environ.setdefault(KERNELS_ENV, "NO")
    for k in OFFLINE_ENV:
        os.environ.setdefault(k, "1")


def local_only(hub_kernels: bool = False) -> None:
    """Call before transformers loads a model. `hub_kernels=True` is the explicit opt-in: hub
    kernels on and the hub client online for this process."""
    if hub_kernels:
        os.environ[KERNELS_ENV] = "YES"
        for k in OFFLINE_ENV:
            os.environ[k] = "0"
    else:
        defaults()
    # huggingface_hub reads HF_HUB_OFFLINE once, at import: tell an already imported one too
    hub = sys.modules.get("huggingface_hub.constants")
    if hub is not None:
        hub.HF_HUB_OFFLINE = os.environ["HF_HUB_OFFLINE"].upper() in ("1", "ON", "YES", "TRUE")


def require_checkpoint(path, what: str = "model checkpoint") -> None:
    """Fail in one line where `path` is not a local checkpoint folder (its `config.json`):
    transformers would take the name for a hub id and end in a lookup's traceback."""
    from pathlib import Path

    if not (Path(path) / "config.json").is_file():
        raise FileNotFoundError(
            f"no {what} at {path} (a folder with config.json): models load from local folders only"
        )


def hub_kernels_on() -> bool:
    """Whether transformers may fetch hub kernels in this process (its own reading of the variable)."""
    return os.environ.get(KERNELS_ENV, "YES").upper() in ("1", "ON", "YES", "TRUE")


defaults()  # on import: `worldmodel` imports this module before anything that imports transformers
