"""Problem mining: replay, candidate strings, hashes, the GNU Go labels, the PNS cross-check, loading, resuming."""

import gzip
import io
import json
import tarfile
from collections import Counter

import pytest

from jaxgo.go.gtp_client import find_gnugo
from jaxgo.go.hostboard import Board
from jaxgo.go.sgf import load_sgf
from jaxgo.proof.mining import (
    board_from_moves,
    candidate_strings,
    file_stats,
    is_hard,
    load_mined,
    mine,
    mine_game,
    pns_check,
    position_hash,
    problem_position,
    record_moves,
    summarize,
    to_problem,
)

# white B5 (3 liberties) is in a net: black captures it (the tests of problems.py use the same shape)
NET = """
.......
X......
.OX....
X......
.X.....
.......
.......
"""
# the NET stones as moves (black first, then white), on a 7x7 board
NET_MOVES = [["B", "A6"], ["B", "C5"], ["B", "A4"], ["B", "B3"], ["W", "B5"]]
# an SGF with the NET shape in the top-left corner of a 19x19 board, then two moves far away
NET_SGF = b"(;GM[1]FF[4]SZ[19]KM[6.5]AB[ab][cc][ad][be]AW[bc];B[pd];W[dp])"


def _record(moves, query="defend", target="B5", size=7, check="agree", nodes=50, h=None):
    rec = dict(size=size, komi=6.5, moves=moves, target=target, query=query, answer="0", source="t:g:1", libs=3,
               stones=1, pns_nodes=nodes, check=check)
    b, goal, _ = problem_position(rec)
    rec["hash"] = h or position_hash(b, goal, b.to_play)
    return rec


def test_board_from_moves_matches_ascii_and_rejects_illegal():
    b = board_from_moves(7, NET_MOVES)
    assert b.stones == Board.from_ascii(NET).stones
    assert b.to_play == 1   # white moved last
    assert board_from_moves(7, NET_MOVES + [["B", "B5"]]) is None   # occupied


def test_record_moves_lists_setup_stones_then_moves():
    rec = load_sgf(NET_SGF)
    moves = record_moves(rec)
    assert moves[:4] == [["B", "A18"], ["B", "C17"], ["B", "A16"], ["B", "B15"]]
    assert moves[4] == ["W", "B17"] and moves[-2:] == [["B", "Q16"], ["W", "D4"]]


def test_candidate_strings_skip_strings_the_attacker_captures_at_once():
    b = Board.from_ascii(NET, 1)
    assert [rep for rep, _, _ in candidate_strings(b)] == [1 * 7 + 0, 2 * 7 + 1, 2 * 7 + 2, 3 * 7 + 0, 4 * 7 + 1]
    atari = Board.from_ascii("""
.X.....
XO.....
.X.....
.......
.......
.......
.......
""", 1)
    assert 8 not in [rep for rep, _, _ in candidate_strings(atari)]   # white B6 in atari: trivial


def test_position_hash_depends_on_goal_and_side_to_move():
    b = Board.from_ascii(NET, 1)
    goal = 2 * 7 + 1
    assert position_hash(b, goal, 1) != position_hash(b, goal, -1)
    assert position_hash(b, goal, 1) != position_hash(b, 2 * 7 + 2, 1)
    assert position_hash(b, goal, 1) == position_hash(b.copy(), goal, 1)


def test_problem_position_side_to_move_follows_the_query():
    for query, to_play in (("defend", -1), ("attack", 1)):
        b, goal, attacker = problem_position(_record(NET_MOVES, query))
        assert goal == 2 * 7 + 1 and attacker == 1 and b.to_play == to_play
        p = to_problem(_record(NET_MOVES, query))
        assert p["attacker_to_move"] == (query == "attack") and p["to_play"] == to_play


def test_pns_check_agrees_with_a_capture_and_records_a_disagreement():
    b = Board.from_ascii(NET, 1)
    out = pns_check(b, 2 * 7 + 1, "attack", max_nodes=3000, max_seconds=30.0)
    assert out["check"] == "agree" and out["pns_nodes"] > 0 and out["pns_value"] is True and out["pns_move"]
    # moving first, white escapes from the net: a labeller calling the string dead would be contradicted
    b.to_play = -1
    out = pns_check(b, 2 * 7 + 1, "defend", max_nodes=3000, max_seconds=30.0)
    assert out["check"] == "disagree" and out["pns_value"] is False and out["pns_move"]


def test_load_mined_sets_aside_disagreements_and_counts_broken_lines(tmp_path):
    good = _record(NET_MOVES)
    lines = [json.dumps(good), json.dumps(good), "{not json", json.dumps(dict(good, moves=[["B", "Z99"]], hash="z")),
             json.dumps(_record(NET_MOVES, "attack", check="disagree"))]
    path = tmp_path / "p.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("\n".join(lines) + "\n")
    stats = Counter()
    probs = load_mined(str(path), stats=stats)
    assert len(probs) == 1 and probs[0]["name"] == good["hash"]
    assert stats == Counter({"broken": 2, "skipped": 1, "set aside": 1})
    assert len(load_mined(str(path), checks=("agree", "disagree"))) == 2


