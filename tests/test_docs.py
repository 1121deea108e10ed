"""The documents say what holds: the README's results table is the one the benchmarks' JSON gives,
every backend kind and every `wm` command is documented, and the README's quickstart runs.

A document drifts from the code without anyone noticing. These tests read the names from the code
(the backend registry and the spec grammar; the CLI's own parser) and the figures from
benchmarks/results/*.json, so a new kind, a new command or a new figure that the documents leave
out fails here. Each check is also shown failing on a text that leaves one out.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TABLE = ROOT / "benchmarks" / "results_table.py"


def _docs_text() -> str:
    """README.md and every docs/*.md, joined."""
    files = [README, *sorted((ROOT / "docs").glob("*.md"))]
    return "\n".join(f.read_text(encoding="utf-8") for f in files)


def _backend_kinds() -> list[str]:
    from worldmodel.backends.registry import BACKENDS
    from worldmodel.spec import KINDS

    assert set(KINDS) == set(BACKENDS), "the spec grammar's kinds are the registry's names"
    return sorted(BACKENDS)


def _wm_commands() -> list[str]:
    """Every command and subcommand the `wm` parser knows, as typed: "wm eval", "wm corpus merge"."""
    import typer.main

    from wmcli import app

    def walk(cmd, prefix):
        subs = getattr(cmd, "commands", None)
        if not subs:
            return [prefix]
        out = [prefix] if prefix != "wm" else []
        for name, sub in sorted(subs.items()):
            out += walk(sub, f"{prefix} {name}")
        return out

    return walk(typer.main.get_command(app), "wm")


def _undocumented_kinds(text: str, kinds) -> list[str]:
    """Kinds not written as code in `text`: `sim`, `hf:PATH`, `memory[:CORPUS]`, `sim+memory`."""
    return [k for k in kinds if not re.search(rf"`{re.escape(k)}[`:\[+]", text)]


def _undocumented_commands(text: str, commands) -> list[str]:
    return [c for c in commands if not re.search(rf"{re.escape(c)}(?![\w-])", text)]


def test_every_backend_kind_is_documented():
    kinds = _backend_kinds()
    assert len(kinds) >= 6
    assert _undocumented_kinds(_docs_text(), kinds) == []


def test_every_wm_command_is_documented():
    commands = _wm_commands()
    assert {"wm render", "wm predict", "wm eval", "wm train", "wm corpus", "wm corpus compact"} <= set(
        commands
    )
    assert _undocumented_commands(_docs_text(), commands) == []


def test_the_checks_see_what_is_missing():
    text = _docs_text()
    without = re.sub(r"wm corpus compact(?![\w-])", "wm corpus shrink", text)
    assert _undocumented_commands(without, _wm_commands()) == ["wm corpus compact"]
    # "wm corpus import-android" must not pass for "wm corpus import"
    assert _undocumented_commands("wm corpus import-android", ["wm corpus import"]) == ["wm corpus import"]
    without = re.sub(r"`openai[`:\[+]", "`open-ai:", text)
    assert _undocumented_kinds(without, _backend_kinds()) == ["openai"]


def test_readme_is_short_and_opens_with_the_results_table():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 250
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[0] == "## Results at a glance"
    assert "<!-- results-table:start" in text and "<!-- results-table:end -->" in text
    # the two set-up commands, verbatim, and CI runs the second
    assert "    bash scripts/install.sh && wm train\n" in text
    assert "    bash scripts/install.sh && python3 -m pytest -q tests\n" in text
    assert "bash scripts/install.sh && python3 -m pytest -q tests" in (ROOT / ".ci" / "run").read_text()
    for link in re.findall(r"\]\(((?:docs|benchmarks)/[^)#]+)\)", text):
        assert (ROOT / link).exists(), f"README links to {link}, which is not there"


def test_results_table_is_current():
    out = subprocess.run([sys.executable, str(TABLE), "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_a_stale_results_table_fails_the_check(tmp_path):
    results = tmp_path / "results"
    shutil.copytree(ROOT / "benchmarks" / "results", results)
    readme = tmp_path / "README.md"
    shutil.copy(README, readme)
    check = [sys.executable, str(TABLE), "--check", "--readme", str(readme), "--results", str(results)]
    fix = [sys.executable, str(TABLE), "--readme", str(readme), "--results", str(results)]
    assert subprocess.run(fix, capture_output=True).returncode == 0  # whatever the README says now
    assert subprocess.run(check, capture_output=True).returncode == 0
    first = sorted(results.glob("*.json"))[0]
    row = json.loads(first.read_text())
    row["value"] = "a figure nobody wrote into the README"
    first.write_text(json.dumps(row))
    stale = subprocess.run(check, capture_output=True, text=True)
    assert stale.returncode == 1 and "results table differs" in stale.stderr
    # regenerating puts the new figure in, and the check passes again
    assert subprocess.run(fix, capture_output=True).returncode == 0
    assert "a figure nobody wrote into the README" in readme.read_text()
    assert subprocess.run(check, capture_output=True).returncode == 0


def test_a_headline_records_how_it_was_measured(tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from headline import load, record
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    path = record(
        "demo", "renders/s", 12.5, baseline=10.0, baseline_name="plain", split="x", out_dir=tmp_path
    )
    row = json.loads(path.read_text())
    assert row["value"] == 12.5 and row["baseline"] == 10.0
    assert row["command"].startswith("python ") and row["commit"] and row["date"]
    assert row["machine"]["cores"] >= 1 and row["machine"]["state"] in ("idle", "loaded")
    assert [r["name"] for r in load(tmp_path)] == ["demo"]
    with pytest.raises(ValueError, match="headline name"):
        record("../escape", "x", 1, out_dir=tmp_path)


@pytest.mark.slow
def test_readme_python_quickstart_runs(tmp_path):
    """The README's Python block, run as written: the bundled corpus, the default model, Chromium."""
    block = re.search(r"## Quickstart: Python\n\n```python\n(.*?)```", README.read_text(), re.S)
    assert block, "the README has a Python quickstart block"
    script = tmp_path / "quickstart.py"
    script.write_text(block.group(1))
    out = subprocess.run(
        [sys.executable, "-W", "ignore", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        },
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert (tmp_path / "next.png").stat().st_size > 0
