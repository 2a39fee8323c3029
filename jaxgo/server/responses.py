"""Analysis responses in KataGo's format, from what a search knows (``Snapshot``).

A response carries ``id``, ``turnNumber``, ``isDuringSearch``, ``moveInfos`` (``move``, ``visits``, ``winrate``,
``scoreLead``, ``scoreMean``, ``scoreStdev`` (the standard deviation of the playouts' final scores: KataGo's
predicted spread of the final score), ``prior``, ``lcb``, ``order``, ``pv``), ``rootInfo`` and, when asked,
``ownership`` / ``territory`` and ``policy``; win rates and scores are given for the perspective asked (``BLACK``,
``WHITE`` or ``SIDETOMOVE``).  ``dumps`` writes one compact JSON line.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math

import numpy as np

from jaxgo.go.coords import BLACK, WHITE, colour_letter, point_to_gtp
from jaxgo.search.tree import rank_actions
from jaxgo.server import compiled_snapshot
from jaxgo.server.protocol import Query
from jaxgo.server.rulesets import effective_rules


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
    ownership_stdev: "object" = None  # float [P] standard deviation of the final owner over the playouts
    moves_ownership: "object" = None  # float [A, P] mean final owner of the playouts through each root move
    pv_visits: dict | None = None  # action -> visits of each move of its principal variation
    score_stdev: "object" = None  # float [A] standard deviation of each root move's final scores (NaN: unvisited)
    ranking: "object" = None  # int [A] ``tree.rank_actions(visits, values)`` when the snapshot has it already


NO_COLUMN = np.zeros(0)  # ``move_columns``' score deviations when a snapshot has none


@functools.lru_cache(maxsize=32)
def gtp_names(size: int) -> tuple:
    """The GTP vertex of every action of a ``size`` board (``point_to_gtp``; pass last), made once per size."""
    return tuple(point_to_gtp(action, size) for action in range(size * size + 1))


def _round(value: float, digits: int = 6) -> float:
    return round(float(value), digits) if math.isfinite(value) else 0.0


def move_infos(snap: Snapshot, perspective: str = "BLACK") -> list[dict]:
    """KataGo ``moveInfos``: searched moves best first by ``tree.rank_actions`` (visits, then win rate: the
    order the Player chooses by), ``order`` 0 first.  Every field of every move is computed as one array."""
    import numpy as np

    flip_rate = _flip(snap.to_play, perspective)
    score_sign = -1.0 if (perspective == "WHITE" or (perspective == "SIDETOMOVE" and snap.to_play == WHITE)) else 1.0
    ranked = snap.ranking if snap.ranking is not None else rank_actions(snap.visits, snap.values)
    owner_sign = -1.0 if _owner_flip(snap.to_play, perspective) else 1.0
    names = gtp_names(snap.size)
    order, counts, rows = compiled_snapshot.move_columns(
        np.asarray(snap.visits, np.float64), np.asarray(snap.legal, np.bool_), np.asarray(ranked, np.int64),
        np.asarray(snap.values, np.float64), np.asarray(snap.prior, np.float64),
        np.asarray(snap.score, np.float64),
        NO_COLUMN if snap.score_stdev is None else np.asarray(snap.score_stdev, np.float64), flip_rate, score_sign)
    rate_r, prior_r, lcb_r, utility_r, lead, stdev_r = rows.tolist()
    actions = order.tolist()
    counts = counts.tolist()
    pvs = [list(map(names.__getitem__, snap.pvs.get(a, (a,)))) for a in actions]
    infos = [{"move": names[a], "visits": v, "winrate": w, "scoreLead": s, "scoreMean": s, "prior": p, "lcb": b,
              "utility": u, "order": i, "pv": pv}  # (a dict display: faster than dict(zip(...)) per move)
             for i, (a, v, w, s, p, b, u, pv) in enumerate(zip(actions, counts, rate_r, lead, prior_r, lcb_r,
                                                                utility_r, pvs))]
    extra = {}  # the optional fields, after the others in this order
    if snap.score_stdev is not None:
        extra["scoreStdev"] = stdev_r
    if snap.pv_visits is not None:
        extra["pvVisits"] = [list(map(int, snap.pv_visits.get(a, [v]))) for a, v in zip(actions, counts)]
    if snap.moves_ownership is not None:
        owners = np.asarray(snap.moves_ownership, np.float64)[order]
        extra["ownership"] = np.round(owner_sign * np.nan_to_num(owners, nan=0.0, posinf=0.0, neginf=0.0),
                                      4).tolist()
    for key, column in extra.items():
        for info, value in zip(infos, column):
            info[key] = value
    return infos


def _board_values(values, sign: float = 1.0) -> list:
    """float [P] -> a JSON list rounded to 4 digits, times ``sign`` (NaN/inf as 0)."""
    import numpy as np

    array = np.nan_to_num(np.asarray(values, np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    return np.round(sign * array, 4).tolist()


def _owner_flip(to_play: int, perspective: str) -> bool:
    """Whether ownership (and score) must change sign: Black's point of view -> the reporting perspective."""
    return perspective == "WHITE" or (perspective == "SIDETOMOVE" and to_play == WHITE)


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
        "rootInfo": {"currentPlayer": colour_letter(snap.to_play), "visits": int(snap.root_visits),
                     "winrate": _round(rate), "scoreLead": _round(score_sign * snap.root_score, 3),
                     "scoreSelfplay": _round(score_sign * snap.root_score, 3), "utility": _round(2 * rate - 1)},
    }
    if query is not None and query.include_ownership and snap.ownership is not None:
        out["ownership"] = _board_values(snap.ownership, owner_sign)
    if query is not None and query.include_ownership_stdev and snap.ownership_stdev is not None:
        out["ownershipStdev"] = _board_values(snap.ownership_stdev)
    if query is not None and query.include_territory and snap.territory is not None:
        out["territory"] = _board_values(snap.territory, owner_sign)
    if query is not None and query.include_policy and policy is not None:
        out["policy"] = [_round(v) for v in policy]
    if query is not None and not during_search:
        out["rules"] = effective_rules(query.rules)  # what was scored (KataGo's rules object)
        notes = [text for field, text in query.warnings if field == "rules"]
        if notes:
            out["rulesNote"] = "; ".join(notes)
    return out


def dumps(obj: dict) -> str:
    """One compact JSON line (no newline); NaN/inf never appear (rounded to 0 above)."""
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)
