"""KataGo-compatible JSON-lines analysis protocol: parse and validate requests (responses: ``responses``, the
rules of a query: ``rulesets``).

One request or response per line.  A request is either an analysis query::

    {"id": "q1", "moves": [["B", "D4"], ["W", "pass"]], "rules": "tromp-taylor", "komi": 7.5,
     "boardXSize": 9, "boardYSize": 9, "maxVisits": 500, "analyzeTurns": [0, 2], "includeOwnership": true}

or an action: ``{"id": .., "action": "query_version"}``, ``{"id": .., "action": "terminate", "terminateId": ..,
"turnNumbers": [..]}``, ``{"id": .., "action": "terminate_all"}``, ``{"id": .., "action": "clear_cache"}``.

Errors are ``{"error": message, "field": name, "id": id}`` (``field``/``id`` only when known); the connection
stays usable.  Responses (``responses.build_response``) carry ``id``, ``turnNumber``, ``isDuringSearch``, ``moveInfos``
(``move``, ``visits``, ``winrate``, ``scoreLead``, ``scoreMean``, ``scoreStdev``, ``prior``, ``lcb``, ``order``,
``pv``),
``rootInfo`` and, when asked, ``ownership`` / ``territory`` (X*Y values in [-1, 1], +1 = Black, row by row from
the top-left, A19 first on 19x19) and ``policy`` (X*Y+1 move-model probabilities from the gammas over the
legal moves, pass last, -1 where illegal).  Final responses also carry ``searchConfig``: the search options
in effect.  ``overrideSettings`` takes ``reportAnalysisWinratesAs`` and any ``SearchConfig`` field by name
(``{"playout_policy": "heavy", "bias_c2": 1.0}``); other keys are answered with a warning and ignored.

Differences from KataGo: only square boards 2..19; scoring is always area (Tromp-Taylor); "visits" count
playouts; win rates and score leads are reported for Black (KataGo's ``reportAnalysisWinratesAs = BLACK``,
as KaTrain configures it) unless the server is started with another perspective.
"""

from __future__ import annotations

import dataclasses
import json
import math

from jaxgo.go.config import Rules
from jaxgo.go.coords import BLACK, WHITE, gtp_to_point
from jaxgo.search.config import DEPRECATED_NAMES, SearchConfig, current_name
from jaxgo.server.rulesets import RulesError, parse_rules
from jaxgo.server.settings import check_setting

SEARCH_FIELDS = frozenset(f.name for f in dataclasses.fields(SearchConfig))  # overrideSettings keys for the search

MAX_LINE_BYTES = 1 << 20  # longer request lines are answered with an error and skipped
# maxVisits is effectively unbounded (KaTrain's pondering sends 10,000,000): a search ends at maxVisits, maxTime or
# terminate, and its tree stops growing at the engine's memory cap (the search goes on in the capped tree).
MAX_VISITS_LIMIT = 1 << 50
MAX_TIME_LIMIT = 1e7  # seconds (maxTime)
# Per-query limits that keep one request's memory and replay time small: a game longer than any real one, and an
# analysed turn per position of it.  Each pending turn holds a game copy (~4 KB on 19x19) until it is searched.
MAX_QUERY_MOVES = 1500
MAX_ANALYZE_TURNS = MAX_QUERY_MOVES + 1
DEFAULT_MAX_VISITS = 500
PERSPECTIVES = ("BLACK", "WHITE", "SIDETOMOVE")

KNOWN_FIELDS = {"id", "moves", "initialStones", "initialPlayer", "rules", "komi", "boardXSize", "boardYSize",
                "analyzeTurns", "maxVisits", "maxTime", "includeOwnership", "includePolicy", "includeTerritory",
                "reportDuringSearchEvery", "priority", "priorities", "analysisPVLen", "action",
                "includeOwnershipStdev", "includeMovesOwnership", "includePVVisits", "overrideSettings",
                "avoidMoves", "allowMoves"}
