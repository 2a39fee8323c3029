"""Live-analysis arguments and output lines (``jaxgo.gtp.analysis``): every argument form GUIs send, and the
number formats each analysis command promises."""

from __future__ import annotations

import pytest

from jaxgo.gtp.analysis import MIN_INTERVAL, info_line, parse_analyze_args
from jaxgo.gtp.protocol import GtpError

BLACK, WHITE = 1, -1


@pytest.mark.parametrize("args, expected", [
    ([], (BLACK, 1.0, False, None)),                                   # lz-analyze
    (["50"], (BLACK, 0.5, False, None)),                               # Lizzie, Sabaki: lz-analyze <interval>
    (["w"], (WHITE, 1.0, False, None)),
    (["B", "50"], (BLACK, 0.5, False, None)),                          # Sabaki: <colour> <interval>
    (["white", "interval", "20"], (WHITE, 0.2, False, None)),         # KataGo's keyword form
    (["interval", "20"], (BLACK, 0.2, False, None)),
    (["50", "ownership", "true"], (BLACK, 0.5, True, None)),          # Lizzie's kata-analyze with estimates
    (["b", "50", "minmoves", "2", "maxmoves", "5"], (BLACK, 0.5, False, 5)),
    (["b", "50", "avoid", "w", "D4,E5", "10", "allow", "b", "A1", "1"], (BLACK, 0.5, False, None)),
    (["W", "10", "rootInfo", "true", "pvVisits", "true", "ownershipStdev", "false", "movesOwnership", "false",
      "pvEdgeVisits", "true"], (WHITE, 0.1, False, None)),
    (["b", "0"], (BLACK, MIN_INTERVAL, False, None)),
])
def test_every_argument_form(args, expected):
    parsed = parse_analyze_args(args, BLACK)
    assert (parsed["colour"], parsed["interval"], parsed["ownership"], parsed["maxmoves"]) == expected


@pytest.mark.parametrize("args", [["b", "50", "ownership", "maybe"], ["b", "50", "interval"], ["x", "y"],
                                  ["٥٠"], ["b", "-5"], ["b", "99999999999"], ["maxmoves", "٣"],
                                  ["b", "50", "avoid", "b", "D4"]])
def test_bad_arguments_are_gtp_errors(args):
    with pytest.raises(GtpError):
        parse_analyze_args(args, BLACK)


def kata_fields(winrate: float, lcb: float, prior: float, score: float) -> dict:
    info = {"move": "C3", "visits": 12, "winrate": winrate, "lcb": lcb, "prior": prior, "utility": 2 * winrate - 1,
            "scoreMean": score, "scoreLead": score, "order": 0, "pv": ["C3"]}
    words = info_line({"moveInfos": [info]}, "kata").split()
    return dict(zip(words[1:words.index("pv"):2], words[2:words.index("pv"):2]))


@pytest.mark.parametrize("winrate, lcb, prior, score", [(1.0, 1.0, 1.0, 0.0), (0.0, -0.0, 0.0, -3.0),
                                                         (0.5, float("nan"), 1e-9, 123.0)])
def test_kata_analyze_floats_always_carry_a_decimal_point(winrate, lcb, prior, score):
    fields = kata_fields(winrate, lcb, prior, score)
    assert fields["visits"] == "12" and fields["order"] == "0"
    for key in ("winrate", "lcb", "prior", "utility", "utilityLcb", "scoreMean", "scoreLead", "scoreStdev"):
        assert "." in fields[key] and not fields[key].startswith("-0.0"), (key, fields[key])
    assert float(fields["winrate"]) == winrate


def test_kata_analyze_rounds_to_six_decimals():
    assert kata_fields(0.123456789, 0.1, 0.25, 2.5)["winrate"] == "0.123457"


def test_a_report_without_moves_is_an_empty_line_that_the_loop_drops():
    assert info_line({"moveInfos": []}, "lz") == ""
    assert info_line({"moveInfos": []}, "kata", ownership=True) == ""  # no ownership without "ownership true"


def test_kata_analyze_writes_the_moves_score_spread():
    info = {"move": "C3", "visits": 12, "winrate": 0.5, "lcb": 0.4, "prior": 0.1, "utility": 0.0, "scoreMean": 1.5,
            "scoreLead": 1.5, "scoreStdev": 31.25, "order": 0, "pv": ["C3"]}
    words = info_line({"moveInfos": [info]}, "kata").split()
    assert words[words.index("scoreStdev") + 1] == "31.25"
