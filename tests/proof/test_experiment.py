"""``jaxgo solve learn``: loading mined sets, the summary arithmetic, and a small end-to-end run."""

import json

import pytest

from jaxgo.proof.experiment import load_sets, main, make_model, sample, select_variant, speedup_summary
from jaxgo.proof.mining import position_hash, problem_position

# a ladder on a 9x9 board: white D6 (two liberties) can be captured by black moving first
LADDER_MOVES = [["B", "D7"], ["B", "C6"], ["B", "E5"], ["W", "D6"]]
# white B5 in a net on a 7x7 board (tests/proof/test_mining.py)
NET_MOVES = [["B", "A6"], ["B", "C5"], ["B", "A4"], ["B", "B3"], ["W", "B5"]]


def _record(moves, size, target, **kw):
    rec = dict(size=size, komi=6.5, moves=moves, target=target, query="attack", answer="1 X", source="t:g:1",
               libs=2, stones=1, pns_nodes=10, check="agree")
    rec.update(kw)
    b, goal, _ = problem_position(rec)
    rec["hash"] = position_hash(b, goal, b.to_play)
    return rec


def _write(path, records):
    with open(path, "w") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")
    return str(path)


def _row(solved, seconds, nodes, hard=False):
    return dict(solved=solved, seconds=seconds, nodes=nodes, hard=hard)


def test_speedup_summary_counts_and_hard_subset():
    base = [_row(True, 1.0, 100), _row(True, 8.0, 9000, True), _row(False, 15.0, 12000, True), _row(True, 2.0, 50)]
    other = [_row(True, 0.5, 50), _row(True, 1.0, 1000, True), _row(True, 3.0, 3000, True), _row(False, 15.0, 12000)]
    s = speedup_summary(base, other)
    counts = (s["test_problems"], s["pns_solved"], s["pp_solved"], s["newly_failed"], s["newly_solved"])
    assert counts == (4, 3, 3, 1, 1)
    assert s["mean_speedup"] == pytest.approx((2.0 + 8.0) / 2) and s["median_node_ratio"] == pytest.approx(5.5)
    assert s["hard_problems"] == 2 and s["hard_pns_solved"] == 1 and s["hard_pp_solved"] == 2
    assert s["hard_mean_speedup"] == pytest.approx(8.0)


def test_sample_is_seeded_and_hard_first():
    probs = [dict(name=str(i), check="agree", pns_nodes=20000 if i % 5 == 0 else 5) for i in range(20)]
    assert sample(probs, 5, 1) == sample(probs, 5, 1)
    assert all(p["pns_nodes"] == 20000 for p in sample(probs, 4, 1, hard_first=True))
    assert len(sample(probs, 0, 1)) == 20
    mixed = sample(probs, 10, 1, hard=2)
    assert sum(p["pns_nodes"] == 20000 for p in mixed) == 2 and len(mixed) == 10


def test_make_model_names():
    assert make_model("none") == (None, 0)
    assert make_model("gauss_tuned", sigma0=0.5)[0].sigma0 == 0.5 and make_model("gauss_tuned")[1] == 1
    assert make_model("beta1000")[0].alpha == 1000
    with pytest.raises(ValueError):
        make_model("oracle")


def test_load_sets_drops_test_problems_seen_in_training(tmp_path):
    ladder, net = _record(LADDER_MOVES, 9, "D6"), _record(NET_MOVES, 7, "B5")
    train = _write(tmp_path / "train.jsonl", [ladder])
    test = _write(tmp_path / "test.jsonl", [ladder, net, dict(net, hash="x", check="disagree")])
    tr, val, te, info = load_sets(train, test)
    assert [p["name"] for p in te] == [net["hash"]] and len(tr) == 1 and val == []
    assert info["overlap_dropped"] == 1 and info["test_load"] == {"set aside": 1}


