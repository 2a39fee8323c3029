"""A session's search options and move budget as GTP parameters, and the bounds every family applies to them
(shared by ``jaxgo.gtp.params``: ``kata-*_param``, ``jaxgo.gtp.play``: ``jaxgo-search_config [KEY VALUE]``,
GoGui's parameter dialog, and ``jaxgo.gtp.analysis``).

Keys: every ``SearchConfig`` field by its name (``strategy``, ``uct_c``, ``rave_c1``, ``bias_c2``,
``playout_policy``, ``gammas``, ...; ``jaxgo.search.config``; the old names ``playouts`` and ``late_playouts``
are accepted for one version with a message on stderr), and the move budget:
``maxPlayouts`` (alias ``maxVisits``; playouts per move) and ``maxTime`` (seconds per move); ``none`` unsets a
value (the budget then comes from the GTP clock).  A change applies from the next search: the session's Player
gets a new ``SearchConfig`` (``SearchConfig.with_overrides``, so types and ranges are checked there) and drops
its tree.  Sizes that would exhaust memory are refused (``INT_LIMITS``, from the fields' bounds); a gamma file
must be a regular file.

A move's share of the GTP clock is cut to ``MAX_CLOCK_SECONDS`` (``capped_clock_seconds``,
``clock_share_capped``): ``time_settings 1e9 0 0`` still gives a move within a minute.
"""

from __future__ import annotations

import contextlib

from jaxgo.gtp.protocol import DECIMAL, GtpError, is_integer
from jaxgo.search.config import OPTIONS, current_name
from jaxgo.server.settings import SettingError, check_gamma_file, check_setting

BUDGET_KEYS = {"maxPlayouts": "playouts", "maxVisits": "playouts", "maxTime": "seconds"}
MAX_PLAYOUTS_PER_MOVE = 10_000_000
MAX_SECONDS_PER_MOVE = 3600.0
# SearchConfig integer fields -> the largest value accepted (their schema's bounds), refused over GTP as "at most"
INT_LIMITS = {name: spec.bounds[1] for name, spec in OPTIONS.items() if spec.kind is int and spec.bounds}
MAX_CLOCK_SECONDS = 60.0  # the most a share of the GTP clock may spend on one move


def parse_value(text: str):
    """A parameter value: ``none`` -> None, ASCII integers -> int, decimals -> float, anything else as text."""
    if text.lower() == "none":
        return None
    if is_integer(text):
        return int(text)
    if DECIMAL.fullmatch(text):
        return float(text)
    return text


def format_value(value) -> str:
    return "none" if value is None else str(value)


def param_names(session) -> list[str]:
    return list(session.config.to_dict()) + list(BUDGET_KEYS)


def get_param(session, key: str) -> str:
    """The current value of a parameter, as ``kata-set_param`` takes it."""
    if key in BUDGET_KEYS:
        return format_value(getattr(session.player, BUDGET_KEYS[key]))
    key = current_name(key)
    settings = session.config.to_dict()
    if key not in settings:
        raise GtpError(f"unknown parameter {key}")
    return format_value(settings[key])


def set_param(session, key: str, text: str) -> None:
    """Set one parameter from its text (GtpError naming the problem when it is refused)."""
    value = parse_value(text)
    if key in BUDGET_KEYS:
        setattr(session.player, BUDGET_KEYS[key], _budget_value(key, value))
        return
    key = current_name(key)
    if key not in session.config.to_dict():
        raise GtpError(f"unknown parameter {key}")
    _check_size(key, value)
    try:
        value = check_setting(key, value, text=True)
    except SettingError as exc:
        raise GtpError(str(exc)) from None
    if key == "gammas" and value is not None:
        value = _gamma_file(str(value))
    try:
        config, _ = session.config.with_overrides({key: value})
        session.set_search_config(config)
    except ValueError as exc:
        raise GtpError(str(exc)) from None


def _budget_value(key: str, value):
    if value is None:
        return None
    if key == "maxTime":
        if isinstance(value, str) or not 0 < value <= MAX_SECONDS_PER_MOVE:
            raise GtpError(f"{key}: seconds in (0, {MAX_SECONDS_PER_MOVE:g}] or none")
        return float(value)
    if not isinstance(value, int) or not 1 <= value <= MAX_PLAYOUTS_PER_MOVE:
        raise GtpError(f"{key}: an integer in [1, {MAX_PLAYOUTS_PER_MOVE}] or none")
    return value


def _check_size(key: str, value) -> None:
    limit = INT_LIMITS.get(key)
    if limit is not None and isinstance(value, (int, float)) and not value <= limit:
        raise GtpError(f"{key}: at most {limit}")


def _gamma_file(path: str) -> str:
    """``path`` if it names a gamma file this version can use (``jaxgo.server.settings.check_gamma_file``: a
    regular file, not a FIFO or a device, of reasonable size, loading as gammas of this layout); else GtpError,
    and the session keeps its gammas."""
    try:
        check_gamma_file(path)
    except ValueError as exc:
        raise GtpError(str(exc)) from None
    return path


# -- the clock ------------------------------------------------------------------------------------------------
def uses_clock(player) -> bool:
    """Whether the Player's budget comes from the GTP clock (no fixed playouts or seconds per move)."""
    return player.playouts is None and player.seconds is None


def capped_clock_seconds(player, seconds: float | None) -> float | None:
    """A budget's seconds, cut to ``MAX_CLOCK_SECONDS`` when they are a share of the clock."""
    if seconds is None or not uses_clock(player):
        return seconds
    return min(seconds, MAX_CLOCK_SECONDS)


@contextlib.contextmanager
def clock_share_capped(player, game, colour: int):
    """While a move is chosen by ``player.choose``: a clock share above ``MAX_CLOCK_SECONDS`` is cut to it."""
    _, seconds = player.budget(game, colour)
    if seconds is None or seconds <= MAX_CLOCK_SECONDS or not uses_clock(player):
        yield
        return
    player.seconds = MAX_CLOCK_SECONDS
    try:
        yield
    finally:
        player.seconds = None


__all__ = ["get_param", "set_param", "param_names", "parse_value", "capped_clock_seconds", "clock_share_capped",
           "MAX_CLOCK_SECONDS"]
