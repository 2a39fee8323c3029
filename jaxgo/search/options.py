"""The schema of a ``SearchConfig`` field (``Option``), written once beside the field with ``option``, and the
coercion of a client's value to it (``coerce``: a number, a switch word, None or ``auto`` for a board-size
default).  ``jaxgo.search.config`` builds ``OPTIONS`` from its fields; ``jaxgo.server.settings`` checks a
client's values against their bounds."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple


class Option(NamedTuple):
    """The schema of one ``SearchConfig`` field, written once beside it (``option``) and read by every check:
    coercion (``SearchConfig.with_overrides``), the bounds of ``jaxgo.server.settings`` (overrideSettings, GTP
    parameters), the command-line options (``config.add_arguments``) and the board-size defaults
    (``SearchConfig.for_size``)."""

    name: str
    kind: type  # bool (a switch), int, float or str: the annotation's first type
    nullable: bool  # None is a value (the annotation says ``| None``)
    default: object
    help: str
    bounds: tuple | None = None  # (lowest, highest) a client may set; None: no bounds beyond the type's
    low_open: bool = False  # the lowest bound itself is refused
    choices: tuple | None = None  # the accepted words (checked by SearchConfig)
    by_size: tuple | None = None  # (below config.LARGE_BOARD, from it on): the value of a field left at None
    flag: str | None = None  # its own command-line option (else --search-option FIELD=VALUE only)
    old_name: str | None = None  # accepted for one version with a deprecation message


def option(default, help: str, *, flag: str | bool = False, **schema):
    """A ``SearchConfig`` field with its schema (``Option``; ``flag=True``: ``--field-name``)."""
    return dataclasses.field(default=default, metadata={"help": help, "flag": flag, **schema})


_KINDS = {"bool": bool, "int": int, "float": float, "str": str}


def field_option(field: dataclasses.Field) -> Option:
    """The ``Option`` of a dataclass field: its kind and nullability from the annotation, the rest from
    ``option``'s metadata (a field declared without ``option`` has help "" and no bounds); TypeError for an
    annotation other than bool, int, float or str, each optionally ``| None``."""
    annotation = field.type.__name__ if isinstance(field.type, type) else str(field.type)
    types = [part.strip() for part in annotation.split("|")]
    if types[0] not in _KINDS or not set(types[1:]) <= {"None"}:
        raise TypeError(f"SearchConfig.{field.name}: a field is bool, int, float or str, or one of them | None; "
                        f"not {field.type}")
    meta = dict(field.metadata)
    flag = meta.pop("flag", False)
    flag = "--" + field.name.replace("_", "-") if flag is True else flag or None
    return Option(field.name, _KINDS[types[0]], "None" in types, field.default, meta.pop("help", ""), flag=flag,
                  **meta)


def asks_default(spec: Option, value) -> bool:
    """Whether ``value`` asks for the field's board-size default: None or ``auto`` (any case) for a field with
    ``by_size``."""
    return spec.by_size is not None and (value is None or (isinstance(value, str) and value.lower() == "auto"))


def coerce(spec: Option, value):
    """``value`` as the kind of the field ``spec``; ValueError naming the field if it is not one."""
    key = spec.name
    if (value is None and spec.nullable) or asks_default(spec, value):
        return None
    if spec.kind is bool:
        return as_bool(key, value)
    if isinstance(value, bool):
        raise ValueError(f"{key}: expected a number or string, got {value!r}")
    if spec.kind is str:
        if not isinstance(value, str):
            raise ValueError(f"{key}: expected a string, got {value!r}")
        return value
    if spec.kind is int:
        if not isinstance(value, int) and not (isinstance(value, float) and value.is_integer()):
            raise ValueError(f"{key}: expected an integer, got {value!r}")
        return int(value)
    if not isinstance(value, (int, float)) or value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{key}: expected a finite number, got {value!r}")
    return float(value)


def as_bool(key: str, value) -> bool:
    """A switch from a bool, 0 / 1, or true / false / on / off / yes / no (any case)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in ("true", "false", "on", "off", "yes", "no"):
        return value.lower() in ("true", "on", "yes")
    raise ValueError(f"{key}: expected true or false, got {value!r}")
