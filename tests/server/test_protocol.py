"""Protocol parsing/validation and the GTP analysis line formats (no device work)."""

import json
import random

import numpy as np
import pytest

from jaxgo.server import protocol
from jaxgo.gtp.analysis import info_line, parse_analyze_args
from jaxgo.server.protocol import RequestError


def base(**extra):
    query = {"id": "q", "moves": [["B", "E5"], ["W", "pass"]], "rules": "chinese", "komi": 6.5,
             "boardXSize": 9, "boardYSize": 9}
    query.update(extra)
    return query


def test_valid_query_is_parsed_into_points():
    q = protocol.parse_request(base(initialStones=[["W", "A9"]], analyzeTurns=[2, 0, 2], maxVisits=50,
                                    includeOwnership=True, priority=3))
    assert q.size == 9 and q.rules.komi == 6.5 and q.rules.ko_rule == "situational"
    assert q.moves == [(1, 4 * 9 + 4), (-1, 81)]
    assert q.initial_stones == [(-1, 0)]
    assert q.analyze_turns == [0, 2] and q.max_visits == 50 and q.priority == 3 and q.include_ownership


@pytest.mark.parametrize("change, field", [
    ({"boardXSize": 25, "boardYSize": 25}, "boardXSize"),
    ({"boardYSize": 7}, "boardYSize"),
    ({"moves": [["B", "Z9"]]}, "moves"),
    ({"moves": [["X", "E5"]]}, "moves"),
    ({"moves": "E5"}, "moves"),
    ({"rules": "martian"}, "rules"),
    ({"komi": "seven"}, "komi"),
    ({"maxVisits": 0}, "maxVisits"),
    ({"maxVisits": 1.5}, "maxVisits"),
    ({"analyzeTurns": [5]}, "analyzeTurns"),
    ({"includeOwnership": "yes"}, "includeOwnership"),
    ({"initialStones": [["B", "pass"]]}, "initialStones"),
    ({"initialPlayer": "red"}, "initialPlayer"),
    ({"reportDuringSearchEvery": -1}, "reportDuringSearchEvery"),
    ({"overrideSettings": {"reportAnalysisWinratesAs": "GREEN"}}, "overrideSettings"),
])
def test_invalid_fields_are_named_in_the_error(change, field):
    with pytest.raises(RequestError) as info:
        protocol.parse_request(base(**change))
    error = info.value.to_json()
    assert error["field"] == field and error["id"] == "q" and error["error"]


def test_missing_required_fields_and_actions():
    for name in ("moves", "rules", "boardXSize"):
        query = base()
        del query[name]
        with pytest.raises(RequestError, match=name):
            protocol.parse_request(query)
    with pytest.raises(RequestError) as info:
        protocol.parse_request({"moves": []})
    assert info.value.field == "id"
    action = protocol.parse_request({"id": "t", "action": "terminate", "terminateId": "q", "turnNumbers": [1]})
    assert action.terminate_id == "q" and action.turn_numbers == [1]
    with pytest.raises(RequestError, match="unknown action"):
        protocol.parse_request({"id": "t", "action": "explode"})


def test_decode_line_rejects_garbage_without_raising_anything_else():
    rng = random.Random(0)
    for _ in range(300):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80)))
        try:
            obj = protocol.decode_line(data)
        except RequestError as exc:
            assert exc.to_json()["error"]
        else:
            assert isinstance(obj, dict)
    with pytest.raises(RequestError, match="longer"):
        protocol.decode_line(b"{" + b" " * protocol.MAX_LINE_BYTES + b"}")
    with pytest.raises(RequestError, match="object"):
        protocol.decode_line("[1, 2]")


def test_territory_rules_give_a_warning_and_rule_objects_work():
    q = protocol.parse_request(base(rules="japanese"))
    assert q.rules.ko_rule == "simple" and q.warnings and q.warnings[0][0] == "rules"
    q = protocol.parse_request(base(rules={"ko": "SIMPLE", "suicide": True, "scoring": "AREA"}))
    assert q.rules.suicide and q.rules.ko_rule == "simple" and not q.warnings


