"""The core install (`pip install -e .`, no extras) renders and scores HTML; each layer's extra is named.

Uninstalling packages from the test machine is not an option, so the core install is imitated
honestly in a subprocess: a meta-path finder installed before anything else makes every import
of the packages only extras bring fail exactly as a missing package does (ModuleNotFoundError).
`wm --help`, `wm render` and scoring must then work on the real Chromium, and `wm train` and
`wm corpus stats` must say in one line which extra to install.
"""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wmcli import EXTRA_OF_MODULE

ROOT = Path(__file__).resolve().parent.parent
# the packages only extras bring (distribution names), and the names they are imported by
HEAVY_DISTS = (
    "torch",
    "transformers",
    "trl",
    "accelerate",
    "datasets",
    "tokenizers",
    "gymnasium",
    "tfrecord",
    "protobuf",
    "grpcio-tools",
    "httpx",
)
IMPORTED_AS = {"protobuf": "google", "grpcio-tools": "grpc_tools"}
HEAVY = tuple(IMPORTED_AS.get(d, d) for d in HEAVY_DISTS)

PRELUDE = textwrap.dedent(
    """
    import importlib.abc, sys
    HEAVY = set({heavy!r})
    class NotInstalled(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in HEAVY:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
    sys.meta_path.insert(0, NotInstalled())
    sys.path.insert(0, {root!r})
    """
)

SCRIPT = textwrap.dedent(
    """
    import contextlib, io, json, sys
    from pathlib import Path
    import wmcli
    tmp = Path(sys.argv[1])
    out = {{}}

    def wm(*args):
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            rc = wmcli.main(list(args))
        return rc, err.getvalue().strip().splitlines()

    out["help"] = wm("--help")[0]
    (tmp / "a.html").write_text("<div id='screen' style='width:120px;height:90px'><p>Milk</p><b>2</b></div>")
    out["render"] = wm("render", str(tmp / "a.html"), "-o", str(tmp / "a.png"), "--width", "120", "--height", "90")
    out["png"] = (tmp / "a.png").is_file()

    from render import Renderer, Viewport
    from render.metrics import blur_ssim, pixels_off, ssim, text_f1
    from worldmodel.edit import apply, diff
    a = (tmp / "a.html").read_text()
    b = a.replace("Milk", "Eggs")
    with Renderer(pool_size=1) as r:
        ra, rb = r.render_many([(a, Viewport(120, 90)), (b, Viewport(120, 90))])
    out["scores"] = [ssim(ra.image, ra.image), ssim(ra.image, rb.image), blur_ssim(ra.image, rb.image),
                     pixels_off(ra.image, rb.image), text_f1(b, a)]
    out["edit"] = apply(a, diff(a, b)) == b
    out["train"] = wm("train")
    out["stats"] = wm("corpus", "stats")
    out["loaded"] = sorted({{m.split(".")[0] for m in sys.modules}} & set({heavy!r}))
    print(json.dumps(out))
    """
)


def test_core_dependencies_leave_out_every_layer_package():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {d.split(">")[0].split("=")[0].split("<")[0].split("[")[0].strip() for d in meta["dependencies"]}
    assert not core & set(HEAVY_DISTS), core & set(HEAVY_DISTS)
    extras = meta["optional-dependencies"]
    named = {e for es in EXTRA_OF_MODULE.values() for e in es}
    assert named <= set(extras), named - set(extras)
    assert {"hf", "corpus", "train", "planning", "openai"} <= set(
        extras["all"][0].split("[")[1].rstrip("]").split(",")
    )
    listed = " ".join(d for es in extras.values() for d in es)
    for dist in HEAVY_DISTS:  # every package the code imports is in some extra
        assert dist in listed, dist


def test_core_install_renders_and_scores_and_names_the_missing_extra(tmp_path):
    code = PRELUDE.format(heavy=HEAVY, root=str(ROOT)) + SCRIPT.format(heavy=HEAVY)
    res = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr[-2000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["help"] == 0
    assert got["render"] == [0, []] and got["png"]
    same, other, blurred, off, f1 = got["scores"]
    assert same == 1.0 and other < 1.0 and blurred < 1.0 and 0 < off < 1 and f1 == 0.5
    assert got["edit"]
    rc, err = got["train"]
    assert rc == 1 and len(err) == 1, err
    assert err[0].startswith("error: ") and "worldmodel[train]" in err[0] and "Traceback" not in err[0]
    rc, err = got["stats"]
    assert rc == 1 and len(err) == 1 and "worldmodel[corpus]" in err[0], err
    assert got["loaded"] == []