# KataGo query fields this engine has no counterpart for: accepted, and answered with this warning.
IGNORED_FIELDS = {
    "rootPolicyTemperature": "ignored: the root prior is the gammas' move model, not a network policy",
    "rootFpuReductionMax": "ignored: this search has no first-play-urgency reduction",
    "includeNoResultValue": "ignored: area scoring has no no-result outcome here",
    "whiteHandicapBonus": "ignored: scoring is area with the query's komi, no handicap bonus added",
}
# overrideSettings keys of KataGo's that are answered with a warning (any other non-SearchConfig key gets the
# generic "setting ignored" warning); maxTime and reportAnalysisWinratesAs are honoured.
IGNORED_SETTINGS = {
    "wideRootNoise": "ignored: the root is searched without noise (RAVE and progressive bias choose the moves)",
    "humanSLProfile": "ignored: no human-style (humanSL) model here; the search and the gammas' policy answer",
}


class RequestError(Exception):
    """A request that cannot be served; ``to_json()`` is the error object sent back."""

    def __init__(self, message: str, field: str | None = None, ident=None, reason: str | None = None):
        super().__init__(message)
        self.message, self.field, self.ident, self.reason = message, field, ident, reason

    def to_json(self) -> dict:
        out = error_object(self.message, self.field, self.ident)
        if self.reason is not None:
            out["reason"] = self.reason
        return out


def error_object(message: str, field: str | None = None, ident=None) -> dict:
    out = {"error": message}
    if field is not None:
        out["field"] = field
    if ident is not None:
        out["id"] = ident
    return out


@dataclasses.dataclass
class Query:
    """A validated analysis query (points in project coordinates, colours +1/-1)."""

    id: str
    rules: Rules
    initial_stones: list  # [(colour, point)]
    initial_player: int | None
    moves: list  # [(colour, move)], pass = size * size
    analyze_turns: list  # sorted, unique turn numbers in 0..len(moves)
    max_visits: int = DEFAULT_MAX_VISITS
    max_time: float | None = None  # seconds per analysed turn (maxTime, top level or in overrideSettings)
    include_ownership: bool = False
    include_ownership_stdev: bool = False
    include_moves_ownership: bool = False  # per root move: "ownership" in each moveInfo
    include_pv_visits: bool = False
    include_policy: bool = False
    include_territory: bool = False
    report_every: float | None = None  # seconds between isDuringSearch responses
    priority: int = 0
    priorities: dict = dataclasses.field(default_factory=dict)  # turn -> priority (KataGo's "priorities")
    restrictions: list = dataclasses.field(default_factory=list)  # [MoveRestriction] from avoidMoves / allowMoves
    pv_len: int = 10
    perspective: str | None = None  # overrideSettings.reportAnalysisWinratesAs (None: the server's)
    search_settings: dict = dataclasses.field(default_factory=dict)  # overrideSettings keys naming SearchConfig fields
    warnings: list = dataclasses.field(default_factory=list)  # [(field, message)]

    @property
    def size(self) -> int:
        return self.rules.size

    def turn_priority(self, turn: int) -> int:
        return self.priorities.get(turn, self.priority)


@dataclasses.dataclass(frozen=True)
class MoveRestriction:
    """One ``avoidMoves`` / ``allowMoves`` entry: moves of ``colour`` that the search must not (``allow`` False)
    or may only (``allow`` True) play at tree depths below ``until_depth`` (depth 0 = the analysed position)."""

    colour: int
    points: frozenset  # actions (points, pass = size * size)
    until_depth: int
    allow: bool = False

    def forbidden(self, colour: int, depth: int, num_actions: int):
        """bool [A] mask of the actions forbidden to ``colour`` at ``depth`` (None when the entry does not apply)."""
        import numpy as np

        if colour != self.colour or depth >= self.until_depth:
            return None
        mask = np.zeros(num_actions, bool)
        mask[list(self.points)] = True
        return ~mask if self.allow else mask


@dataclasses.dataclass
class Action:
    """A non-analysis request: query_version, terminate, terminate_all, clear_cache."""

    id: object
    action: str
    terminate_id: object = None
    turn_numbers: list | None = None