def test_summarize_and_hard_flag():
    recs = [_record(NET_MOVES, nodes=n, h=str(n)) for n in (10, 20, 30, 20000)]
    recs.append(_record(NET_MOVES, check="unsolved", nodes=12000, h="u"))
    recs.append(_record(NET_MOVES, check="disagree", nodes=5, h="d"))
    recs.append(dict(_record(NET_MOVES, check="unsolved", nodes=5000, h="t"), pns_budget=[12000, 15.0]))
    s = summarize(recs)
    assert s["records"] == 7 and s["usable"] == 6 and s["hard"] == 3 and s["hard_by_nodes"] == 2
    assert s["unsolved_time_bound"] == 1
    assert s["by_check"] == {"agree": 4, "unsolved": 2, "disagree": 1}
    assert s["pns_nodes_solved"]["median"] == 30 and s["pns_nodes_solved"]["max"] == 20000
    assert is_hard(dict(check="agree", pns_nodes=10001)) and not is_hard(dict(check="agree", pns_nodes=10000))


class FakeReader:
    """Answers attack 1 and defend ``defend`` for one vertex, 0 (safe) for every other string."""

    def __init__(self, vertex, defend=(1, "B18")):
        self.vertex, self.defend, self.asked, self.synced = vertex, defend, [], 0

    def new_game(self, size):
        self.synced = 0

    def sync(self, moves):
        self.synced = len(moves)

    def ask(self, cmd, vertex):
        self.asked.append((cmd, vertex))
        if vertex == self.vertex:
            return (1, "C18") if cmd == "attack" else self.defend
        return 0, None


def test_mine_game_with_a_fake_labeller():
    record = load_sgf(NET_SGF)
    reader = FakeReader("B17")
    hashes, stats = set(), Counter()
    recs = mine_game(reader, record, "a.tar.gz:g.sgf", hashes, stats, every=1, start=1, max_nodes=3000)
    assert len(recs) == 1    # the same string is not mined again at move 2
    r = recs[0]
    assert (r["query"], r["answer"], r["target"], r["check"], r["libs"]) == ("attack", "1 C18", "B17", "agree", 3)
    assert r["source"] == "a.tar.gz:g.sgf:1" and len(r["moves"]) == 6 and r["hash"] in hashes
    assert stats["check agree"] == 1 and stats["not a problem: safe"] >= 4
    assert reader.synced == 7 and ("defend", "B17") in reader.asked
    # a second game with the same position adds nothing (dedupe by position hash)
    assert mine_game(FakeReader("B17"), record, "b", hashes, Counter(), every=1, start=1) == []
    # a labeller calling the string dead is contradicted by the PNS (white, moving first, escapes)
    dead = mine_game(FakeReader("B17", (0, None)), record, "c", set(), Counter(), every=1, start=1, max_nodes=3000)
    assert [(r["query"], r["answer"], r["check"]) for r in dead] == [("defend", "0", "disagree")]


def _archive(path, games):
    with tarfile.open(path, "w:gz") as tar:
        for name, data in games:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


@pytest.mark.gnugo
@pytest.mark.skipif(find_gnugo() is None, reason="gnugo not installed (scripts/setup.sh installs it)")
def test_mine_with_gnugo_is_resumable_and_counts_broken_records(tmp_path):
    arch = tmp_path / "KGS-2001-19-3-.tar.gz"
    other = NET_SGF.replace(b"W[dp]", b"W[dq]")
    _archive(arch, [("g1.sgf", NET_SGF), ("bad.sgf", b"(;GM[1]SZ[19];B[zz"), ("g2.sgf", other)])
    out = str(tmp_path / "mined.jsonl")
    first = mine("train", 1, out, every=1, start=1, max_nodes=3000, archives=[arch], progress=False)
    assert first["run"]["games"] == 1 and first["run"]["new_problems"] >= 1
    rec = json.loads(open(out).readline())
    assert rec["target"] == "B17" and rec["query"] in ("attack", "defend") and rec["check"] == "agree"
    second = mine("train", 5, out, every=1, start=1, max_nodes=3000, archives=[arch], progress=False)
    assert second["run"]["games"] == 1   # g1 skipped, the broken record counted, g2 mined
    assert sum(n for k, n in second["run"]["stats"].items() if k.startswith("broken record")) == 1
    assert second["run"]["new_problems"] == 0   # g2 repeats g1's corner position: deduplicated
    assert open(out + ".games").read().split() == ["KGS-2001-19-3-.tar.gz:g1.sgf", "KGS-2001-19-3-.tar.gz:g2.sgf"]


def test_cli_mine_stats_prints_the_file_summary(tmp_path, capsys):
    from jaxgo.proof.cli import main

    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(_record(NET_MOVES, nodes=12000, check="unsolved")) + "\n{broken\n")
    assert main(["mine", "--stats", str(path)]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["records"] == 1 and s["hard"] == 1 and s["hard_by_nodes"] == 1 and s["unsolved_time_bound"] == 0
    assert file_stats(str(path))["records"] == 1
    with pytest.raises(SystemExit):
        main(["mine", "--split", "train"])   # --games and --out missing
