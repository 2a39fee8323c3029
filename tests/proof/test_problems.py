"""Problem sets: canonical keys, the train/test split, tesuji records and GNU Go test parsing."""

import json
import os

import pytest

from jaxgo.go.hostboard import Board
from jaxgo.proof.problems import canonical_key, dedupe, regression_problems, split_of, tesuji_problems
from jaxgo.proof.regression import parse_tst
from jaxgo.util.paths import data_dir

REG = str(data_dir() / "problems" / "gnugo-regression" / "regression")

# white B6 (goal) is in a net: black captures it by C5 (it cannot be laddered at once: two liberties)
NET = """
.......
X......
.OX....
X......
.X.....
.......
.......
"""


def _problem(text, goal, name="p"):
    b = Board.from_ascii(text, 1)
    return dict(name=name, size=b.size, stones=list(b.stones), to_play=1, goal=goal)


def _rotate(p):
    n = p["size"]
    stones = [0] * (n * n)
    for q, v in enumerate(p["stones"]):
        r, c = divmod(q, n)
        stones[c * n + (n - 1 - r)] = v
    r, c = divmod(p["goal"], n)
    return dict(p, stones=stones, goal=c * n + (n - 1 - r))


def test_canonical_key_is_symmetry_invariant_and_goal_sensitive():
    p = _problem(NET, 2 * 7 + 1)
    q = _rotate(p)
    assert q["stones"] != p["stones"]
    assert canonical_key(q) == canonical_key(p) == canonical_key(_rotate(_rotate(q)))
    mirrored = dict(p, stones=[p["stones"][(q // 7) * 7 + 6 - q % 7] for q in range(49)], goal=2 * 7 + 5)
    assert canonical_key(mirrored) == canonical_key(p)
    other_goal = dict(p, goal=2 * 7 + 2)             # the black stone C5 as the goal: another problem
    assert canonical_key(other_goal) != canonical_key(p)
    swapped = dict(p, stones=[-v for v in p["stones"]])
    assert canonical_key(swapped) != canonical_key(p)


def test_split_is_deterministic_shared_by_duplicates_and_dedupe_drops_them():
    p = _problem(NET, 2 * 7 + 1, "a")
    q = dict(_rotate(p), name="b")
    assert split_of(p) == split_of(q) in ("train", "test")
    assert [x["name"] for x in dedupe([p, q, _problem(NET, 2 * 7 + 2, "c")])] == ["a", "c"]


# white G7-G6 (three liberties, no ladder) is captured by black F6; black F7 or G5 first lets it escape
CORNER = """
......O
......O
...O...
...X..X
.......
X......
.X.....
"""


def _record(move):
    b = Board.from_ascii(CORNER, 1)
    sgf = lambda q: chr(97 + q % 7) + chr(97 + q // 7)   # noqa: E731 - column letter, then row letter
    return json.dumps({"collection": "1. Fighting And Capturing", "file": f"P{move}.json", "SZ": "7",
                       "AB": [sgf(q) for q, v in enumerate(b.stones) if v == 1],
                       "AW": [sgf(q) for q, v in enumerate(b.stones) if v == -1],
                       "SOL": [["B", sgf(move), "Correct.", ""]]})


def test_tesuji_problems_verify_the_goal_and_the_book_move(tmp_path):
    path = tmp_path / "problems.jsonl"
    good, bad = 1 * 7 + 5, 0 * 7 + 5                  # F6 captures, F7 does not
    path.write_text("\n".join([_record(good), _record(bad), "{broken json", ""]))
    probs = tesuji_problems(path=str(path), verify_nodes=2000)
    # the goal is proved capturable whatever the book says: both records give the G7 problem
    assert [p["goal"] for p in probs] == [6, 6] and probs[0]["source"] == "tsumego:1. Fighting And Capturing"
    assert probs[0]["split"] == probs[1]["split"] and len(dedupe(probs)) == 1
    # with the book move checked, the record whose first move lets the string escape is dropped
    checked = tesuji_problems(path=str(path), verify_nodes=2000, check_solution=True)
    assert [p["solution"] for p in checked] == [good]


def test_parse_tst_keeps_played_moves_and_survives_latin1(tmp_path):
    tst = tmp_path / "x.tst"
    tst.write_bytes(b"# caf\xe9 comment\nloadsgf games/a.sgf 10\nplay black C3\nwhite D4\n"
                    b"trymove black E5\n1 attack D4\n#? [1 E4]\npopgo\n2 defend D4\n#? [0]*\n")
    cases = parse_tst(str(tst))
    assert [c["id"] for c in cases] == [1, 2]
    assert cases[0]["tries"] == [(1, "C3"), (-1, "D4"), (1, "E5")]
    assert cases[1]["tries"] == [(1, "C3"), (-1, "D4")] and cases[1]["expected"] == "0*"


@pytest.mark.skipif(not os.path.isdir(REG), reason=f"GNU Go regression data not found at {REG} (set JAXGO_DATA)")
def test_regression_problems_with_defend_zero_tests():
    base = regression_problems(("capture.tst",))
    more = regression_problems(("capture.tst",), defend_zero=True)
    assert {p["source"] for p in base} == {"gnugo:attack"}
    defend0 = [p for p in more if p["source"] == "gnugo:defend0"]
    assert len(defend0) == 6 and len(more) == len(base) + 6
    for p in defend0:   # posed with the attacker to move
        assert p["stones"][p["goal"]] == -p["to_play"]
