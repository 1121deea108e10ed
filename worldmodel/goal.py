"""What a goal quotes: the one reading of a task's quoted strings, for every layer that needs it.

MiniWoB++ goals (and ours) put what to type or pick in double quotes, often after the word that
says where it goes: `Enter the username "kasie" and the password "x2"`. The recorder's scripted
solver, the example agent, the goal scorers and the progress scorer all read those strings, so
they read them here, the same way.
"""

from __future__ import annotations

import re

# A quoted string and the word just before it, e.g. `username "kasie"` -> ("username", "kasie").
_QUOTED = re.compile(r'(?:(\w+)\s+)?"([^"]*)"')


def goal_quotes(goal: str | None) -> list[tuple[str, str]]:
    """Each double-quoted string of `goal` in order, with the word just before it ("" if none)."""
    return [(w or "", q) for w, q in _QUOTED.findall(goal or "")]


def quote_spans(goal: str | None) -> list[tuple[int, int, str]]:
    """Each non-empty double-quoted string of `goal` as (start, end, text): start at its opening
    quote, end past its closing one."""
    return [(m.start(2) - 1, m.end(), m.group(2)) for m in _QUOTED.finditer(goal or "") if m.group(2)]


def quoted(goal: str | None) -> list[str]:
    """The non-empty double-quoted strings of `goal`, in order."""
    return [q for _, q in goal_quotes(goal) if q]
