"""Strict layers: render <- worldmodel <- (corpus, planning) <- training <- wmcli, benchmarks.

Every import of every module (function-level ones included) is read with `ast`; a lower layer
importing a higher one, or one stage importing its sibling, fails here.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYER = {"render": 0, "worldmodel": 1, "corpus": 2, "planning": 2, "training": 3, "wmcli": 4, "benchmarks": 4}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out & set(LAYER)


def test_no_module_imports_a_layer_above_or_beside_it():
    bad = []
    for pkg, rank in LAYER.items():
        for f in sorted((ROOT / pkg).rglob("*.py")):
            for dep in _imports(f):
                if dep != pkg and LAYER[dep] >= rank:
                    bad.append(f"{f.relative_to(ROOT)} imports {dep}")
    assert bad == []


def test_the_checker_sees_function_level_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from corpus.store import load_corpus\n    import training.train\n")
    assert _imports(f) == {"corpus", "training"}


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
