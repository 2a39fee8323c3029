"""jaxgo/eval/balance.py: the gamma transformation, the held-out split, and a small resumable run."""

from __future__ import annotations

import json

import numpy as np

from jaxgo.eval import balance

GAME = b"(;FF[4]GM[1]SZ[5]KM[0.5]RE[B+Resign];B[cc];W[aa];B[bb];W[ee];B[dd];W[ab];B[ba];W[de];B[ed])"


def test_theta_scales_groups_and_zero_is_the_identity():
    from jaxgo.features import moves

    base = np.random.default_rng(0).normal(size=moves.num_features())
    assert np.array_equal(balance.balanced_log_gamma(base, np.zeros(len(balance.GROUPS))), base)
    theta = np.zeros(len(balance.GROUPS))
    theta[balance.GROUPS.index("capture")] = np.log(10.0)
    theta[balance.GROUPS.index("pattern")] = np.log(2.0)
    out = balance.balanced_log_gamma(base, theta)
    offsets = dict(zip(moves.GROUPS, moves.group_offsets().tolist()))
    sizes = dict(zip(moves.GROUPS, moves.group_sizes().tolist()))
    capture = slice(offsets["capture"] + 1, offsets["capture"] + sizes["capture"])
    pattern = slice(offsets["pattern"] + 1, offsets["pattern"] + sizes["pattern"])
    np.testing.assert_allclose(out[capture], base[capture] + np.log(10.0))
    np.testing.assert_allclose(out[pattern], 2.0 * base[pattern])
    untouched = np.ones(len(base), bool)
    untouched[capture] = untouched[pattern] = False
    assert np.array_equal(out[untouched], base[untouched])  # absent levels and other groups


def test_held_out_split_is_stable_and_about_half():
    names = [f"game_{i:04d}.sgf" for i in range(400)]
    held = [balance.held_out(name) for name in names]
    assert held == [balance.held_out(name) for name in names]
    assert 150 < sum(held) < 250
    # the file name decides, wherever the games lie
    assert held == [balance.held_out(f"/tmp/x{i}/games.tar:sgf/{name}") for i, name in enumerate(names)]


def test_a_run_writes_its_log_continues_it_and_saves_gammas(tmp_path, capsys):
    games = tmp_path / "games"
    games.mkdir()
    for i in range(8):
        result = b"RE[B+Resign]" if i % 2 else b"RE[W+3.5]"
        (games / f"g{i}.sgf").write_bytes(GAME.replace(b"RE[B+Resign]", result))
    log, saved = tmp_path / "balance.jsonl", tmp_path / "balanced.npz"
    common = ["--sgf", str(games), "--moves", "4", "8", "--positions", "6", "--playouts", "4",
              "--final-playouts", "4", "--batch", "8", "--log", str(log)]
    assert balance.main(common + ["--iterations", "1"]) == 0
    assert balance.main(common + ["--iterations", "2", "--save", str(saved)]) == 0
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [0, 1] and rows[1]["theta"] == rows[0]["theta_after"]
    assert all(abs(t) <= 2.0 for t in rows[1]["theta_after"])
    summary = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [s["variant"] for s in summary[-2:]] == ["shipped", "balanced"] and "brier_diff_ci95" in summary[-1]
    from jaxgo.features import gammas

    loaded = gammas.load(saved)
    assert loaded.meta["method"] == "spsa-brier" and set(loaded.meta["theta"]) == set(balance.GROUPS)


# 7x7, Black to move after White's G1 (tests/eval/test_judged_moves.py draws it): B4 captures three stones.
CAPTURE = b"(;FF[4]GM[1]SZ[7]KM[24.5]RE[B+Resign]AB[cc][dc][ec][fd][ce][de][ee]AW[cd][dd][ed];W[gg];B[ba])"


def test_a_run_on_judged_moves_tunes_the_correlation(tmp_path, capsys):
    games = tmp_path / "games"
    games.mkdir()
    cache = tmp_path / "judge.jsonl"
    rows = []
    for i in range(6):  # record names whose hash puts some positions on either side of the split
        (games / f"r{i}.sgf").write_bytes(CAPTURE)
        rows.append({"id": f"{games}:r{i}.sgf@1", "values": {"B4": 0.7, "A7": 0.2, "G7": 0.25}})
    cache.write_text("".join(json.dumps(row) + "\n" for row in rows))
    log = tmp_path / "balance.jsonl"
    assert balance.main(["--judge-values", str(cache), "--sgf", str(games), "--iterations", "2", "--playouts", "16",
                         "--final-playouts", "16", "--batch", "8", "--log", str(log)]) == 0
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(logged) == 2 and all(row["objective_plus"] < 0 for row in logged)  # minus a positive correlation
    summary = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [s["variant"] for s in summary] == ["shipped", "balanced"] and "slope_diff_ci95" in summary[-1]
    assert summary[0]["positions"] == sum(balance.held_out(f"r{i}.sgf") for i in range(6))
