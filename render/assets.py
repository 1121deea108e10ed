"""Pixels a document refers to by content hash (`src="asset:<hash>"`), resolved at render time.

A screen translated from a phone carries its icons and images as crops of the screenshot. Inlined
as base64 they would make every document long and repeat the same icon on every screen; so a
document names each crop by the hash of its PNG bytes, the crops live once in an asset store
(a corpus' `assets/` folder), and the renderer swaps each name for a data URL just before the
page loads: nothing is fetched, so the sandbox's no-network policy stands. The data URL keeps
the name as its fragment (`data:...#asset:<hash>`), so HTML read back from a page (the sim's
result) is turned back into names by `unresolve`.
"""

from __future__ import annotations

import base64
import hashlib
import re
import threading
from pathlib import Path

HASH_CHARS = 20
ASSET_RE = re.compile(r"asset:([0-9a-f]{" + str(HASH_CHARS) + "})")
_DATA_RE = re.compile(r"data:image/png;base64,[A-Za-z0-9+/=]*#(asset:[0-9a-f]{" + str(HASH_CHARS) + "})")


def asset_hash(png: bytes) -> str:
    return hashlib.sha256(png).hexdigest()[:HASH_CHARS]


class AssetStore:
    """Content-addressed PNG store: in memory, backed by any folders registered with `add_folder`."""

    def __init__(self):
        self._mem: dict[str, bytes] = {}
        self._folders: list[Path] = []
        self._lock = threading.Lock()

    def put(self, png: bytes) -> str:
        """Store PNG bytes; returns their name (the same bytes always get the same name)."""
        h = asset_hash(png)
        with self._lock:
            self._mem.setdefault(h, png)
        return h

    def add_folder(self, folder: str | Path) -> None:
        """Look names up in `folder` (`<hash>.png` files) too, e.g. a loaded corpus' assets."""
        p = Path(folder)
        with self._lock:
            if p.is_dir() and p not in self._folders:
                self._folders.append(p)

    def get(self, h: str) -> bytes | None:
        if h in self._mem:
            return self._mem[h]
        for f in self._folders:
            q = f / f"{h}.png"
            if q.is_file():
                data = q.read_bytes()
                with self._lock:
                    self._mem[h] = data
                return data
        return None

    def write(self, names, folder: str | Path) -> int:
        """Write the named assets into `folder` (created); returns how many were written.
        A name the store does not hold raises KeyError naming it."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        n = 0
        for h in sorted(set(names)):
            data = self.get(h)
            if data is None:
                raise KeyError(f"asset {h} is referenced but not in the asset store")
            (out / f"{h}.png").write_bytes(data)
            n += 1
        return n


STORE = AssetStore()


def names_in(html: str | None) -> set[str]:
    return set(ASSET_RE.findall(html or ""))


def resolve(html: str, store: AssetStore | None = None) -> str:
    """`asset:<hash>` names replaced by data URLs (names the store lacks are left as they are)."""
    if "asset:" not in html:
        return html
    store = store or STORE

    def sub(m):
        data = store.get(m.group(1))
        if data is None:
            return m.group(0)
        return "data:image/png;base64," + base64.b64encode(data).decode() + "#" + m.group(0)

    return ASSET_RE.sub(sub, html)


def unresolve(html: str) -> str:
    """Data URLs that `resolve` made turned back into `asset:<hash>` names."""
    return _DATA_RE.sub(lambda m: m.group(1), html) if "#asset:" in html else html
