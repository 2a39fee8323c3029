"""`jaxgo territory train / eval / show` on a tiny labelled set of 5x5 positions."""
import json
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np
import pytest

from jaxgo.crf.cli import main


@pytest.fixture
def labelled(tmp_path):
    rng = np.random.default_rng(0)
    g = 6
    labels = np.where(np.arange(25) % 5 < 2, 1, -1)[None].repeat(g, 0).astype(np.int8)   # left 2 columns Black
    labels[:, 2] = 0                                                                      # a neutral point
    pos = {}
    for m in (20, 80, 150):
        st = np.zeros((g, 25), np.int8)
        st[:, [1, 6, 11]] = 1
        st[:, [3, 8, 18]] = -1
        st[:, rng.integers(0, 25)] = 0
        pos[f"moves{m}"] = st
    path = tmp_path / "lab.npz"
    np.savez(path, labels=labels, komi=np.full(g, 0.5, np.float32), **pos)
    return str(path)


def test_train_resume_and_eval(labelled, tmp_path, capsys):
    out = str(tmp_path / "m.json")
    args = ["train", "--labels", labelled, "--model", "blib", "--inference", "bp", "--batch", "4",
            "--checkpoint-every", "2", "--out", out]
    assert main(args + ["--steps", "2"]) == 0
    assert main(args + ["--steps", "4"]) == 0
    text = capsys.readouterr().out
    assert "resumed from" in text and "at step 2" in text
    model = json.load(open(out))
    assert model["model"] == "blib" and len(model["params"]) == 47 and model["steps"] == 4
    assert main(["eval", "--model", out, "--positions", labelled, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["move"] for r in rows] == [20, 80, 150]
    assert all(r["positions"] == 6 and 0 <= r["sign_accuracy"] <= 1 and r["cross_entropy_nats"] > 0 for r in rows)
    assert main(["eval", "--model", "b5", "--positions", labelled, "--inference", "sw", "--sweeps", "20",
                 "--moves", "80"]) == 0
    text = capsys.readouterr().out
    assert "sw" in text and "winner acc" in text


@pytest.mark.slow
def test_sw_training_moves_parameters(labelled, tmp_path, capsys):
    out = str(tmp_path / "s.json")
    assert main(["train", "--labels", labelled, "--inference", "sw", "--steps", "3", "--batch", "4",
                 "--out", out]) == 0
    p = json.load(open(out))["params"]
    assert len(p) == 5 and np.all(np.isfinite(p)) and not np.allclose(p, [2.74, 0.521, 0.442, 0.427, 0.265])


def test_bad_input_gives_clear_errors(tmp_path, capsys):
    assert main(["eval", "--positions", str(tmp_path / "missing.npz"), "--json"]) == 1
    assert "error" in json.loads(capsys.readouterr().out)
    bad = tmp_path / "bad.json"
    bad.write_text('{"model": "b5", "params": [1, 2]}')
    (tmp_path / "x.npz").write_bytes(b"")
    assert main(["eval", "--model", str(bad), "--positions", str(tmp_path / "x.npz")]) == 1
    assert main([]) == 2