def test_learn_end_to_end_writes_rows_figure_and_summary(tmp_path, capsys):
    train = _write(tmp_path / "train.jsonl", [_record(LADDER_MOVES, 9, "D6"), _record(NET_MOVES, 7, "B5")])
    net_defend = _record(NET_MOVES + [["B", "G1"]], 7, "B5")
    test = _write(tmp_path / "test.jsonl", [net_defend, _record(LADDER_MOVES + [["B", "A1"]], 9, "D6")])
    out = tmp_path / "out"
    assert main(["--train", train, "--test", test, "--model", "none,beta,gauss_tuned", "--max-nodes", "300",
                 "--timeout", "10", "--test-max-nodes", "300", "--test-timeout", "10", "--passes", "2",
                 "--out", str(out), "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [s["model"] for s in lines] == ["none", "beta", "gauss_tuned"]
    for s in lines:
        for key in ("test_problems", "pns_solved", "pp_solved", "newly_failed", "newly_solved", "mean_speedup",
                    "median_speedup", "median_node_ratio"):
            assert key in s
        assert s["test_problems"] == 2 and s["pns_solved"] == 2
        assert (out / f"learn_{s['model']}.png").stat().st_size > 1000
    assert lines[1]["train_solved"] == 2 and lines[1]["patterns"] > 0
    rows = [json.loads(x) for x in open(out / "learn_rows.jsonl")]
    assert [r["searcher"] for r in rows] == ["pns"] * 2 + ["pp+none"] * 2 + ["pp+beta"] * 2 + ["pp+gauss_tuned"] * 2


def test_parse_variant_specs_and_errors(capsys):
    from jaxgo.proof.experiment import parse_variant

    assert parse_variant("pp") == dict(solver="pp") and parse_variant("pnsorder") == dict(solver="pns")
    assert parse_variant("T2.5") == dict(solver="pp", temperature=2.5)
    assert parse_variant("fb0.25") == dict(solver="pp", fallback=0.25)
    assert parse_variant("pnsinit0.5") == dict(solver="pns", prior_init=0.5)
    for bad in ("T0", "fb1", "fbx", "pnsinit-1", "mcts", ""):
        with pytest.raises(ValueError):
            parse_variant(bad)
    with pytest.raises(SystemExit) as exc:
        main(["--train", "x", "--test", "y", "--variants", "pp,Tx"])
    assert exc.value.code == 2 and "unknown test variant 'Tx'" in capsys.readouterr().err


def test_answer_ranks_uniform_prior_gives_the_middle_rank(tmp_path):
    from jaxgo.proof.experiment import answer_ranks, rank_summary, time_set
    from jaxgo.proof.mining import load_mined
    from jaxgo.proof.models import BetaModel

    probs = load_mined(_write(tmp_path / "t.jsonl", [_record(LADDER_MOVES + [["B", "A1"]], 9, "D6")]))
    base = time_set(probs, "pns", max_nodes=300, max_seconds=10.0)
    assert base[0]["solved"] and base[0]["move"] is not None
    (rank,) = answer_ranks(probs, base, BetaModel())     # empty table: every candidate gets 0.5
    assert rank["candidates"] > 1 and rank["rank"] == (rank["candidates"] + 1) / 2
    s = rank_summary([rank, None])
    assert s["problems"] == 1 and s["median_rank"] == s["uniform_median_rank"] and s["top1"] == 0.0
    unsolved = dict(base[0], solved=False)
    assert answer_ranks(probs, [unsolved], BetaModel()) == [None]


def test_learn_variants_are_timed_and_labelled(tmp_path, capsys):
    train = _write(tmp_path / "train.jsonl", [_record(LADDER_MOVES, 9, "D6"), _record(NET_MOVES, 7, "B5")])
    test = _write(tmp_path / "test.jsonl", [_record(LADDER_MOVES + [["B", "A1"]], 9, "D6")])
    out = tmp_path / "out"
    assert main(["--train", train, "--test", test, "--model", "beta", "--max-nodes", "300", "--timeout", "10",
                 "--test-max-nodes", "300", "--test-timeout", "10", "--passes", "1", "--out", str(out), "--json",
                 "--variants", "pp,T2,fb0.5,pnsorder,pnsinit0.5"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [s["model"] for s in lines] == ["beta", "beta/T2", "beta/fb0.5", "beta/pnsorder", "beta/pnsinit0.5"]
    assert all(s["pns_solved"] == 1 and s["answer_rank"]["problems"] == 1 for s in lines)
    rows = [json.loads(x) for x in open(out / "learn_rows.jsonl")]
    assert [r["searcher"] for r in rows] == ["pns", "pp+beta", "pp+beta/T2", "pp+beta/fb0.5", "pns+beta/pnsorder",
                                             "pns+beta/pnsinit0.5"]
    assert (out / "learn_beta_pnsinit0.5.png").stat().st_size > 1000


def test_validation_problems_come_from_training_games_outside_the_training_sample(tmp_path):
    records = [_record(LADDER_MOVES + [["B", f"A{k}"]], 9, "D6", source=f"t:g{k}:1") for k in range(1, 7)]
    train = _write(tmp_path / "train.jsonl", records)
    test = _write(tmp_path / "test.jsonl", [_record(NET_MOVES, 7, "B5")])
    tr0, _, _, _ = load_sets(train, test, train_limit=3)
    tr, val, te, _ = load_sets(train, test, train_limit=3, validation=2)
    assert [p["name"] for p in tr] == [p["name"] for p in tr0]  # holding out does not change the training sample
    assert len(val) == 2 and not {p["name"] for p in val} & {p["name"] for p in tr} and len(te) == 1
    with pytest.raises(ValueError, match="validation"):
        load_sets(train, test, train_limit=3, validation=4)


def test_select_variant_prefers_solved_then_node_ratio():
    base = [_row(True, 1.0, 100), _row(False, 9.0, 900), _row(True, 1.0, 100)]
    variants = {"a": [_row(True, 1.0, 50), _row(False, 9.0, 900), _row(True, 1.0, 50)],   # 2 solved, ratio 2
                "b": [_row(True, 1.0, 100), _row(True, 2.0, 200), _row(False, 9.0, 900)],  # 2 solved, ratio 1
                "c": [_row(False, 9.0, 900)] * 3}                                           # 0 solved
    best, scores = select_variant(base, variants)
    assert best == "a" and scores == [("a", 2, 2.0), ("b", 2, 1.0), ("c", 0, 0.0)]


def test_learn_with_validation_times_only_the_chosen_variant_on_the_test_set(tmp_path, capsys):
    records = [_record(LADDER_MOVES + [["B", f"A{k}"]], 9, "D6") for k in (1, 2)] + [_record(NET_MOVES, 7, "B5")]
    train = _write(tmp_path / "train.jsonl", records)
    test = _write(tmp_path / "test.jsonl", [_record(LADDER_MOVES + [["B", "J1"]], 9, "D6")])
    out = tmp_path / "out"
    assert main(["--train", train, "--test", test, "--model", "beta", "--max-nodes", "300", "--timeout", "10",
                 "--test-max-nodes", "300", "--test-timeout", "10", "--passes", "1", "--out", str(out), "--json",
                 "--train-limit", "1", "--validation", "2", "--variants", "pp,pnsinit0.5"]) == 0
    (summary,) = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert summary["validation_problems"] == 2 and summary["selected_on_validation"] in ("pp", "pnsinit0.5")
    assert [v[0] for v in summary["validation_scores"]] == ["pp", "pnsinit0.5"]
    rows = [json.loads(x) for x in open(out / "validation_rows.jsonl")]
    assert [r["searcher"] for r in rows] == ["pns"] * 2 + ["beta/pp"] * 2 + ["beta/pnsinit0.5"] * 2
    assert len([json.loads(x) for x in open(out / "learn_rows.jsonl")]) == 2  # PNS + the chosen variant
