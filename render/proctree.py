"""Read the process tree below us from /proc: who our Chromium processes are and what they hold.

The memory watchdog, the training run's per-rank log, the soak benchmark and the multi-process
test all ask the same questions (which processes descend from this one, which are Chromium, how
much memory they hold, is this pid still the process we saw). They are answered here once. Linux
only: where /proc is missing every reader answers "nothing".
"""

from __future__ import annotations

import os


def _stat_fields(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (which may hold spaces and parens)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rindex(b")") + 2 :].split()
    except (OSError, ValueError):
        return None


def pids() -> list[int]:
    """Every process visible now."""
    return [int(d) for d in (os.listdir("/proc") if os.path.isdir("/proc") else []) if d.isdigit()]


def children_map() -> dict[int, list[int]]:
    """Parent pid -> its children's pids, for every process visible now."""
    kids: dict[int, list[int]] = {}
    for p in pids():
        if (fields := _stat_fields(p)) is not None:
            kids.setdefault(int(fields[1]), []).append(p)
    return kids


def descendants(root: int | None = None) -> list[int]:
    """`root` (this process by default) and every process below it."""
    kids = children_map()
    out, todo = [], [root or os.getpid()]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def cmdline(pid: int) -> list[bytes]:
    """The process' argv ([] once it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def alive(pid: int) -> bool:
    """Running or sleeping: neither gone nor a zombie waiting to be reaped."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != b"Z"


def started(pid: int) -> int | None:
    """The process' start time (clock ticks after boot): with its pid, who it is (pids recycle)."""
    fields = _stat_fields(pid)
    try:
        return int(fields[19]) if fields else None
    except (ValueError, IndexError):
        return None


def name(pid: int) -> str:
    """The process' command name as the kernel keeps it (at most 15 characters; '' once gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.index(b"(") + 1 : stat.rindex(b")")].decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""


def cpu_seconds(pid: int) -> float:
    """CPU time the process has used so far, user plus system (0 once it is gone)."""
    fields = _stat_fields(pid)
    try:
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") if fields else 0.0
    except (ValueError, IndexError):
        return 0.0


def _status_kb(pid: int, path: str, key: str) -> float:
    try:
        with open(f"/proc/{pid}/{path}") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def rss_mb(pid: int) -> float:
    """Resident set size in MB (0 once the process is gone)."""
    return _status_kb(pid, "status", "VmRSS:")


def anon_mb(pid: int) -> float:
    """Resident anonymous memory in MB: what the process itself allocated, without the pages of
    files it maps (a memory-mapped Arrow table's pages are the page cache's, freed under pressure)."""
    return _status_kb(pid, "status", "RssAnon:")


def pss_mb(pid: int) -> float:
    """Proportional set size in MB: shared pages split among the processes sharing them."""
    return _status_kb(pid, "smaps_rollup", "Pss:")


def is_chromium(pid: int) -> bool:
    """Any Chromium process: the browser, its renderers, its GPU and utility helpers."""
    argv = cmdline(pid)
    exe = argv[0].split(b" ")[0].lower() if argv else b""
    return b"chrom" in exe.rsplit(b"/", 1)[-1] or b"headless_shell" in exe


def chromium_browsers(root: int | None = None) -> list[int]:
    """The Chromium browser processes (not their helpers) below `root` (this process)."""
    out = []
    for p in descendants(root)[1:]:
        argv = cmdline(p)
        # Chromium rewrites its helpers' command lines into one string: look at it whole
        if argv and b"chrom" in argv[0].lower() and b"--type=" not in b" ".join(argv):
            out.append(p)
    return sorted(out)


def renderer_pids(root: int | None = None) -> list[int]:
    """Chromium renderer processes below `root` (this process by default)."""
    return [p for p in descendants(root)[1:] if b"--type=renderer" in b"\0".join(cmdline(p))]
