"""One benchmark's headline figure, written where the README's table is generated from.

A figure restated by hand in a document goes stale without anyone noticing; a figure a benchmark
writes as it ends does not. Each benchmark script calls `record(...)` at the end of its main with
the one figure it exists to measure, and the baseline measured in the same run. `record` writes
`benchmarks/results/<name>.json`, adding what a reader needs to judge the figure: the exact
command, the git commit it ran at, the date, and the machine (cores, whether a GPU was there,
the load average and "idle" or "loaded"). `benchmarks/results_table.py` turns those files into the
README's "results at a glance" table, and a test fails when the README's table differs.

    from headline import record   # benchmarks/ is on sys.path when a script there runs
    record("batch_bench", "predictions/s, batch of 8 (hf tiny)", 13.57, baseline=4.92,
           baseline_name="one by one", split="bundled test, 8 transitions", unit="/s")

`machine_state` says "idle" or "loaded" when the caller knows (a shared machine is "loaded"); left
out, it is "loaded" when the 1-minute load average exceeds the machine's cores (a benchmark's own
processes load it up to its cores), else "idle", and the load average is recorded beside it.
A partial run (a --limit, a subset of the tasks or apps) passes `partial="why"` and writes
nothing; `WM_HEADLINE_DIR=DIR` sends a full run's JSON elsewhere (a trial that should not replace
the current figure). Nothing here imports anything heavy.
"""

from __future__ import annotations

import datetime
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
FIELDS = (
    "name",
    "figure",
    "value",
    "unit",
    "baseline",
    "baseline_name",
    "split",
    "command",
    "commit",
    "dirty",
    "date",
    "machine",
    "extra",
)


def _git(*args: str) -> str:
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def this_command() -> str:
    """The command that is running, as a person would type it in the repository root."""
    argv = list(sys.argv)
    if argv and argv[0]:
        try:
            argv[0] = os.path.relpath(argv[0], ROOT)
        except ValueError:
            pass
    return "python " + shlex.join(argv)


def has_gpu() -> bool:
    """Whether a CUDA GPU is visible, without importing torch unless something already has."""
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            return bool(torch.cuda.is_available())
        except Exception:
            return False
    return shutil.which("nvidia-smi") is not None and bool(os.environ.get("CUDA_VISIBLE_DEVICES", "x"))


def machine(state: str | None = None, now: bool = True) -> dict:
    """Cores, GPU, load average and "idle"/"loaded" (given, or judged from the load average).
    `now=False` (a figure measured earlier) leaves the load average out: it is not today's."""
    cores = os.cpu_count() or 1
    load = None
    if now:
        try:
            load = round(os.getloadavg()[0], 2)
        except OSError:
            pass
    if state is None and not now:
        raise ValueError("a figure measured earlier needs its machine state: idle, loaded or unknown")
    if state is None:
        state = "loaded" if load is not None and load > cores else "idle"
    if state not in ("idle", "loaded", "unknown"):
        raise ValueError(f"machine state must be 'idle', 'loaded' or 'unknown', not {state!r}")
    return {"cores": cores, "gpu": has_gpu(), "load_average": load, "state": state}


def record(
    name: str,
    figure: str,
    value,
    baseline=None,
    baseline_name: str = "",
    split: str = "",
    command: str | None = None,
    *,
    unit: str = "",
    machine_state: str | None = None,
    commit: str | None = None,
    date: str | None = None,
    out_dir: str | Path | None = None,
    partial: str | None = None,
    **extra,
) -> Path | None:
    """Write benchmarks/results/<name>.json with the figure, its baseline and how it was measured.

    `value` and `baseline` are numbers (or short strings where a figure is not one number);
    `command` defaults to the running one; `commit` and `date` to now (they are given only when
    recording a figure measured earlier); anything else goes under "extra". Returns the path.
    `partial` names why this run is not the benchmark's headline run (a --limit, a subset): then
    nothing is written, so a trial run never replaces the current figure. Returns None then.
    """
    if partial:
        print(f"headline: not written, a partial run ({partial})", file=sys.stderr)
        return None
    if not name or not all(c.isalnum() or c in "-_" for c in name):
        raise ValueError(f"a headline name is letters, digits, - and _, not {name!r}")
    if not figure:
        raise ValueError("a headline needs the figure it reports (what the value measures)")
    dirty = None
    if commit is None:
        commit = _git("rev-parse", "--short", "HEAD") or "unknown"
        dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
    row = {
        "name": name,
        "figure": figure,
        "value": value,
        "unit": unit,
        "baseline": baseline,
        "baseline_name": baseline_name,
        "split": split,
        "command": command if command is not None else this_command(),
        "commit": commit,
        "dirty": dirty,
        "date": date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(machine_state, now=date is None),
        "extra": extra,
    }
    folder = Path(out_dir or os.environ.get("WM_HEADLINE_DIR") or RESULTS)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    from worldmodel.files import write_whole  # the project's one atomic write (imports numpy)

    write_whole(path, json.dumps(row, indent=2, ensure_ascii=False) + "\n")
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    print(f"headline: {shown} (python benchmarks/results_table.py puts it in the README)", file=sys.stderr)
    return path


def load(folder: str | Path | None = None) -> list[dict]:
    """Every recorded headline, sorted by name; a file that is not one names itself in the error."""
    folder = Path(folder) if folder is not None else RESULTS
    rows = []
    for path in sorted(folder.glob("*.json")):
        try:
            row = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise ValueError(f"{path}: not a headline JSON ({e})") from None
        missing = [
            f for f in ("name", "figure", "value", "command", "commit", "date", "machine") if f not in row
        ]
        if missing:
            raise ValueError(f"{path}: headline JSON lacks {', '.join(missing)}")
        rows.append(row)
    return rows
