"""The real apps the recorder drives, served from local files under a fake origin.

Pages are fulfilled from disk by the browser's request router, so recording
needs no server and no network: http://wm.local/phone/... is our own
multi-screen phone app, http://wm.local/miniwob/... the MiniWoB++ task pages,
http://wm.local/app/NAME/... any folder a user points `wm corpus record` at. A dev server
the user runs on the loopback interface is reached directly; every other request is refused.
"""

from __future__ import annotations

import importlib.util
import mimetypes
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

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
    kind: str  # "phone", "miniwob" or "web"
    root: Path | None = None  # a local folder served under ORIGIN/app/NAME/
    goal: str = ""
    licence: str = ""

    @property
    def loopback_origin(self) -> str | None:
        """scheme://host:port when the app is a dev server on the loopback interface."""
        u = urlsplit(self.url)
        if u.hostname in LOOPBACK_HOSTS:
            return f"{u.scheme}://{u.netloc}"
        return None


LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
VIEWPORTS = {
    "phone": Viewport(PHONE_WIDTH, PHONE_HEIGHT),
    "phone-hd": Viewport(PHONE_WIDTH, PHONE_HEIGHT, 2.0),
    "tablet": Viewport(768, 1024),
    "desktop": Viewport(1280, 800),
}


def parse_viewport(text: str, scale: float = 1.0) -> Viewport:
    """A preset name (phone, phone-hd, tablet, desktop) or WIDTHxHEIGHT in CSS pixels."""
    if text in VIEWPORTS:
        vp = VIEWPORTS[text]
        return Viewport(vp.width, vp.height, scale if scale != 1.0 else vp.device_scale_factor)
    w, sep, h = text.lower().partition("x")
    if not (sep and w.isdigit() and h.isdigit()):
        raise ValueError(f"viewport {text!r} is not one of {', '.join(VIEWPORTS)} or WIDTHxHEIGHT")
    return Viewport(int(w), int(h), scale)


def _app_name(text: str) -> str:
    name = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if not name:
        raise ValueError(f"cannot make an app name from {text!r}")
    return name


def folder_app(
    folder: str | Path,
    entry: str = "index.html",
    name: str | None = None,
    viewport: Viewport | None = None,
    goal: str = "",
    licence: str = "",
) -> AppSpec:
    """A web app from a local folder, served under the fake origin (nothing listens anywhere)."""
    root = Path(folder).resolve()
    if not root.is_dir():
        raise ValueError(f"{folder}: not a folder")
    if not (root / entry).is_file():
        raise ValueError(f"{folder}: has no {entry} (choose the page with --entry)")
    name = _app_name(name or root.name)
    return AppSpec(
        name, f"{ORIGIN}/app/{name}/{entry}", viewport or VIEWPORTS["phone"], "web", root, goal, licence
    )


def url_app(url: str, name: str | None = None, viewport: Viewport | None = None, goal: str = "") -> AppSpec:
    """A web app served by a dev server on this machine's loopback interface; nothing else is reached."""
    u = urlsplit(url)
    if u.scheme not in ("http", "https") or u.hostname not in LOOPBACK_HOSTS:
        raise ValueError(
            f"{url}: only http(s) URLs on the loopback interface (127.0.0.1, localhost, ::1) can be recorded"
        )
    name = _app_name(name or f"localhost-{u.port or 80}")
    return AppSpec(name, url, viewport or VIEWPORTS["phone"], "web", None, goal)


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


def local_file_for(url: str, app: AppSpec | None = None) -> Path | None:
    """Map a wm.local URL to the file it serves, refusing paths that climb out of the roots."""
    if not url.startswith(ORIGIN + "/"):
        return None
    path = unquote(url[len(ORIGIN) + 1 :].split("?", 1)[0].split("#", 1)[0])
    head, _, rest = path.partition("/")
    if head == "app" and app is not None and app.root is not None:
        name, _, rest = rest.partition("/")
        if name != app.name:
            return None
        head, roots = "app", {"app": app.root}
        if rest.endswith("/") or not rest:
            rest += "index.html"
    else:
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


def router(app: AppSpec | None = None):
    """A Playwright route handler for recording `app`: its files (or its loopback dev server),
    the bundled apps' files; every other request is refused."""
    loop = app.loopback_origin if app is not None else None

    def serve(route) -> None:
        url = route.request.url
        if loop and (url == loop or url.startswith(loop + "/")):
            route.continue_()
            return
        f = local_file_for(url, app)
        if f is None:
            route.abort("blockedbyclient")
            return
        ctype = mimetypes.guess_type(f.name)[0] or "application/octet-stream"
        route.fulfill(status=200, body=f.read_bytes(), headers={"content-type": ctype})

    return serve


serve = router()
