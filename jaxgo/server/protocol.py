"""KataGo-compatible JSON-lines analysis protocol: parse and validate requests, build responses.

One request or response per line.  A request is either an analysis query::

    {"id": "q1", "moves": [["B", "D4"], ["W", "pass"]], "rules": "tromp-taylor", "komi": 7.5,
     "boardXSize": 9, "boardYSize": 9, "maxVisits": 500, "analyzeTurns": [0, 2], "includeOwnership": true}

or an action: ``{"id": .., "action": "query_version"}``, ``{"id": .., "action": "terminate", "terminateId": ..,
"turnNumbers": [..]}``, ``{"id": .., "action": "terminate_all"}``, ``{"id": .., "action": "clear_cache"}``.

Errors are ``{"error": message, "field": name, "id": id}`` (``field``/``id`` only when known); the connection
stays usable.  Responses (``build_response``) carry ``id``, ``turnNumber``, ``isDuringSearch``, ``moveInfos``
(``move``, ``visits``, ``winrate``, ``scoreLead``, ``scoreMean``, ``prior``, ``lcb``, ``order``, ``pv``),
``rootInfo`` and, when asked, ``ownership`` / ``territory`` (X*Y values in [-1, 1], +1 = Black, row by row from
the top-left, A19 first on 19x19) and ``policy`` (X*Y+1 move-model probabilities from the gammas over the
legal moves, pass last, -1 where illegal).  Final responses also carry ``searchConfig``: the search options
in effect.  ``overrideSettings`` takes ``reportAnalysisWinratesAs`` and any ``SearchConfig`` field by name
(``{"playouts": "heavy", "bias_c2": 1.0}``); other keys are answered with a warning and ignored.

Differences from KataGo: only square boards 2..19; scoring is always area (Tromp-Taylor); "visits" count
playouts; win rates and score leads are reported for Black (KataGo's ``reportAnalysisWinratesAs = BLACK``,
as KaTrain configures it) unless the server is started with another perspective.
"""

from __future__ import annotations

import dataclasses
import json
import math

from jaxgo.go.config import Rules
from jaxgo.go.coords import BLACK, WHITE, GTP_COLUMNS
from jaxgo.search.config import SearchConfig
from jaxgo.search.tree import rank_actions

SEARCH_FIELDS = frozenset(f.name for f in dataclasses.fields(SearchConfig))  # overrideSettings keys for the search

MAX_LINE_BYTES = 1 << 20  # longer request lines are answered with an error and skipped
MAX_VISITS_LIMIT = 1 << 22  # the tree keeps ~visits / L nodes of [A] float arrays: bound the memory
DEFAULT_MAX_VISITS = 500
PERSPECTIVES = ("BLACK", "WHITE", "SIDETOMOVE")

# KataGo rule-set names -> (ko rule, suicide allowed, note).  Scoring is always area here.
RULE_SETS = {
    "tromp-taylor": ("positional", True), "chinese": ("situational", False),
    "chinese-ogs": ("positional", False), "chinese-kgs": ("positional", False),
    "aga": ("situational", False), "bga": ("situational", False), "new-zealand": ("situational", True),
    "stone-scoring": ("simple", False), "japanese": ("simple", False), "korean": ("simple", False),
}
TERRITORY_RULE_SETS = ("japanese", "korean")
KO_NAMES = {"SIMPLE": "simple", "POSITIONAL": "positional", "SITUATIONAL": "situational"}
KNOWN_FIELDS = {"id", "moves", "initialStones", "initialPlayer", "rules", "komi", "boardXSize", "boardYSize",
                "analyzeTurns", "maxVisits", "includeOwnership", "includePolicy", "includeTerritory",
                "reportDuringSearchEvery", "priority", "analysisPVLen", "action", "whiteHandicapBonus",
                "includeOwnershipStdev", "includeMovesOwnership", "includePVVisits", "overrideSettings",
                "rootPolicyTemperature", "rootFpuReductionMax", "avoidMoves", "allowMoves", "priorities",
                "includeNoResultValue"}


class RequestError(Exception):
    """A request that cannot be served; ``to_json()`` is the error object sent back."""

    def __init__(self, message: str, field: str | None = None, ident=None):
        super().__init__(message)
        self.message, self.field, self.ident = message, field, ident

    def to_json(self) -> dict:
        return error_object(self.message, self.field, self.ident)


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
    include_ownership: bool = False
    include_policy: bool = False
    include_territory: bool = False
    report_every: float | None = None  # seconds between isDuringSearch responses
    priority: int = 0
    pv_len: int = 10
    perspective: str | None = None  # overrideSettings.reportAnalysisWinratesAs (None: the server's)
    search_settings: dict = dataclasses.field(default_factory=dict)  # overrideSettings keys naming SearchConfig fields
    warnings: list = dataclasses.field(default_factory=list)  # [(field, message)]

    @property
    def size(self) -> int:
        return self.rules.size


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
    word = text.strip().upper()
    if word == "PASS":
        if not allow_pass:
            raise RequestError("pass is not a stone", field, ident)
        return size * size
    if len(word) >= 2 and word[0] in GTP_COLUMNS[:size] and word[1:].isdigit() and word[1:].isascii():
        number = int(word[1:])
        if 1 <= number <= size:
            return (size - number) * size + GTP_COLUMNS.index(word[0])
    raise RequestError(f"invalid vertex {text!r} for a {size}x{size} board", field, ident)


