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


# -- issue 61: checkpoints of another run, exact resume, range checks, unreadable files -----------------------
def train_args(labelled, out, *extra):
    return ["train", "--labels", labelled, "--model", "b5", "--inference", "bp", "--batch", "4",
            "--checkpoint-every", "2", "--out", str(out), *extra]


def test_a_killed_and_resumed_run_ends_bit_for_bit_as_an_uninterrupted_one(labelled, tmp_path, monkeypatch):
    """The batch sampling was re-seeded on resume (parameters differed by up to 0.29)."""
    import shutil

    from jaxgo.crf import cli

    saved = cli.save_npz_atomic
    kept = tmp_path / "step4.npz"

    def save_and_keep(path, arrays):  # what a run killed after its step-4 checkpoint leaves behind
        saved(path, arrays)
        if int(arrays["step"]) == 4:
            shutil.copy(path, kept)

    monkeypatch.setattr(cli, "save_npz_atomic", save_and_keep)
    assert main(train_args(labelled, tmp_path / "whole.json", "--steps", "6")) == 0
    shutil.copy(kept, tmp_path / "resumed.json.ckpt.npz")
    assert main(train_args(labelled, tmp_path / "resumed.json", "--steps", "6")) == 0
    whole = json.load(open(tmp_path / "whole.json"))["params"]
    resumed = json.load(open(tmp_path / "resumed.json"))["params"]
    assert resumed == whole


def test_a_checkpoint_of_another_run_is_refused_and_left_alone(labelled, tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(train_args(labelled, out, "--steps", "2", "--model", "blib")) == 0
    ckpt = tmp_path / "m.json.ckpt.npz"
    before, model = ckpt.read_bytes(), out.read_bytes()
    other = tmp_path / "other.npz"
    data = dict(np.load(labelled))
    data["labels"] = -data["labels"]
    np.savez(other, **data)
    for argv, reason in ((train_args(labelled, out, "--steps", "4"), "model 'blib' (now 'b5')"),
                         (train_args(str(other), out, "--steps", "4", "--model", "blib"), "data"),
                         (train_args(labelled, out, "--steps", "1", "--model", "blib"), "--steps 1 is below it")):
        capsys.readouterr()
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert reason in err and err.count("\n") == 1 and "Traceback" not in err, err
        assert ckpt.read_bytes() == before and out.read_bytes() == model


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04truncated", "folder", "nan"])
def test_an_unreadable_or_not_finite_checkpoint_is_one_line(labelled, tmp_path, capsys, content):
    out = tmp_path / "m.json"
    ckpt = tmp_path / "m.json.ckpt.npz"
    if content == "folder":
        ckpt.mkdir()
    elif content == "nan":
        assert main(train_args(labelled, out, "--steps", "2")) == 0
        data = dict(np.load(ckpt))
        data["params"] = np.full_like(data["params"], np.nan)
        np.savez(ckpt, **data)
        out.unlink()
    else:
        ckpt.write_bytes(content)
    capsys.readouterr()
    assert main(train_args(labelled, out, "--steps", "4")) == 1
    err = capsys.readouterr().err
    assert err.startswith("jaxgo territory train: checkpoint") or err.startswith("jaxgo territory train: cannot")
    assert err.count("\n") == 1 and not out.exists(), err


@pytest.mark.parametrize("option, value", [("--lr", "nan"), ("--lr", "-1"), ("--lr", "inf"), ("--batch", "0"),
                                           ("--steps", "0"), ("--checkpoint-every", "0"), ("--sweeps", "0")])
def test_numeric_options_are_range_checked(labelled, tmp_path, capsys, option, value):
    out = tmp_path / "m.json"
    with pytest.raises(SystemExit) as info:
        main(train_args(labelled, out, option, value))
    assert info.value.code == 2 and option in capsys.readouterr().err and not out.exists()


def test_missing_labels_and_out_folder_are_one_line(labelled, tmp_path, capsys):
    assert main(train_args(str(tmp_path / "none.npz"), tmp_path / "m.json")) == 1
    assert "no such file" in capsys.readouterr().err
    assert main(train_args(str(tmp_path), tmp_path / "m.json")) == 1
    assert "a folder" in capsys.readouterr().err
    assert main(train_args(labelled, tmp_path / "nowhere" / "m.json")) == 1
    assert "does not exist" in capsys.readouterr().err


def test_a_full_disk_is_one_line_and_leaves_nothing_half_written(labelled, tmp_path, capsys):
    import subprocess

    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(disk)]).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        with open(disk / "filler", "wb", buffering=0) as handle:
            try:
                while True:
                    handle.write(b"x" * 512)
            except OSError:
                pass
        assert main(train_args(labelled, disk / "m.json", "--steps", "2")) == 1
        err = capsys.readouterr().err
        assert "No space left on device" in err and err.count("\n") == 1, err
        assert sorted(p.name for p in disk.iterdir()) == ["filler"]
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_eval_range_checks_its_numbers(labelled, capsys):
    with pytest.raises(SystemExit) as info:
        main(["eval", "--positions", labelled, "--inference", "sw", "--sweeps", "0"])
    assert info.value.code == 2 and "--sweeps" in capsys.readouterr().err
