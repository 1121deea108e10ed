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
