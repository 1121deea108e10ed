"""The real apps the recorder drives, served from local files under a fake origin.

Pages are fulfilled from disk by the browser's request router, so recording
needs no server and no network: http://wm.local/phone/... is our own
multi-screen phone app, http://wm.local/miniwob/... the MiniWoB++ task pages.
"""

from __future__ import annotations

import importlib.util
import mimetypes
import os
from dataclasses import dataclass
from pathlib import Path

from render import PHONE_HEIGHT, PHONE_WIDTH, Viewport

ORIGIN = "http://wm.local"
PHONE_DIR = Path(__file__).parent / "apps" / "phone"
PHONE_APPS = ("notes", "contacts", "settings")


def miniwob_dir() -> Path:
    """The MiniWoB++ html folder: $WM_MINIWOB_DIR, else the installed `miniwob` wheel's pages."""
    env = os.environ.get("WM_MINIWOB_DIR")
    if env:
        p = Path(env)
    else:
        spec = importlib.util.find_spec("miniwob")
        if spec is None or not spec.submodule_search_locations:
            raise FileNotFoundError(
                "MiniWoB++ pages not found: run scripts/install.sh (pip install --no-deps miniwob==1.1.0) "
                "or set WM_MINIWOB_DIR to its html folder"
            )
        p = Path(next(iter(spec.submodule_search_locations))) / "html"
    if not (p / "miniwob").is_dir():
        raise FileNotFoundError(f"{p} has no miniwob/ task folder")
    return p


def miniwob_tasks() -> list[str]:
    return sorted(f.stem for f in (miniwob_dir() / "miniwob").glob("*.html"))


@dataclass(frozen=True)
class AppSpec:
    """Where an app starts and how big its screen is."""

    name: str
    url: str
    viewport: Viewport
    kind: str  # "phone" or "miniwob"


def phone_app(app: str = "notes", seed: int = 1) -> AppSpec:
    if app not in PHONE_APPS + ("launcher",):
        raise ValueError(f"phone app {app!r} is not one of {PHONE_APPS}")
    return AppSpec(
        f"phone-{app}",
        f"{ORIGIN}/phone/index.html?seed={seed}#/{app}",
        Viewport(PHONE_WIDTH, PHONE_HEIGHT),
        "phone",
    )


def miniwob_app(task: str) -> AppSpec:
    if not (miniwob_dir() / "miniwob" / f"{task}.html").is_file():
        raise ValueError(f"MiniWoB++ task {task!r} not found in {miniwob_dir()}")
    return AppSpec(f"miniwob-{task}", f"{ORIGIN}/miniwob/miniwob/{task}.html", Viewport(160, 210), "miniwob")


def local_file_for(url: str) -> Path | None:
    """Map a wm.local URL to the file it serves, refusing paths that climb out of the roots."""
    if not url.startswith(ORIGIN + "/"):
        return None
    path = url[len(ORIGIN) + 1 :].split("?", 1)[0].split("#", 1)[0]
    head, _, rest = path.partition("/")
    roots = {"phone": PHONE_DIR}
    if head == "miniwob":
        try:
            roots["miniwob"] = miniwob_dir()
        except FileNotFoundError:
            return None
    root = roots.get(head)
    if root is None:
        return None
    f = (root / rest).resolve()
    if root.resolve() not in f.parents or not f.is_file():
        return None
    return f


def serve(route) -> None:
    """Playwright route handler: local app files are served, everything else is refused."""
    f = local_file_for(route.request.url)
    if f is None:
        route.abort("blockedbyclient")
        return
    ctype = mimetypes.guess_type(f.name)[0] or "application/octet-stream"
    route.fulfill(status=200, body=f.read_bytes(), headers={"content-type": ctype})
