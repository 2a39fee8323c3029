"""Training drivers over shards: MM / LMP / Adam runs that are interrupted and resumed from their checkpoint end
where an uninterrupted run ends; the gamma file and the CLI round-trip."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import json

import numpy as np
import pytest

from jaxgo.features import GROUPS, group_sizes
from jaxgo.features import gammas as gm
from jaxgo.learn import train
from jaxgo.learn.synthetic import random_shards

fake_shards = random_shards  # (the name the other learner tests import)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return fake_shards(tmp_path_factory.mktemp("shards"))


@pytest.mark.parametrize("method,kwargs,stop", [
    ("lmp", {"passes": 2, "batch": 8}, 4),
    ("sgd", {"passes": 1, "batch": 8, "lr": 0.1}, 2),
    ("mm", {"iterations": 3, "batch": 16}, 1),
])
def test_interrupted_run_resumes_to_the_same_gammas(data, tmp_path, method, kwargs, stop):
    whole = train.train(data, method, tmp_path / "whole.npz", checkpoint=tmp_path / "ck_whole", **kwargs)
    assert whole["finished"] and whole["positions"] == 120 and whole["games"] == 6
    part = train.train(data, method, tmp_path / "part.npz", checkpoint=tmp_path / "ck_part", stop_after=stop,
                       **kwargs)
    assert not part["finished"] and not (tmp_path / "part.npz").exists()
    if method == "lmp":  # a run killed between writing a batch-factor file and committing its state
        (tmp_path / "ck_part" / "factors-shard-00002.next.npy").write_bytes(b"stale")
    again = train.train(data, method, tmp_path / "part.npz", checkpoint=tmp_path / "ck_part", **kwargs)
    assert again["finished"]
    a, b = gm.load(tmp_path / "whole.npz"), gm.load(tmp_path / "part.npz")
    assert np.allclose(a.log_gamma, b.log_gamma, atol=1e-5)
    assert not list((tmp_path / "ck_part").glob("*.next.npy"))
    # the signal in the fake data was learnt: capture level 1 beats absent, low pattern ids beat high ones
    assert a.group("capture")[1] > 0.3 and a.group("pattern")[1:5].mean() > a.group("pattern")[10:30].mean()
    assert a.meta["method"] == method
    with pytest.raises(ValueError):  # a checkpoint of another run is refused
        train.train(data, method, tmp_path / "x.npz", checkpoint=tmp_path / "ck_part", batch=32)


@pytest.mark.parametrize("method,kwargs", [("lmp", {"batch": 8}), ("sgd", {"batch": 8, "lr": 0.1})])
def test_finished_run_continues_with_more_passes(data, tmp_path, method, kwargs):
    three = train.train(data, method, tmp_path / "three.npz", checkpoint=tmp_path / "ck3", passes=3, **kwargs)
    train.train(data, method, tmp_path / "two.npz", checkpoint=tmp_path / "ck", passes=2, **kwargs)
    more = train.train(data, method, tmp_path / "more.npz", checkpoint=tmp_path / "ck", passes=3, **kwargs)
    assert three["finished"] and more["finished"] and more["passes"] == 3
    assert np.allclose(gm.load(tmp_path / "three.npz").log_gamma, gm.load(tmp_path / "more.npz").log_gamma,
                       atol=1e-5)
    assert not np.allclose(gm.load(tmp_path / "two.npz").log_gamma, gm.load(tmp_path / "more.npz").log_gamma,
                           atol=1e-5)
    with pytest.raises(ValueError):  # fewer passes, or other settings, are another run
        train.train(data, method, tmp_path / "x.npz", checkpoint=tmp_path / "ck", passes=2, **kwargs)
    if method == "lmp":  # one LMP pass keeps no per-batch factors: it cannot be continued
        train.train(data, method, tmp_path / "one.npz", checkpoint=tmp_path / "ck1", passes=1, **kwargs)
        with pytest.raises(ValueError):
            train.train(data, method, tmp_path / "x.npz", checkpoint=tmp_path / "ck1", passes=2, **kwargs)


def test_mm_streams_its_in_memory_data_in_chunks(data, tmp_path, monkeypatch):
    one = train.train(data, "mm", tmp_path / "one.npz", iterations=2, batch=8)
    monkeypatch.setattr(train, "MM_CHUNK", 2)  # 15 batches: 8 device calls per pass, the last one shorter
    chunked = train.train(data, "mm", tmp_path / "chunked.npz", iterations=2, batch=8)
    assert np.allclose(gm.load(tmp_path / "one.npz").log_gamma, gm.load(tmp_path / "chunked.npz").log_gamma,
                       atol=1e-5)
    assert one["train_mean_log_likelihood"] == pytest.approx(chunked["train_mean_log_likelihood"], abs=1e-5)


@pytest.mark.slow
def test_mm_and_lmp_agree_on_shards(data, tmp_path):
    train.train(data, "mm", tmp_path / "mm.npz", iterations=60, batch=16)
    train.train(data, "lmp", tmp_path / "lmp.npz", passes=40, batch=8)
    mm, lmp = gm.load(tmp_path / "mm.npz"), gm.load(tmp_path / "lmp.npz")
    seen = mm.log_gamma != 0
    assert np.abs(mm.log_gamma[seen] - lmp.log_gamma[seen]).max() < 0.05


def test_gamma_file_round_trip_and_errors(tmp_path):
    g = gm.neutral()
    g.log_gamma[g.offsets[1] + 1] = 1.5
    g.meta = {"method": "test"}
    g.save(tmp_path / "g.npz")
    back = gm.load(tmp_path / "g.npz")
    assert back.compatible() and back.meta == {"method": "test"} and back.group("capture")[1] == 1.5
    assert back.pattern_log_gamma.shape == (group_sizes()[0] - 1,)
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError):
        gm.load(tmp_path / "bad.npz")
    with pytest.raises(ValueError):
        gm.Gammas(np.zeros(5))


def test_large_pattern_gammas_ship_in_the_package():
    g = gm.load_named(None)
    assert g.large is not None and g.compatible() and g.meta.get("games", 0) > 0
    assert len(g.large) > 1000 and g.group("large")[0] == 0.0
    assert np.all(g.log_gamma[g.offsets] == 0.0)
    assert np.array_equal(gm.load_named("base").log_gamma, gm.load_default().log_gamma)
    assert g.base_log_gamma.shape == gm.load_default().log_gamma.shape


def test_default_gammas_ship_in_the_package():
    g = gm.load_default()
    assert g.compatible() and g.meta.get("train_games", 0) > 0
    assert g.log_gamma[g.offsets].tolist() == [0.0] * len(GROUPS)  # absent levels: gamma 1
    assert g.group("capture")[1] > 0 and g.group("self_atari")[1] < 0  # captures good, self-atari bad


def test_cli_train_and_eval(data, tmp_path, capsys):
    from jaxgo.learn.cli import main
    from jaxgo.learn.synthetic import random_game_sgf

    out = tmp_path / "cli.npz"
    assert main(["train", "--shards", str(data), "--method", "lmp", "--out", str(out), "--batch", "8",
                 "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["finished"] and out.exists() and (tmp_path / "cli.npz.ckpt" / "state.npz").exists()
    games = tmp_path / "games"
    games.mkdir()
    for i in range(3):
        (games / f"{i}.sgf").write_bytes(random_game_sgf(9, 15, seed=10 + i))
    (games / "broken.sgf").write_bytes(b"(;GM[1]SZ[9];B[")
    assert main(["eval", "--gammas", str(out), "--games", str(games), "--size", "9", "--limit", "2",
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["games"] == 2 and result["positions"] == 30
    assert 0 <= result["top1"] <= result["top5"] <= 1 and result["mean_log_likelihood"] < 0
    for shipped in ("base", "large"):  # the two shipped models by name (large: its patterns on a 9x9 board too)
        assert main(["eval", "--gammas", shipped, "--games", str(games), "--size", "9", "--limit", "2"]) == 0
        named = json.loads(capsys.readouterr().out)
        assert named["positions"] == 30 and named["gammas"] == shipped and 0 <= named["top1"] <= named["top5"]
    assert main(["eval", "--gammas", str(games / "0.sgf"), "--games", str(games), "--json"]) == 1
    assert "error" in json.loads(capsys.readouterr().out)
    # extract from a folder of SGF files: one shard per 2 games, re-running skips the finished shards
    argv = ["extract", "--out", str(tmp_path / "sh"), "--games-path", str(games), "--size", "9", "--shard-games",
            "2", "--no-progress"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["games"] == 3 and first["shards"] == 2 and first["complete"] and sum(first["skipped"].values()) == 1
    assert main(argv) == 0 and json.loads(capsys.readouterr().out) == first


@pytest.mark.slow
def test_bench_prints_speed_and_memory_figures(data, capsys):
    from jaxgo.learn.bench import main

    assert main(["--skip-extract", "--shards", str(data), "--subsets", "1,3", "--batch-positions", "8",
                 "--mm-iterations", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["lmp_examples"] == 40 and out["lmp_examples_per_s"] > 0
    runs = {(r["method"], r["shards"]): r for r in out["mm_vs_lmp"]}
    assert set(runs) == {("lmp", 1), ("mm", 1), ("lmp", 3), ("mm", 3)}
    assert all(r["peak_rss_mib"] > 0 and r["wall_s"] > 0 for r in runs.values())
    assert runs[("mm", 3)]["positions"] == 120


def test_mm_denominators_keep_float32_precision_over_many_batches():
    """Every candidate of 24,576 19x19 positions holds capture level 0, so its MM denominator at gammas 1 is the
    number of positions (each position's 362 terms 1/362 add up to 1).  Summed straight into one float32 total,
    terms of 0.0028 on a total past 16,384 (spacing 0.002) round to 0.002 each: 22,641 (8% lost); summed per
    batch first, 24,537 (the 0.2% left is the rounding of 370,000 equal terms inside a batch)."""
    from jaxgo.features import group_offsets
    from jaxgo.features.codes import pack

    n, batch = 24576, 1024
    levels = np.zeros((1, 362, len(GROUPS)), np.int32)
    row = pack(levels, np.ones((1, 362), bool))
    codes = np.broadcast_to(row, (n // batch, batch, 362))
    meta = np.zeros((n // batch, batch, 4), np.int16)
    meta[..., 1:3] = -1
    valid = np.ones((n // batch, batch), bool)
    lg = np.zeros(sum(group_sizes()), np.float32)
    denom = np.asarray(train._mm_denominator(lg, codes, meta, valid, np.int32(1)))
    assert denom[group_offsets()[1]] == pytest.approx(n, rel=1e-2)


# -- issue 61: range-checked options, validated checkpoints, strict JSON --------------------------------------
def strict_json(text: str):
    """JSON that refuses the bare NaN / Infinity tokens Python's json module writes by default."""
    def refuse(token):
        raise ValueError(f"bare {token} in a JSON line")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("option,value", [("--lr", "nan"), ("--lr", "inf"), ("--lr", "-1"), ("--lr", "1e30"),
                                          ("--batch", "0"), ("--iterations", "-1"), ("--passes", "-1"),
                                          ("--passes", "0")])
def test_cli_train_range_checks_its_numbers(data, tmp_path, capsys, option, value):
    from jaxgo.learn.cli import main

    out = tmp_path / "g.npz"
    with pytest.raises(SystemExit) as info:
        main(["train", "--shards", str(data), "--method", "sgd", "--out", str(out), "--quiet", option, value])
    assert info.value.code == 2 and option in capsys.readouterr().err and not out.exists()


def test_cli_json_lines_have_no_bare_nan():
    from jaxgo.learn.cli import json_line

    line = json_line({"loss": float("nan"), "rows": [1.5, float("inf")], "finished": True})
    assert strict_json(line) == {"loss": None, "rows": [1.5, None], "finished": True}


def corrupt(state, how: str) -> None:
    if how == "empty":
        state.write_bytes(b"")
    elif how == "truncated":
        state.write_bytes(state.read_bytes()[:100])
    elif how == "folder":
        state.unlink()
        state.mkdir()
    else:
        with np.load(state) as z:
            arrays = {k: z[k] for k in z.files}
        info = json.loads(str(arrays["info"]))
        if how == "nan":
            arrays["params"] = np.full_like(arrays["params"], np.nan)
        elif how == "text-pass":
            info["pass"] = "zero"
        elif how == "no-settings":
            info.pop("settings")
        elif how == "short":
            arrays["params"] = arrays["params"][:3]
        arrays["info"] = np.array(json.dumps(info))
        np.savez(state, **arrays)


@pytest.mark.parametrize("how", ["empty", "truncated", "folder", "nan", "text-pass", "no-settings", "short"])
def test_cli_train_refuses_a_bad_checkpoint_in_one_line(data, tmp_path, capsys, how):
    """BadZipFile / EOFError / TypeError / KeyError tracebacks, and a NaN checkpoint that trained on."""
    from jaxgo.learn.cli import main

    out = tmp_path / "g.npz"
    argv = ["train", "--shards", str(data), "--method", "sgd", "--out", str(out), "--batch", "8", "--quiet"]
    assert main(argv) == 0
    capsys.readouterr()
    out.unlink()
    state = tmp_path / "g.npz.ckpt" / "state.npz"
    corrupt(state, how)
    before = state.read_bytes() if state.is_file() else None
    assert main(argv + ["--passes", "2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("jaxgo gammas train: checkpoint") and err.count("\n") == 1, err
    assert not out.exists() and (before is None or state.read_bytes() == before)


def test_cli_train_refuses_a_truncated_lmp_factor_file_in_one_line(data, tmp_path, capsys):
    from jaxgo.learn.cli import main

    ckpt = tmp_path / "ck"
    names = json.loads((data / "manifest.json").read_text())["shards"]
    train.train(data, "lmp", None, checkpoint=ckpt, passes=2, batch=8, stop_after=len(names) + 1)
    for path in ckpt.glob("factors-*.npy"):
        path.write_bytes(path.read_bytes()[:20])
    out = tmp_path / "g.npz"
    assert main(["train", "--shards", str(data), "--method", "lmp", "--out", str(out), "--checkpoint", str(ckpt),
                 "--passes", "2", "--batch", "8", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "factor file" in err and "is unreadable" in err and err.count("\n") == 1 and not out.exists(), err