def decode_line(line) -> dict:
    """One request line (bytes or str) -> JSON object; RequestError for bad JSON / non-objects."""
    if isinstance(line, (bytes, bytearray)):
        if len(line) > MAX_LINE_BYTES:
            raise RequestError(f"request line longer than {MAX_LINE_BYTES} bytes")
        line = bytes(line).decode("utf-8", "replace")
    elif len(line) > MAX_LINE_BYTES:
        raise RequestError(f"request line longer than {MAX_LINE_BYTES} bytes")
    try:
        value = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise RequestError(f"could not parse JSON: {str(exc)[:120]}") from None
    if not isinstance(value, dict):
        raise RequestError("request must be a JSON object")
    return value


def parse_request(obj: dict):
    """A JSON object -> ``Query`` or ``Action``; RequestError naming the offending field."""
    ident = obj.get("id")
    if "id" not in obj:
        raise RequestError("missing field 'id'", "id")
    if not isinstance(ident, (str, int)) or isinstance(ident, bool):
        raise RequestError("'id' must be a string", "id")
    if "action" in obj:
        return _parse_action(obj, ident)
    return _parse_query(obj, ident)


def _parse_action(obj: dict, ident) -> Action:
    action = obj["action"]
    if action in ("query_version", "clear_cache"):
        return Action(ident, action)
    if action in ("terminate", "terminate_all"):
        turns = obj.get("turnNumbers")
        if turns is not None and (not isinstance(turns, list) or not all(_is_int(t) and t >= 0 for t in turns)):
            raise RequestError("'turnNumbers' must be a list of non-negative integers", "turnNumbers", ident)
        if action == "terminate":
            if "terminateId" not in obj:
                raise RequestError("missing field 'terminateId'", "terminateId", ident)
            return Action(ident, action, obj["terminateId"], turns)
        return Action(ident, action, None, turns)
    raise RequestError(f"unknown action {action!r}", "action", ident)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(obj, name, ident, default=None, low=None, high=None, integer=False):
    if name not in obj:
        if default is None:
            raise RequestError(f"missing field '{name}'", name, ident)
        return default
    value = obj[name]
    ok = _is_int(value) if integer else (isinstance(value, (int, float)) and not isinstance(value, bool))
    if not ok or (not integer and not math.isfinite(value)):
        raise RequestError(f"'{name}' must be {'an integer' if integer else 'a number'}", name, ident)
    if (low is not None and value < low) or (high is not None and value > high):
        raise RequestError(f"'{name}' must be in [{low}, {high}]", name, ident)
    return value


def _bool(obj, name, ident) -> bool:
    value = obj.get(name, False)
    if not isinstance(value, bool):
        raise RequestError(f"'{name}' must be true or false", name, ident)
    return value


def parse_colour(word, field: str, ident) -> int:
    if isinstance(word, str) and word.upper() in ("B", "BLACK"):
        return BLACK
    if isinstance(word, str) and word.upper() in ("W", "WHITE"):
        return WHITE
    raise RequestError(f"invalid player {word!r} (B or W)", field, ident)


def parse_vertex(text, size: int, field: str, ident, allow_pass: bool = True) -> int:
    """GTP vertex ('D4', 'pass') -> point (row 0 at the top); RequestError when off the board."""
    if not isinstance(text, str):
        raise RequestError(f"invalid vertex {text!r}", field, ident)
    if not allow_pass and text.strip().upper() == "PASS":
        raise RequestError("pass is not a stone", field, ident)
    try:
        return gtp_to_point(text, size)
    except ValueError:
        raise RequestError(f"invalid vertex {text!r} for a {size}x{size} board", field, ident) from None


def _moves(obj, name, size, ident, allow_pass) -> list:
    value = obj.get(name, [])
    if not isinstance(value, list):
        raise RequestError(f"'{name}' must be a list of [player, vertex] pairs", name, ident)
    out = []
    for item in value:
        if not isinstance(item, list) or len(item) != 2:
            raise RequestError(f"'{name}' entries must be [player, vertex] pairs", name, ident)
        out.append((parse_colour(item[0], name, ident), parse_vertex(item[1], size, name, ident, allow_pass)))
    return out


