"""Protocol parsing/validation and the GTP analysis line formats (no device work)."""

import json
import random

import numpy as np
import pytest

from jaxgo.gtp.analysis import info_line, parse_analyze_args
from jaxgo.server import protocol, responses
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
    return responses.Snapshot(size=3, to_play=to_play, visits=visits, values=values, score=score,
                             prior=np.full(10, 0.1), legal=np.ones(10, bool), pvs={4: [4, 0], 0: [0], 9: [9]},
                             root_visits=42, root_winrate=0.6, root_score=2.0,
                             ownership=np.linspace(-1, 1, 9))


def test_response_orders_moves_and_converts_perspective():
    query = protocol.parse_request({"id": "r", "moves": [], "rules": "chinese", "boardXSize": 3, "boardYSize": 3,
                                    "includeOwnership": True})
    black = responses.build_response("r", 0, snapshot(to_play=-1), False, query, "BLACK")
    assert [m["move"] for m in black["moveInfos"]] == ["B2", "A3", "pass"]
    assert [m["order"] for m in black["moveInfos"]] == [0, 1, 2]
    assert black["moveInfos"][0]["winrate"] == pytest.approx(0.3)  # White to move had 0.7
    assert black["moveInfos"][0]["pv"] == ["B2", "A3"]
    assert black["rootInfo"]["winrate"] == pytest.approx(0.4) and black["rootInfo"]["currentPlayer"] == "W"
    assert black["ownership"][0] == -1.0 and len(black["ownership"]) == 9
    side = responses.build_response("r", 0, snapshot(to_play=-1), True, query, "SIDETOMOVE")
    assert side["moveInfos"][0]["winrate"] == pytest.approx(0.7) and side["isDuringSearch"]
    assert side["ownership"][0] == 1.0  # White's point of view
    json.loads(responses.dumps(black))


def test_lz_and_kata_info_lines_follow_the_gui_formats():
    query = protocol.parse_request({"id": "r", "moves": [], "rules": "chinese", "boardXSize": 3, "boardYSize": 3,
                                    "includeOwnership": True})
    response = responses.build_response("r", 0, snapshot(), True, query, "SIDETOMOVE")
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


# -- KataGo's fields as KaTrain sends them ------------------------------------------------------------------------
def katrain_query(**extra):
    """A query as KaTrain's KataGoEngine.request_analysis builds it (katrain/core/engine.py, version 1.20)."""
    query = {"id": "QUERY:1", "rules": "japanese", "priority": 0, "analyzeTurns": [2], "maxVisits": 10_000_000,
             "komi": 6.5, "boardXSize": 19, "boardYSize": 19, "includeOwnership": True,
             "includeMovesOwnership": True, "includePolicy": True, "initialStones": [], "initialPlayer": "B",
             "moves": [["B", "Q16"], ["W", "D4"]], "reportDuringSearchEvery": 0.25,
             "overrideSettings": {"reportAnalysisWinratesAs": "BLACK", "wideRootNoise": 0.04, "maxTime": 8.0}}
    query.update(extra)
    return query


def test_katrain_queries_parse_with_a_warning_for_each_ignored_setting():
    q = protocol.parse_request(katrain_query())
    assert q.max_visits == 10_000_000 and q.max_time == 8.0 and q.include_moves_ownership and q.include_policy
    assert q.report_every == 0.25 and q.perspective == "BLACK"
    fields = [(field, text.split(":")[0]) for field, text in q.warnings]
    assert ("rules", "japanese rules") in fields  # scored by area, said in the warning and the final response
    assert any(f == "overrideSettings" and "wideRootNoise" in t for f, t in q.warnings)
    q = protocol.parse_request(katrain_query(overrideSettings={"humanSLProfile": "rank_1d", "antiMirror": True}))
    texts = [t for f, t in q.warnings if f == "overrideSettings"]
    assert any("humanSLProfile" in t and "no human" in t for t in texts) and any("antiMirror" in t for t in texts)
    for name in ("rootPolicyTemperature", "rootFpuReductionMax", "includeNoResultValue"):
        assert any(f == name for f, _ in protocol.parse_request(base(**{name: 1})).warnings)
    assert not protocol.parse_request(base(whiteHandicapBonus="0")).warnings  # what this engine does anyway
    assert protocol.parse_request(base(whiteHandicapBonus="N")).warnings[0][0] == "whiteHandicapBonus"
    assert protocol.parse_request(base(rules="new zealand")).rules.suicide  # KaTrain's spelling