def vertex(point: int, size: int) -> str:
    """Point -> GTP vertex ('pass' for size*size)."""
    if point == size * size:
        return "pass"
    row, col = divmod(int(point), size)
    return f"{GTP_COLUMNS[col]}{size - row}"


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


def parse_rules(value, size: int, komi, ident, warnings: list) -> Rules:
    """A KataGo rules value (name or object) -> Rules; komi from the query or the rule set's default 7.5."""
    if isinstance(value, str):
        key = value.strip().lower().replace("_", "-")
        key = {"tromptaylor": "tromp-taylor", "newzealand": "new-zealand", "nz": "new-zealand"}.get(key, key)
        if key not in RULE_SETS:
            raise RequestError(f"unknown rules {value!r} (one of {', '.join(RULE_SETS)})", "rules", ident)
        ko_rule, suicide = RULE_SETS[key]
        if key in TERRITORY_RULE_SETS:
            warnings.append(("rules", "territory scoring is not supported; area scoring is used"))
    elif isinstance(value, dict):
        ko = value.get("ko", "POSITIONAL")
        if not isinstance(ko, str) or ko.upper() not in KO_NAMES:
            raise RequestError(f"unknown ko rule {ko!r} (SIMPLE, POSITIONAL, SITUATIONAL)", "rules", ident)
        suicide = value.get("suicide", False)
        if not isinstance(suicide, bool):
            raise RequestError("rules 'suicide' must be true or false", "rules", ident)
        if str(value.get("scoring", "AREA")).upper() != "AREA":
            warnings.append(("rules", "territory scoring is not supported; area scoring is used"))
        ko_rule = KO_NAMES[ko.upper()]
    else:
        raise RequestError("'rules' must be a rule-set name or an object", "rules", ident)
    return Rules(size=size, komi=float(komi), ko_rule=ko_rule, suicide=suicide)


def _parse_query(obj: dict, ident) -> Query:
    ident = str(ident) if _is_int(ident) else ident
    warnings = [(name, "unknown field ignored") for name in obj if name not in KNOWN_FIELDS]
    x = _number(obj, "boardXSize", ident, low=2, high=19, integer=True)
    y = _number(obj, "boardYSize", ident, low=2, high=19, integer=True)
    if x != y:
        raise RequestError("only square boards are supported", "boardYSize", ident)
    komi = _number(obj, "komi", ident, default=7.5, low=-150, high=150)
    if "rules" not in obj:
        raise RequestError("missing field 'rules'", "rules", ident)
    if "moves" not in obj:
        raise RequestError("missing field 'moves'", "moves", ident)
    rules = parse_rules(obj["rules"], x, komi, ident, warnings)
    stones = _moves(obj, "initialStones", x, ident, allow_pass=False)
    if len({p for _, p in stones}) != len(stones):
        raise RequestError("two initial stones on one point", "initialStones", ident)
    moves = _moves(obj, "moves", x, ident, allow_pass=True)
    player = parse_colour(obj["initialPlayer"], "initialPlayer", ident) if "initialPlayer" in obj else None
    turns = obj.get("analyzeTurns", [len(moves)])
    if not isinstance(turns, list) or not turns or not all(_is_int(t) and 0 <= t <= len(moves) for t in turns):
        raise RequestError(f"'analyzeTurns' must be a non-empty list of integers in [0, {len(moves)}]",
                           "analyzeTurns", ident)
    perspective = None
    override = obj.get("overrideSettings", {})
    if not isinstance(override, dict):
        raise RequestError("'overrideSettings' must be an object", "overrideSettings", ident)
    search_settings = {}
    for key, value in override.items():
        if key == "reportAnalysisWinratesAs":
            if not isinstance(value, str) or value.upper() not in PERSPECTIVES:
                raise RequestError(f"reportAnalysisWinratesAs must be one of {PERSPECTIVES}", "overrideSettings",
                                   ident)
            perspective = value.upper()
        elif key in SEARCH_FIELDS:
            search_settings[key] = value
        else:
            warnings.append(("overrideSettings", f"setting {key!r} ignored"))
    try:
        SearchConfig().with_overrides(search_settings)  # checked here, applied to the server's own defaults later
    except ValueError as exc:
        raise RequestError(f"overrideSettings: {exc}", "overrideSettings", ident) from None
    report = obj.get("reportDuringSearchEvery")
    if report is not None:
        report = float(_number(obj, "reportDuringSearchEvery", ident, low=0.001, high=1e6))
    return Query(
        id=ident, rules=rules, initial_stones=stones, initial_player=player, moves=moves,
        analyze_turns=sorted(set(turns)),
        max_visits=int(_number(obj, "maxVisits", ident, default=DEFAULT_MAX_VISITS, low=1, high=MAX_VISITS_LIMIT,
                               integer=True)),
        include_ownership=_bool(obj, "includeOwnership", ident), include_policy=_bool(obj, "includePolicy", ident),
        include_territory=_bool(obj, "includeTerritory", ident), report_every=report,
        priority=int(_number(obj, "priority", ident, default=0, low=-(2 ** 31), high=2 ** 31, integer=True)),
        pv_len=int(_number(obj, "analysisPVLen", ident, default=10, low=1, high=100, integer=True)),
        perspective=perspective, search_settings=search_settings, warnings=warnings)