def _parse_query(obj: dict, ident) -> Query:
    ident = str(ident) if _is_int(ident) else ident
    warnings = [(name, "unknown field ignored") for name in obj if name not in KNOWN_FIELDS | set(IGNORED_FIELDS)]
    warnings += [(name, text) for name, text in IGNORED_FIELDS.items()
                 if name in obj and not (name == "whiteHandicapBonus" and obj[name] == "0")]
    x = _number(obj, "boardXSize", ident, low=2, high=19, integer=True)
    y = _number(obj, "boardYSize", ident, low=2, high=19, integer=True)
    if x != y:
        raise RequestError("only square boards are supported", "boardYSize", ident)
    komi = _number(obj, "komi", ident, default=7.5, low=-150, high=150)
    if "rules" not in obj:
        raise RequestError("missing field 'rules'", "rules", ident)
    if "moves" not in obj:
        raise RequestError("missing field 'moves'", "moves", ident)
    if isinstance(obj["moves"], list) and len(obj["moves"]) > MAX_QUERY_MOVES:
        raise RequestError(f"'moves' has {len(obj['moves'])} moves; at most {MAX_QUERY_MOVES} per query", "moves",
                           ident)
    try:
        rules = parse_rules(obj["rules"], x, komi, warnings)
    except RulesError as exc:
        raise RequestError(str(exc), "rules", ident) from None
    stones = _moves(obj, "initialStones", x, ident, allow_pass=False)
    if len({p for _, p in stones}) != len(stones):
        raise RequestError("two initial stones on one point", "initialStones", ident)
    moves = _moves(obj, "moves", x, ident, allow_pass=True)
    player = parse_colour(obj["initialPlayer"], "initialPlayer", ident) if "initialPlayer" in obj else None
    turns = obj.get("analyzeTurns", [len(moves)])
    if not isinstance(turns, list) or not turns or not all(_is_int(t) and 0 <= t <= len(moves) for t in turns):
        raise RequestError(f"'analyzeTurns' must be a non-empty list of integers in [0, {len(moves)}]",
                           "analyzeTurns", ident)
    if len(turns) > MAX_ANALYZE_TURNS:
        raise RequestError(f"'analyzeTurns' has {len(turns)} entries; at most {MAX_ANALYZE_TURNS} per query",
                           "analyzeTurns", ident)
    override = obj.get("overrideSettings", {})
    if not isinstance(override, dict):
        raise RequestError("'overrideSettings' must be an object", "overrideSettings", ident)
    perspective, search_settings, max_time = _override_settings(override, ident, warnings)
    if "maxTime" in obj:
        max_time = float(_number(obj, "maxTime", ident, low=0, high=MAX_TIME_LIMIT))
    report = obj.get("reportDuringSearchEvery")
    if report is not None:
        report = float(_number(obj, "reportDuringSearchEvery", ident, low=0.001, high=1e6))
    priority = int(_number(obj, "priority", ident, default=0, low=-(2 ** 31), high=2 ** 31, integer=True))
    return Query(
        id=ident, rules=rules, initial_stones=stones, initial_player=player, moves=moves,
        analyze_turns=sorted(set(turns)),
        max_visits=int(_number(obj, "maxVisits", ident, default=DEFAULT_MAX_VISITS, low=1, high=MAX_VISITS_LIMIT,
                               integer=True)),
        max_time=max_time,
        include_ownership=_bool(obj, "includeOwnership", ident), include_policy=_bool(obj, "includePolicy", ident),
        include_ownership_stdev=_bool(obj, "includeOwnershipStdev", ident),
        include_moves_ownership=_bool(obj, "includeMovesOwnership", ident),
        include_pv_visits=_bool(obj, "includePVVisits", ident),
        include_territory=_bool(obj, "includeTerritory", ident), report_every=report, priority=priority,
        priorities=_priorities(obj, turns, ident),
        restrictions=_restrictions(obj, "avoidMoves", x, ident) + _restrictions(obj, "allowMoves", x, ident),
        pv_len=int(_number(obj, "analysisPVLen", ident, default=10, low=1, high=100, integer=True)),
        perspective=perspective, search_settings=search_settings, warnings=warnings)


