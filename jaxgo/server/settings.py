"""Bounds of the search settings a client may change: a query's ``overrideSettings`` (JSON) and, through
``jaxgo.gtp.settings``, GTP's ``kata-set_param`` / ``jaxgo-search_config`` (GoGui's parameter dialog).

``SearchConfig`` checks types and the few ranges its code needs; this module refuses the values that make no
sense for a search a client runs (``uct_c -1``, ``n_expand 0``, a string for a switch) with a message that
names the setting, before the config is built.  The bounds are each field's ``bounds`` in its schema
(``jaxgo.search.config.OPTIONS``), written beside the field.  ``check_setting(key, value, text=False)`` returns
the value to use or raises ``SettingError``; JSON switches must be ``true``/``false``, GTP text switches
``true``/``false``/``1``/``0`` (GoGui's ``[bool]`` sends 0 / 1).
"""

from __future__ import annotations

import math

from jaxgo.search.config import MAX_LEAVES_PER_BATCH, MAX_PLAYOUTS_PER_LEAF, OPTIONS, asks_board_default

MAX_GAMMA_FILE_BYTES = 256 << 20
TEXT_TRUE, TEXT_FALSE = ("true", "1"), ("false", "0")


class SettingError(ValueError):
    """A refused setting: ``key`` names it, the message says what is accepted."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}")
        self.key = key


def check_setting(key: str, value, text: bool = False):
    """``value`` checked for the search setting ``key`` against its schema (``jaxgo.search.config.OPTIONS``:
    nullable, switch, bounds; ``text``: it came as GTP text, already parsed to int / float / str / None by the
    caller).  Returns the value to set; SettingError when it is refused.  Settings without bounds
    (``strategy``, ``playout_policy``, ``gammas`` ...) pass unchanged: SearchConfig checks them."""
    spec = OPTIONS.get(key)
    if value is None:
        if spec is not None and spec.nullable:
            return None
        raise SettingError(key, "a value is required")
    if asks_board_default(key, value):
        return None
    if spec is None:
        return value
    if spec.kind is bool:
        return _switch(key, value, text)
    if spec.bounds is None:
        return value
    low, high = spec.bounds
    number = _number(key, value, spec.kind is int)
    above_low = number > low if spec.low_open else number >= low
    if not (above_low and number <= high):
        opening = "(" if spec.low_open else "["
        raise SettingError(key, f"{value!r} is out of range {opening}{low:g}, {high:g}]")
    return number


def _number(key: str, value, integer: bool):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SettingError(key, f"expected {'an integer' if integer else 'a number'}, got {value!r}")
    if integer:
        if not float(value).is_integer():
            raise SettingError(key, f"expected an integer, got {value!r}")
        return int(value)
    return float(value)


def _switch(key: str, value, text: bool) -> bool:
    if isinstance(value, bool):
        return value
    if text and str(value).lower() in TEXT_TRUE + TEXT_FALSE:
        return str(value).lower() in TEXT_TRUE
    accepted = "true, false, 1 or 0" if text else "true or false"
    raise SettingError(key, f"expected {accepted}, got {value!r}")


def check_gamma_file(path: str) -> None:
    """ValueError unless ``path`` names a gamma file this version can use (a regular file, not a FIFO, a
    device or a folder, of reasonable size, that loads as gammas: ``jaxgo.features.gammas.load_checked``)."""
    from jaxgo.features.gammas import load_checked

    load_checked(path, MAX_GAMMA_FILE_BYTES)


__all__ = ["MAX_GAMMA_FILE_BYTES", "MAX_LEAVES_PER_BATCH", "MAX_PLAYOUTS_PER_LEAF", "SettingError", "check_gamma_file",
           "check_setting"]