def test_visits_time_moves_and_turns_limits():
    assert protocol.parse_request(base(maxVisits=protocol.MAX_VISITS_LIMIT)).max_visits == protocol.MAX_VISITS_LIMIT
    with pytest.raises(RequestError, match="maxVisits"):
        protocol.parse_request(base(maxVisits=protocol.MAX_VISITS_LIMIT + 1))
    assert protocol.parse_request(base(maxTime=2.5)).max_time == 2.5
    for bad in ({"maxTime": -1}, {"overrideSettings": {"maxTime": "soon"}}):
        with pytest.raises(RequestError):
            protocol.parse_request(base(**bad))
    passes = [["B" if k % 2 == 0 else "W", "pass"] for k in range(protocol.MAX_QUERY_MOVES + 1)]
    with pytest.raises(RequestError) as info:
        protocol.parse_request(base(moves=passes))
    assert info.value.to_json() == {"error": "'moves' has 1501 moves; at most 1500 per query", "field": "moves",
                                    "id": "q"}
    q = protocol.parse_request(base(moves=passes[:-1], analyzeTurns=list(range(1501)), boardXSize=19,
                                    boardYSize=19))
    assert len(q.analyze_turns) == protocol.MAX_ANALYZE_TURNS


def test_avoid_allow_and_priorities_are_parsed_and_checked():
    q = protocol.parse_request(base(avoidMoves=[{"player": "W", "moves": ["A9", "pass"], "untilDepth": 2}],
                                    allowMoves=[{"player": "B", "moves": ["E5"], "untilDepth": 1}],
                                    analyzeTurns=[0, 2], priorities=[3, -1]))
    avoid, allow = q.restrictions
    assert (avoid.colour, avoid.points, avoid.until_depth, avoid.allow) == (-1, frozenset({0, 81}), 2, False)
    assert allow.allow and allow.points == frozenset({40, 81})  # pass stays allowed
    assert q.turn_priority(0) == 3 and q.turn_priority(2) == -1
    for bad in ({"avoidMoves": [{"player": "B", "moves": ["E5"]}]},
                {"avoidMoves": [{"player": "B", "moves": ["Z1"], "untilDepth": 1}]},
                {"avoidMoves": [{"player": "B", "moves": ["E5"], "untilDepth": 0}]},
                {"allowMoves": [{"player": "B", "moves": ["E5"], "untilDepth": 1}] * 2},
                {"priorities": [1, 2, 3]}):
        with pytest.raises(RequestError) as info:
            protocol.parse_request(base(**bad))
        assert info.value.field in bad


def test_moves_ownership_stdev_and_pv_visits_in_responses():
    query = protocol.parse_request({"id": "r", "moves": [], "rules": "chinese", "boardXSize": 3, "boardYSize": 3,
                                    "includeMovesOwnership": True, "includeOwnershipStdev": True,
                                    "includePVVisits": True, "includeOwnership": True})
    snap = snapshot(to_play=-1)
    snap.moves_ownership = np.tile(np.linspace(-1, 1, 9), (10, 1))
    snap.ownership_stdev = np.full(9, 0.25)
    snap.pv_visits = {4: [30, 12], 0: [10], 9: [2]}
    out = responses.build_response("r", 0, snap, False, query, "WHITE")
    first = out["moveInfos"][0]
    assert first["pvVisits"] == [30, 12] and first["ownership"][0] == 1.0  # White's point of view
    assert out["ownershipStdev"] == [0.25] * 9 and out["ownership"][0] == 1.0
    json.loads(responses.dumps(out))