# -- responses ----------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Snapshot:
    """What a search knows about one position, all from the point of view of ``to_play`` unless said.

    Shapes for P = size * size points and A = P + 1 actions (pass last).
    """

    size: int
    to_play: int  # colour to move at the root
    visits: "object"  # float [A] playouts through each root move
    values: "object"  # float [A] win rate of each root move for to_play (NaN when unvisited)
    score: "object"  # float [A] mean final score (Black - White - komi) of each root move (NaN when unvisited)
    prior: "object"  # float [A] root prior (0 where not searched)
    legal: "object"  # bool [A] moves searched at the root
    pvs: dict  # action -> list of actions (the move itself first)
    root_visits: int
    root_winrate: float  # for to_play
    root_score: float  # mean final score, Black - White - komi
    ownership: "object" = None  # float [P] mean final owner, +1 Black
    territory: "object" = None  # float [P] CRF expected territory, +1 Black


def _round(value: float, digits: int = 6) -> float:
    return round(float(value), digits) if math.isfinite(value) else 0.0


def move_infos(snap: Snapshot, perspective: str = "BLACK") -> list[dict]:
    """KataGo ``moveInfos``: searched moves best first by ``tree.rank_actions`` (visits, then win rate: the
    order the Player chooses by), ``order`` 0 first."""
    import numpy as np

    flip_rate = _flip(snap.to_play, perspective)
    score_sign = -1.0 if (perspective == "WHITE" or (perspective == "SIDETOMOVE" and snap.to_play == WHITE)) else 1.0
    visited = (np.asarray(snap.visits) > 0) & np.asarray(snap.legal)
    values = np.nan_to_num(np.asarray(snap.values, float), nan=0.0)
    order = [int(a) for a in rank_actions(snap.visits, snap.values) if visited[a]]
    infos = []
    for rank, action in enumerate(order):
        n = float(snap.visits[action])
        rate = float(values[action])
        rate = 1.0 - rate if flip_rate else rate
        own_rate = float(values[action])
        lcb = own_rate - 1.96 * math.sqrt(max(own_rate * (1 - own_rate), 1e-4) / n)
        lcb = 1.0 - lcb if flip_rate else lcb
        lead = score_sign * float(np.nan_to_num(snap.score[action]))
        infos.append({
            "move": vertex(action, snap.size), "visits": int(round(n)), "winrate": _round(rate),
            "scoreLead": _round(lead, 3), "scoreMean": _round(lead, 3), "prior": _round(snap.prior[action]),
            "lcb": _round(lcb), "utility": _round(2 * rate - 1), "order": rank,
            "pv": [vertex(a, snap.size) for a in snap.pvs.get(int(action), [int(action)])],
        })
    return infos


def _flip(to_play: int, perspective: str) -> bool:
    """Whether a win rate for ``to_play`` must be turned into 1 - rate for the reporting perspective."""
    if perspective == "SIDETOMOVE":
        return False
    wanted = BLACK if perspective == "BLACK" else WHITE
    return to_play != wanted


def build_response(ident, turn: int, snap: Snapshot, during_search: bool, query: Query | None = None,
                   perspective: str = "BLACK", policy=None) -> dict:
    """A KataGo analysis response for one analysed turn."""
    flip = _flip(snap.to_play, perspective)
    rate = 1.0 - snap.root_winrate if flip else snap.root_winrate
    score_sign = -1.0 if (perspective == "WHITE" or (perspective == "SIDETOMOVE" and snap.to_play == WHITE)) else 1.0
    owner_sign = score_sign
    out = {
        "id": ident, "turnNumber": turn, "isDuringSearch": during_search,
        "moveInfos": move_infos(snap, perspective),
        "rootInfo": {"currentPlayer": "B" if snap.to_play == BLACK else "W", "visits": int(snap.root_visits),
                     "winrate": _round(rate), "scoreLead": _round(score_sign * snap.root_score, 3),
                     "scoreSelfplay": _round(score_sign * snap.root_score, 3), "utility": _round(2 * rate - 1)},
    }
    if query is not None and query.include_ownership and snap.ownership is not None:
        out["ownership"] = [_round(owner_sign * v, 4) for v in snap.ownership]
    if query is not None and query.include_territory and snap.territory is not None:
        out["territory"] = [_round(owner_sign * v, 4) for v in snap.territory]
    if query is not None and query.include_policy and policy is not None:
        out["policy"] = [_round(v) for v in policy]
    return out


def dumps(obj: dict) -> str:
    """One compact JSON line (no newline); NaN/inf never appear (rounded to 0 above)."""
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)