def snapshot(to_play=1):
    # 3x3 board; A = 10 actions.  Point 4 is the centre (B2), 9 is pass.
    visits = np.zeros(10)
    visits[[4, 0, 9]] = [30, 10, 2]
    values = np.full(10, np.nan)
    values[[4, 0, 9]] = [0.7, 0.4, 0.1]
    score = np.full(10, np.nan)
    score[[4, 0, 9]] = [3.0, -1.0, -9.0]
    return protocol.Snapshot(size=3, to_play=to_play, visits=visits, values=values, score=score,
                             prior=np.full(10, 0.1), legal=np.ones(10, bool), pvs={4: [4, 0], 0: [0], 9: [9]},
                             root_visits=42, root_winrate=0.6, root_score=2.0,
                             ownership=np.linspace(-1, 1, 9))


def test_response_orders_moves_and_converts_perspective():
    query = protocol.parse_request({"id": "r", "moves": [], "rules": "chinese", "boardXSize": 3, "boardYSize": 3,
                                    "includeOwnership": True})
    black = protocol.build_response("r", 0, snapshot(to_play=-1), False, query, "BLACK")
    assert [m["move"] for m in black["moveInfos"]] == ["B2", "A3", "pass"]
    assert [m["order"] for m in black["moveInfos"]] == [0, 1, 2]
    assert black["moveInfos"][0]["winrate"] == pytest.approx(0.3)  # White to move had 0.7
    assert black["moveInfos"][0]["pv"] == ["B2", "A3"]
    assert black["rootInfo"]["winrate"] == pytest.approx(0.4) and black["rootInfo"]["currentPlayer"] == "W"
    assert black["ownership"][0] == -1.0 and len(black["ownership"]) == 9
    side = protocol.build_response("r", 0, snapshot(to_play=-1), True, query, "SIDETOMOVE")
    assert side["moveInfos"][0]["winrate"] == pytest.approx(0.7) and side["isDuringSearch"]
    assert side["ownership"][0] == 1.0  # White's point of view
    json.loads(protocol.dumps(black))


def test_lz_and_kata_info_lines_follow_the_gui_formats():
    query = protocol.parse_request({"id": "r", "moves": [], "rules": "chinese", "boardXSize": 3, "boardYSize": 3,
                                    "includeOwnership": True})
    response = protocol.build_response("r", 0, snapshot(), True, query, "SIDETOMOVE")
    lz = info_line(response, "lz")
    assert lz.startswith("info move B2 visits 30 winrate 7000 prior 1000 lcb ")
    assert " order 0 pv B2 A3 info move A3 visits 10 winrate 4000" in lz
    words = lz.split()
    assert words.count("info") == 3
    kata = info_line(response, "kata", ownership=True)
    head = kata.split(" info ")[0].split()
    fields = dict(zip(head[1::2], head[2::2]))  # "info" then key value pairs up to pv
    assert fields["move"] == "B2" and fields["visits"] == "30" and float(fields["winrate"]) == pytest.approx(0.7)
    assert float(fields["scoreLead"]) == pytest.approx(3.0) and float(fields["prior"]) == pytest.approx(0.1)
    owner = kata.split(" ownership ")[1].split()
    assert len(owner) == 9 and float(owner[0]) == pytest.approx(-1.0)
    assert info_line(response, "lz", maxmoves=1).count("info") == 1


def test_analyze_arguments():
    assert parse_analyze_args(["50"], 1) == {"colour": 1, "interval": 0.5, "ownership": False, "maxmoves": None}
    parsed = parse_analyze_args(["W", "interval", "20", "ownership", "true", "maxmoves", "3",
                                 "avoid", "b", "D4", "1"], 1)
    assert parsed == {"colour": -1, "interval": 0.2, "ownership": True, "maxmoves": 3}
    from jaxgo.gtp.protocol import GtpError

    for bad in (["interval"], ["ownership", "maybe"], ["frobnicate", "1"], ["avoid", "b"]):
        with pytest.raises(GtpError):
            parse_analyze_args(bad, 1)