def test_parse_request_answers_any_json_object_with_a_request_or_a_request_error():
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st

    leaves = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4)
                          | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=10)
    keys = st.sampled_from(sorted(protocol.KNOWN_FIELDS | set(protocol.IGNORED_FIELDS) | {"terminateId"}))

    @hypothesis.settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @hypothesis.given(obj=st.dictionaries(keys, values, max_size=8), base_fields=st.booleans())
    def check(obj, base_fields):
        obj = {**base(), **obj} if base_fields else obj
        try:
            request = protocol.parse_request(obj)
        except RequestError as exc:
            error = exc.to_json()
            assert isinstance(error["error"], str) and error["error"]
            json.loads(responses.dumps(error))
        else:
            assert isinstance(request, (protocol.Query, protocol.Action))

    check()


# -- issue 47: KataGo's rule names and objects; which rules were used, said in the response -----------------
@pytest.mark.parametrize("rules, ko, suicide", [
    ("tromp-taylor", "positional", True), ("chinese", "situational", False), ("japanese", "simple", False),
    ("korean", "simple", False), ("aga", "situational", False), ("new-zealand", "situational", True),
    ("AGA-button", "situational", False), ("koPOSITIONALscoreAREAtaxNONEsui1", "positional", True),
    ({"ko": "SITUATIONAL", "scoring": "AREA", "tax": "NONE", "suicide": True, "hasButton": False,
      "whiteHandicapBonus": "0", "friendlyPassOk": True}, "situational", True),
    ({"ko": "SIMPLE", "score": "AREA"}, "simple", True),  # KataGo: an object starts from Tromp-Taylor
    ("chinese_ogs", "positional", False), ("ChineseKGS", "positional", False), ("french", "situational", False),
    ("ing", "positional", True), ("stone scoring", "simple", False),
    ("koSPIGHTscoringAREAsui0komi7.5", "situational", False),
])
def test_katago_rule_names_short_forms_and_objects_are_accepted(rules, ko, suicide):
    q = protocol.parse_request(base(rules=rules))
    assert (q.rules.ko_rule, q.rules.suicide) == (ko, suicide)


@pytest.mark.parametrize("rules", ["japanese", "Korean", "koSIMPLEscoreTERRITORYtaxSEKIsui0", "ancient_territory",
                                   {"ko": "SIMPLE", "scoring": "TERRITORY", "tax": "SEKI"}])
def test_territory_rules_are_answered_with_the_rules_used(rules):
    q = protocol.parse_request(base(rules=rules))
    notes = [text for field, text in q.warnings if field == "rules"]
    assert len(notes) == 1 and "scored by area" in notes[0]
    snap = responses.Snapshot(size=5, to_play=1, visits=np.zeros(26), values=np.full(26, np.nan),
                             score=np.full(26, np.nan), prior=np.zeros(26), legal=np.ones(26, bool), pvs={},
                             root_visits=0, root_winrate=0.5, root_score=0.0)
    final = responses.build_response("q", 0, snap, False, q)
    assert final["rules"]["scoring"] == "AREA" and final["rulesNote"] == notes[0]
    assert "rules" not in responses.build_response("q", 0, snap, True, q)  # reports stay small


@pytest.mark.parametrize("rules", ["go-rules", {"ko": "SUPER"}, {"scoring": "STONES"}, {"suicide": "yes"},
                                   {"komi": 7.5}, 3])
def test_unknown_rules_are_refused_naming_the_field(rules):
    with pytest.raises(RequestError) as info:
        protocol.parse_request(base(rules=rules))
    assert info.value.field == "rules"


def test_rule_parts_not_applied_are_named_in_a_warning():
    q = protocol.parse_request(base(rules={"ko": "SITUATIONAL", "hasButton": True, "whiteHandicapBonus": "N-1"}))
    assert [text for field, text in q.warnings if field == "rules"] == [
        "not applied here: hasButton True, whiteHandicapBonus N-1 (see the response's 'rules')"]
