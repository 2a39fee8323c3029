"""Bounds of the search settings a client may change: a query's ``overrideSettings`` (JSON) and, through
``jaxgo.gtp.settings``, GTP's ``kata-set_param`` / ``jaxgo-search_config`` (GoGui's parameter dialog).

``SearchConfig`` checks types and the few ranges its code needs; this module refuses the values that make no
sense for a search a client runs (``uct_c -1``, ``n_expand 0``, a string for a switch) with a message that
names the setting, before the config is built.  ``check_setting(key, value, text=False)`` returns the value
to use or raises ``SettingError``; JSON switches must be ``true``/``false``, GTP text switches
``true``/``false``/``1``/``0`` (GoGui's ``[bool]`` sends 0 / 1).
"""

from __future__ import annotations

import math

from jaxgo.search.config import BY_SIZE, asks_board_default

MAX_LEAVES_PER_BATCH = 1024  # each device call holds leaves x L boards; every new K compiles new shapes
MAX_PLAYOUTS_PER_LEAF = 256  # as the GTP engine allows
MAX_GAMMA_FILE_BYTES = 256 << 20

# setting -> (lowest, highest, whether the lowest itself is allowed); integers are the settings in INTEGERS
RANGES = {
    "uct_c": (0.0, 100.0, True), "rave_c1": (0.0, 100.0, True), "rave_c3": (0.0, 1e6, True),
    "bias_c2": (0.0, 1e6, True), "playout_temperature": (0.0, 100.0, False), "prior_even": (0.0, 1e6, True),
    "prior_pattern": (0.0, 1e6, True), "pass_prior_playouts": (0.0, 1e9, True), "n_expand": (1, 10_000, True),
    "resign_threshold": (0.0, 1.0, True), "resign_min_playouts": (0, 10 ** 9, True), "pp_c": (0.0, 100.0, True),
    "pp_min_samples": (1, 10 ** 6, True), "flat_playouts_per_move": (1, 4096, True),
    "widen_playouts": (0.0, 1e9, True), "widen_factor": (1.0, 100.0, False), "late_fill": (0.0, 1.0, True),
    "score_utility": (0.0, 0.5, True), "leaves_per_batch": (1, MAX_LEAVES_PER_BATCH, True),
    "playouts_per_leaf": (1, MAX_PLAYOUTS_PER_LEAF, True), "threads": (0, 1024, True),
    "playouts_per_visit": (1, 64, True),
}
INTEGERS = {"n_expand", "resign_min_playouts", "pp_min_samples", "flat_playouts_per_move", "leaves_per_batch",
            "playouts_per_leaf", "threads", "playouts_per_visit"}
SWITCHES = {"early_stop", "ladder_prune", "ladder_prune_tree"}
NULLABLE = {"gammas", "leaves_per_batch", "late_playout_policy", *BY_SIZE}  # None (BY_SIZE: or auto) = the default
TEXT_TRUE, TEXT_FALSE = ("true", "1"), ("false", "0")


class SettingError(ValueError):
    """A refused setting: ``key`` names it, the message says what is accepted."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}")
        self.key = key


def check_setting(key: str, value, text: bool = False):
    """``value`` checked for the search setting ``key`` (``text``: it came as GTP text, already parsed to
    int / float / str / None by the caller).  Returns the value to set; SettingError when it is refused.
    Settings without bounds here (``strategy``, ``playout_policy``, ``gammas`` ...) pass unchanged."""
    if value is None:
        if key in NULLABLE:
            return None
        raise SettingError(key, "a value is required")
    if asks_board_default(key, value):
        return None
    if key in SWITCHES:
        return _switch(key, value, text)
    if key not in RANGES:
        return value
    low, high, low_ok = RANGES[key]
    number = _number(key, value, key in INTEGERS)
    above_low = number >= low if low_ok else number > low
    if not (above_low and number <= high):
        opening = "[" if low_ok else "("
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
