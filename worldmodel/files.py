"""Files written whole or not at all.

Why: a checkpoint card, a figures file or a predicted page that a crash leaves half-written, or
that a run beside this one reads half-written, is worse than none. Every file a command or a run
hands its reader (checkpoint cards, figures, reports, predicted pages and images, headlines) goes
through `write_whole`: a temporary file of this process beside the target, then one rename, which
is atomic within one folder on POSIX. What was at `path` before stays until the rename. (A corpus
is written as a folder and swapped whole: corpus/store.py.)
"""

from __future__ import annotations

import os
from pathlib import Path


def write_whole(path: str | Path, data: bytes | str) -> Path:
    """Write `data` (text as UTF-8) to `path` whole or not at all; return the path."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
