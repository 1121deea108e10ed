"""Strict layers: render <- worldmodel <- (corpus, planning) <- training <- wmcli, benchmarks.

Every import of every module (function-level ones included) is read with `ast`, and so are the
imports named in strings: `importlib.import_module("m")` and "module:Name" tables (the backend
registry, the face's lazy re-exports). A lower layer importing a higher one, one stage importing
its sibling, or any cycle between two modules fails here.
"""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYER = {"render": 0, "worldmodel": 1, "corpus": 2, "planning": 2, "training": 3, "wmcli": 4, "benchmarks": 4}
# the one place a layer names the layers above it: the face's lazy re-export table (strings only)
FACE = "worldmodel/__init__.py"
_NAMED = re.compile(r"([A-Za-z_][\w.]*):[A-Za-z_]\w*")  # "module:Name"
_LOADERS = {"import_module", "__import__"}


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _project_modules(root: Path = ROOT) -> dict[str, Path]:
    return {_module_name(f, root): f for pkg in LAYER for f in sorted((root / pkg).rglob("*.py"))}


def _edges(path: Path, known=None, root: Path = ROOT) -> tuple[set[str], set[str]]:
    """The modules `path` imports, as (statement imports, string imports): every `import`/`from`
    at any depth, relative ones resolved, `from pkg import sub` read as the submodule; then the
    literal arguments of `importlib.import_module`/`__import__` and every "module:Name" string.
    A name is kept when it (or its longest known prefix) is in `known` (default: this project's
    modules; outside the project, its first part, if it is a layer)."""
    here = _module_name(path, root) if path.is_relative_to(root) else path.stem
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    if known is None:
        known = set(_project_modules(root))

    def resolve(name: str) -> str | None:
        while name:
            if name in known:
                return name
            name = name.rpartition(".")[0]
        return None

    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    stmt: set[str | None] = set()
    strings: set[str | None] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            stmt |= {resolve(a.name) for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            mod = ".".join([*base, *([node.module] if node.module else [])])
            for a in node.names:
                stmt.add(resolve(f"{mod}.{a.name}") if f"{mod}.{a.name}" in known else resolve(mod))
        elif isinstance(node, ast.Call):
            fn = node.func
            called = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            arg = node.args[0] if node.args else None
            if called in _LOADERS and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                strings.add(resolve(arg.value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = _NAMED.fullmatch(node.value)
            if m:
                strings.add(resolve(m.group(1)))
    return (stmt - {None, here}), (strings - {None, here})


def _imports(path: Path) -> set[str]:
    """The layers `path` imports, by statement or by string."""
    stmt, strings = _edges(path)
    return {m.split(".")[0] for m in stmt | strings} & set(LAYER)


def test_no_module_imports_a_layer_above_or_beside_it():
    bad = []
    for pkg, rank in LAYER.items():
        for f in sorted((ROOT / pkg).rglob("*.py")):
            stmt, strings = _edges(f)
            lazy = strings if str(f.relative_to(ROOT)) == FACE else set()
            for dep in {m.split(".")[0] for m in stmt | (strings - lazy)}:
                if dep != pkg and LAYER[dep] >= rank:
                    bad.append(f"{f.relative_to(ROOT)} imports {dep}")
    assert bad == []


def test_library_modules_import_submodules_not_the_face():
    """Below wmcli and benchmarks, `from worldmodel.types import Action`, never `from worldmodel
    import Action`: the face re-exports the layers above it, so importing it from them is a cycle."""
    bad = []
    for pkg in ("render", "worldmodel", "corpus", "planning", "training"):
        for f in sorted((ROOT / pkg).rglob("*.py")):
            if str(f.relative_to(ROOT)) != FACE and "worldmodel" in _edges(f)[0]:
                bad.append(str(f.relative_to(ROOT)))
    assert bad == []


def test_the_checker_sees_function_level_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from corpus.store import load_corpus\n    import training.train\n")
    assert _imports(f) == {"corpus", "training"}


def test_the_checker_sees_imports_named_in_strings(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(
        "import importlib\nTABLE = {'x': 'training.train:train'}\n"
        "def f():\n    return importlib.import_module('planning'), 'not: a module', 'a:b'\n"
    )
    assert _imports(f) == {"planning", "training"}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def _import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    mods = _project_modules(root)
    known = set(mods)
    return {m: set().union(*_edges(f, known, root)) for m, f in mods.items()}


def test_no_import_cycles():
    assert _cycles(_import_graph()) == []


def test_the_cycle_checker_sees_deferred_and_string_imports(tmp_path):
    (tmp_path / "worldmodel" / "backends").mkdir(parents=True)
    (tmp_path / "planning").mkdir()
    files = {
        "worldmodel/__init__.py": "import importlib\ndef __getattr__(n):\n    importlib.import_module('planning')\n",
        "worldmodel/types.py": "X = 1\n",
        "worldmodel/backends/__init__.py": "",
        "worldmodel/backends/base.py": "KINDS = {'copy': 'worldmodel.backends.copy:Copy'}\n",
        "worldmodel/backends/copy.py": "from .base import KINDS\n",
        "planning/__init__.py": "def f():\n    from worldmodel import types\n    from worldmodel import X\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert _cycles(_import_graph(tmp_path)) == [
        ["planning", "worldmodel"],
        ["worldmodel.backends.base", "worldmodel.backends.copy"],
    ]


def test_readme_python_needs_only_the_worldmodel_package():
    readme = (ROOT / "README.md").read_text()
    blocks = [b.split("```", 1)[0] for b in readme.split("```python")[1:]]
    assert blocks, "the README has Python examples"
    for b in blocks:
        for node in ast.walk(ast.parse(b)):
            if isinstance(node, ast.ImportFrom):
                assert node.module == "worldmodel", node.module
            elif isinstance(node, ast.Import):
                assert all(a.name == "worldmodel" for a in node.names)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_uses(path: Path) -> list[str]:
    """Another module's private (_underscore) names this file imports or reads off an imported
    module: `from m import _x`, and `m._x` where `m` was imported as a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    bad, modules = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                modules.add(a.asname or a.name.split(".")[0])
                bad += [f"import {a.name}"] if any(_private(p) for p in a.name.split(".")) else []
        elif isinstance(node, ast.ImportFrom):
            mod = "." * node.level + (node.module or "")
            for a in node.names:
                if _private(a.name):
                    bad.append(f"from {mod} import {a.name}")
                else:
                    modules.add(a.asname or a.name)  # maybe a module (`from . import edit`)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and _private(node.attr)
        ):
            bad.append(f"{node.value.id}.{node.attr}")
    return bad


def test_no_module_imports_another_modules_private_name():
    bad = []
    for pkg in LAYER:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            bad += [f"{f.relative_to(ROOT)}: {b}" for b in _private_uses(f)]
    assert bad == []


def test_the_private_name_checker_sees_each_form(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(
        "from .edit import _soup, diff\nfrom worldmodel import edit\nimport render.metrics as rm\n"
        "def g():\n    return edit._numbered(rm._pair(1, 2)), diff, edit.apply, __name__\n"
    )
    assert sorted(_private_uses(f)) == ["edit._numbered", "from .edit import _soup", "rm._pair"]