def _override_settings(override: dict, ident, warnings: list):
    """overrideSettings -> (perspective or None, SearchConfig overrides, maxTime or None); warnings for the rest."""
    perspective, search_settings, max_time = None, {}, None
    for key, value in override.items():
        if key in DEPRECATED_NAMES:
            warnings.append(("overrideSettings", f"setting {key!r} is deprecated; use {DEPRECATED_NAMES[key]!r}"))
            key = current_name(key)
        if key == "reportAnalysisWinratesAs":
            if not isinstance(value, str) or value.upper() not in PERSPECTIVES:
                raise RequestError(f"reportAnalysisWinratesAs must be one of {PERSPECTIVES}", "overrideSettings",
                                   ident)
            perspective = value.upper()
        elif key == "maxTime":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_TIME_LIMIT:
                raise RequestError(f"overrideSettings: maxTime must be a number in [0, {MAX_TIME_LIMIT:g}]",
                                   "overrideSettings", ident)
            max_time = float(value)
        elif key in SEARCH_FIELDS:
            field = f"overrideSettings.{key}"
            try:
                search_settings[key] = check_setting(key, value)
                SearchConfig().with_overrides({key: search_settings[key]})  # its own type and range checks
            except ValueError as exc:
                raise RequestError(f"overrideSettings: {exc}", field, ident) from None
        elif key in IGNORED_SETTINGS:
            warnings.append(("overrideSettings", f"setting {key!r} {IGNORED_SETTINGS[key]}"))
        else:
            warnings.append(("overrideSettings", f"setting {key!r} ignored"))
    try:
        SearchConfig().with_overrides(search_settings)  # checked here, applied to the server's own defaults later
    except ValueError as exc:
        raise RequestError(f"overrideSettings: {exc}", "overrideSettings", ident) from None
    return perspective, search_settings, max_time


def _priorities(obj: dict, turns: list, ident) -> dict:
    """KataGo's ``priorities``: one priority per ``analyzeTurns`` entry -> {turn: priority}."""
    if "priorities" not in obj:
        return {}
    value = obj["priorities"]
    if not isinstance(value, list) or len(value) != len(turns) or not all(
            _is_int(p) and -(2 ** 31) <= p <= 2 ** 31 for p in value):
        raise RequestError("'priorities' must be a list of integers, one per analyzeTurns entry", "priorities",
                           ident)
    return dict(zip(turns, value))


def _restrictions(obj: dict, name: str, size: int, ident) -> list:
    """``avoidMoves`` / ``allowMoves``: [{"player": "B", "moves": ["C3", "pass"], "untilDepth": 1}, ...] ->
    [MoveRestriction].  KataGo allows one ``allowMoves`` entry; pass stays allowed under ``allowMoves``."""
    if name not in obj:
        return []
    value = obj[name]
    if not isinstance(value, list) or (name == "allowMoves" and len(value) > 1):
        raise RequestError(f"'{name}' must be a list of {{player, moves, untilDepth}} objects"
                           + (" (at most one)" if name == "allowMoves" else ""), name, ident)
    out = []
    for entry in value:
        if not isinstance(entry, dict) or not {"player", "moves", "untilDepth"} <= set(entry):
            raise RequestError(f"'{name}' entries need 'player', 'moves' and 'untilDepth'", name, ident)
        colour = parse_colour(entry["player"], name, ident)
        depth = entry["untilDepth"]
        if not _is_int(depth) or depth < 1:
            raise RequestError(f"'{name}' untilDepth must be a positive integer", name, ident)
        if not isinstance(entry["moves"], list):
            raise RequestError(f"'{name}' moves must be a list of vertices", name, ident)
        points = {parse_vertex(v, size, name, ident) for v in entry["moves"]}
        if name == "allowMoves":
            points.add(size * size)
        out.append(MoveRestriction(colour, frozenset(points), int(depth), allow=name == "allowMoves"))
    return out
