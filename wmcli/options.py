"""Command-line flags generated from configuration dataclasses, as trl's `TrlParser` does.

A config dataclass (training.config.TrainConfig, corpus.build.BuildConfig, corpus.configs'
RecordConfig and the phone imports' configs, corpus.heldout.HeldOutConfig) is the one place its
options are written: each field's name, type, default and `metadata` (HfArgumentParser's
convention: `help`, and here also `flag`, `choices`, `min`, `max`, `cli`) become one typer
option. So a new field is a new flag, and the help a user reads is the field's own.

    @with_config(TrainConfig, unset=True)
    def train_command(config: dict, resume: bool = typer.Option(False)) -> None: ...

The command receives `config`, the values the user gave, keyed by field name (nested dataclass
fields, such as TrainConfig.rewards, as a dict of their own); with `unset=True` every option
defaults to None, meaning "the preset's value", and only what was given is in `config`.

Metadata a field may carry:
    help     the option's help text
    flag     its option declaration when not `--field-name` ("--w-sem", "--with-html/--no-html")
    choices  the values it takes (checked here, one `error:` line naming the flag otherwise)
    min/max  a number's range
    cli      False: no flag (set only from Python)
    empty    for a sequence of strings, what "" means: "default" (the field's default) or "none"
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
import typing
from collections.abc import Callable, Sequence

import typer

_SCALARS = (bool, int, float, str)


def _plain(tp) -> tuple[type, bool]:
    """(the scalar or sequence type a field holds, whether it is a sequence of strings)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return _plain(args[0])
    if tp in _SCALARS:
        return tp, False
    if origin in (tuple, list, Sequence) and all(a in (str, Ellipsis) for a in typing.get_args(tp)):
        return str, True
    raise TypeError(f"no command-line form for a field of type {tp!r}")


@dataclasses.dataclass
class _Opt:
    name: str  # the parameter name typer sees
    path: tuple[str, ...]  # where the value goes in the config dict
    flag: str
    kind: type
    sequence: bool
    empty: str
    choices: tuple
    default: object
    help: str | None
    min: float | None
    max: float | None
    unset: bool  # defaults to None: "not given", left out of the config


def options(cls, *, unset: bool = False, keep_default: Sequence[str] = (), prefix=()) -> list[_Opt]:
    """One option per field of `cls` (nested dataclasses flattened), in field order."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        md = f.metadata
        if md.get("cli", True) is False:
            continue
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp):
            out += options(tp, unset=unset, keep_default=keep_default, prefix=(*prefix, f.name))
            continue
        kind, seq = _plain(tp)
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = ...
        dash = f.name.replace("_", "-")
        flag = md.get("flag") or (f"--{dash}/--no-{dash}" if kind is bool else f"--{dash}")
        out.append(
            _Opt(
                name="_".join((*prefix, f.name)),
                path=(*prefix, f.name),
                flag=flag,
                kind=kind,
                sequence=seq,
                empty=md.get("empty", "none"),
                choices=tuple(md.get("choices", ())),
                default=default,
                help=md.get("help"),
                min=md.get("min"),
                max=md.get("max"),
                unset=unset and f.name not in keep_default,
            )
        )
    return out


def _parameter(o: _Opt) -> inspect.Parameter:
    default = None if o.unset else o.default
    if o.sequence and default is not None:
        default = None  # shown as the field's default in the help; "" means what `empty` says
    helptext = o.help or ""
    if o.choices:
        helptext += (" " if helptext else "") + f"({' | '.join(map(str, o.choices))})"
    if o.sequence:
        helptext += (" " if helptext else "") + "(comma-separated)"
    kw = {}
    if o.min is not None:
        kw["min"] = o.min
    if o.max is not None:
        kw["max"] = o.max
    info = typer.Option(default, *o.flag.split(" "), help=helptext or None, **kw)
    kind = str if o.sequence else o.kind
    return inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=kind)


def _value(o: _Opt, v):
    if v is None:
        return None
    if o.choices and v not in o.choices:
        names = [str(c) for c in o.choices]
        listed = " or ".join(names) if len(names) < 3 else f"one of {', '.join(names)}"
        raise typer.BadParameter(f"{v!r} is not {listed}", param_hint=o.flag.split("/")[0])
    if o.sequence:
        items = tuple(s for s in str(v).split(",") if s)
        if not items and o.empty == "default":
            return None
        return items
    return v


def with_config(cls, *, unset: bool = False, keep_default: Sequence[str] = (), name: str = "config"):
    """Decorate a command taking `config: dict` (and its own typer parameters): typer sees the
    command's own parameters followed by one option per field of `cls`."""

    opts = options(cls, unset=unset, keep_default=keep_default)

    def deco(fn: Callable) -> Callable:
        own = [p for p in inspect.signature(fn).parameters.values() if p.name != name]
        clash = {p.name for p in own} & {o.name for o in opts}
        if clash:
            raise TypeError(f"{fn.__name__}: parameters {sorted(clash)} are also fields of {cls.__name__}")
        hints = typing.get_type_hints(fn)
        own = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in own]

        @functools.wraps(fn)
        def command(**kw):
            config: dict = {}
            for o in opts:
                v = _value(o, kw.pop(o.name))
                if v is None and (o.unset or o.sequence):
                    continue
                d = config
                for part in o.path[:-1]:
                    d = d.setdefault(part, {})
                d[o.path[-1]] = v
            return fn(**{name: config}, **kw)

        params = [*own, *(_parameter(o) for o in opts)]
        command.__signature__ = inspect.Signature(params)
        command.__annotations__ = {p.name: p.annotation for p in params}
        return command

    return deco


def flag_names(cls) -> dict[str, str]:
    """Each field of `cls` (by name, nested ones joined by "_") and the flag a user types for it:
    how a pipeline's ArgumentError, which names the field, is shown as the flag."""
    return {o.name: o.flag.split("/")[0].split(" ")[0] for o in options(cls)}
