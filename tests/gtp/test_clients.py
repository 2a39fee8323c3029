"""``jaxgo gtp`` as real GUIs read it.

Sabaki: its own GTP library (``@sabaki/gtp``, installed by scripts/setup.sh into tests/gtp/sabaki) drives a
``jaxgo gtp`` process from Node (tests/gtp/sabaki/drive.js).  Lizzie and GoGui: their parsing rules, written
down from their sources, applied to jaxgo's output -- Lizzie's ``Leelaz.parseInfo`` / ``MoveData.fromInfo``
(lines split on single spaces, key/value pairs up to ``pv``, Java ``Integer.parseInt`` for the lz-analyze
numbers, ``Double.parseDouble`` on KataGo's path, which it takes only for a ``name`` starting with "KataGo")
and GoGui's analyze-command format (``type/label/command``, ``dboard``, ``gfx``, ``param`` responses,
``gogui-interrupt`` with ``# interrupt`` lines).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from jaxgo.go.config import Rules
from jaxgo.gtp.analysis import info_line
from jaxgo.gtp.engine import make_gtp_engine, make_remote_gtp_engine
from jaxgo.gtp.loop import serve
from jaxgo.playouts import POLICIES as PLAYOUT_POLICIES
from jaxgo.search.config import SearchConfig
from support import ScriptedInput  # noqa: E402

SABAKI = Path(__file__).resolve().parent / "sabaki"
REPO = Path(__file__).resolve().parents[2]
JAVA_INT = re.compile(r"[+-]?[0-9]+")
GOGUI_TYPES = {"bwboard", "cboard", "dboard", "eplist", "gfx", "hstring", "hpstring", "none", "param", "plist",
               "pspairs", "pstring", "string", "sboard", "var", "varb", "varc", "varp", "varpo", "varw"}
CHEAP = SearchConfig(playout_policy="light", bias_c2=0.0)


def ask(engine, line: str) -> str:
    response = engine.handle(line)
    assert response.startswith("=") and response.endswith("\n\n"), response
    return response[2:-2]


# -- Sabaki ---------------------------------------------------------------------------------------------------
def sabaki_ready() -> str | None:
    """Why the Sabaki client test cannot run, or None."""
    if shutil.which("node") is None:
        return "node is not installed (scripts/setup.sh installs nodejs and npm)"
    if not (SABAKI / "node_modules" / "@sabaki" / "gtp").is_dir():
        return "@sabaki/gtp is not installed (scripts/setup.sh runs npm ci in tests/gtp/sabaki)"
    return None


def test_sabaki_drives_jaxgo_gtp_with_its_own_gtp_library():
    reason = sabaki_ready()
    if reason is not None:
        if os.environ.get("JAXGO_REQUIRE_TOOLS"):
            pytest.fail(reason)
        pytest.skip(reason)
    engine = [sys.executable, "-m", "jaxgo", "gtp", "--size", "9", "--playouts", "64", "--playout-policy", "light",
              "--bias", "0", "--quiet"]
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(REPO))
    proc = subprocess.run(["node", str(SABAKI / "drive.js"), *engine], capture_output=True, text=True, env=env,
                          cwd=SABAKI, timeout=900)
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    failed = {name: why for name, why in report["checks"].items() if why is not True}
    assert not failed and proc.returncode == 0, (failed, proc.stderr[-2000:])
    assert len(report["checks"]) >= 25


# -- Lizzie ---------------------------------------------------------------------------------------------------
def java_int(text: str) -> int:
    assert JAVA_INT.fullmatch(text) and -2 ** 31 <= int(text) < 2 ** 31, f"Integer.parseInt({text!r}) throws"
    return int(text)


def java_double(text: str) -> float:
    value = float(text)  # Double.parseDouble accepts what float() accepts here (no "_" in our output)
    assert "_" not in text and value == value, f"Double.parseDouble({text!r})"
    return value


def lizzie_moves(line: str, katago: bool) -> list[dict]:
    """Lizzie's Leelaz.parseInfo / parseInfoKatago + MoveData.fromInfo / fromInfoKatago on one output line."""
    assert line.startswith("info")
    moves = []
    for variation in line[5:].split(" info "):
        if not variation.strip():
            continue
        data = variation.strip().split(" ")
        move, i = {}, 0
        while i < len(data):
            key = data[i]
            if key == "pv":
                move["pv"] = data[i + 1:]
                break
            i += 1
            assert i < len(data), f"ArrayIndexOutOfBounds after {key!r}"
            value = data[i]
            if key == "move":
                move["move"] = value
            elif key == "visits":
                move["visits"] = java_int(value)
            elif key in ("winrate", "lcb", "prior"):
                move[key] = java_double(value) * 100 if katago else java_int(value) / 100.0
            elif key in ("scoreMean", "scoreStdev"):
                move[key] = java_double(value)
            i += 1
        moves.append(move)
    return moves


def move_info(move, visits, winrate, lcb, prior, pv, order):
    return {"move": move, "visits": visits, "winrate": winrate, "prior": prior, "lcb": lcb, "order": order,
            "utility": 2 * winrate - 1, "scoreLead": 3.0 * winrate, "scoreMean": -1.5, "pv": pv}


RESPONSE = {"id": "q", "turnNumber": 0, "isDuringSearch": True, "ownership": [1.0, -1.0, 0.0, 0.25] * 6 + [0.5],
            "moveInfos": [move_info("C3", 120, 1.0, 0.9, 0.25, ["C3", "D4", "pass"], 0),
                          move_info("D4", 7, 0.0, -0.2, 1.0, ["D4"], 1),
                          move_info("pass", 1, 0.5, 0.0, 0.0, ["pass"], 2)]}


LIZZIE_JAR = Path(os.environ.get("JAXGO_LIZZIE_JAR", "/usr/share/java/lizzie.jar"))


def lizzie_ready() -> str | None:
    """Why Lizzie's own start-up check cannot run here, or None."""
    if shutil.which("java") is None:
        return "java is not installed (apt-get install -y liblizzie-java brings it with Lizzie)"
    if not LIZZIE_JAR.is_file():
        return f"{LIZZIE_JAR} is missing (apt-get install -y liblizzie-java; or set JAXGO_LIZZIE_JAR)"
    return None


def test_lizzie_starts_with_jaxgo_by_its_own_version_check():
    """Lizzie's first commands are ``name`` and ``version`` (with ids); its ``Leelaz.parseLine`` (from the
    Lizzie jar, run by tests/gtp/lizzie/VersionCheck.java) must go on to pondering.  jaxgo 0.1 answered
    ``version`` with "0.1": Lizzie opened its "requires version 0.15" box inside its engine lock and hung."""
    reason = lizzie_ready()
    if reason is not None:
        if os.environ.get("JAXGO_REQUIRE_TOOLS"):
            pytest.fail(reason)
        pytest.skip(reason)
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(REPO))
    # --no-warmup: the two answers do not wait for JAX, so neither need the engine compile its search meanwhile
    gtp = subprocess.run([sys.executable, "-m", "jaxgo", "gtp", "--size", "9", "--quiet", "--no-warmup"],
                         input="1 name\n2 version\n", capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    answers = [line for line in gtp.stdout.splitlines() if line]
    assert gtp.returncode == 0 and len(answers) == 2, gtp
    check = subprocess.run(["java", "-Djava.awt.headless=true", "-cp", str(LIZZIE_JAR),
                            str(Path(__file__).resolve().parent / "lizzie" / "VersionCheck.java"), *answers],
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stderr
    verdict = json.loads(check.stdout.strip().splitlines()[-1])
    assert verdict["outcome"] == "accepted", (answers, verdict)
    assert verdict["kataGo"] is False  # jaxgo does not pass itself off as KataGo: Lizzie uses lz-analyze


def test_lizzie_reads_lz_analyze_with_integers():
    engine = make_gtp_engine(Rules(size=5), CHEAP)
    assert not ask(engine, "name").startswith("KataGo")  # so Lizzie sends lz-analyze, not kata-analyze
    version = ask(engine, "version").split(".")  # Lizzie: Integer.parseInt(version.split("\\.")[1])
    assert len(version) >= 2 and java_int(version[1]) >= 15  # below 15 Lizzie hangs (test above)
    moves = lizzie_moves(info_line(RESPONSE, "lz"), katago=False)
    assert [(m["move"], m["visits"], m["winrate"], m["lcb"], m["prior"]) for m in moves] == [
        ("C3", 120, 100.0, 90.0, 25.0), ("D4", 7, 0.0, 0.0, 100.0), ("pass", 1, 50.0, 0.0, 0.0)]
    assert moves[0]["pv"] == ["C3", "D4", "pass"]


def test_lizzie_reads_kata_analyze_on_its_katago_path():
    line = info_line(RESPONSE, "kata", ownership=True)
    moves = lizzie_moves(line, katago=True)
    assert [(m["move"], m["visits"], m["winrate"]) for m in moves] == [("C3", 120, 100.0), ("D4", 7, 0.0),
                                                                       ("pass", 1, 50.0)]
    owner = line.split("ownership")[1].strip().split(" ")  # Lizzie: split("ownership"), then Double each
    assert [java_double(v) for v in owner] == RESPONSE["ownership"]


def test_kata_analyze_floats_always_have_a_decimal_point():
    # Sabaki's releases read a winrate without "." as the x10000 integer format.
    line = info_line(RESPONSE, "kata", ownership=True)
    fields = line.split(" ownership ")[0].split()
    for key in ("winrate", "prior", "lcb", "utility", "utilityLcb", "scoreMean", "scoreLead", "scoreStdev"):
        values = [fields[i + 1] for i, word in enumerate(fields) if word == key]
        assert values and all("." in value for value in values), (key, values)
    assert all("." in value for value in line.split(" ownership ")[1].split())
    lz = info_line(RESPONSE, "lz").split()
    assert all(JAVA_INT.fullmatch(lz[i + 1]) for i, word in enumerate(lz) if word in ("winrate", "prior", "lcb"))


def test_lizzie_ids_are_echoed():
    engine = make_gtp_engine(Rules(size=5), CHEAP)
    response = engine.handle("12 name")  # Lizzie: Integer.parseInt(params[0].substring(1))
    assert java_int(response.split()[0][1:]) == 12


# -- GoGui ----------------------------------------------------------------------------------------------------
def test_gogui_analyze_commands_are_well_formed_and_registered():
    engine = make_gtp_engine(Rules(size=5), CHEAP)
    commands = set(ask(engine, "list_commands").splitlines())
    assert {"gogui-analyze_commands", "gogui-interrupt"} <= commands
    entries = ask(engine, "gogui-analyze_commands").splitlines()
    assert entries
    for entry in entries:
        parts = entry.split("/")
        assert len(parts) == 3 and parts[0] in GOGUI_TYPES and parts[1], entry
        assert parts[2].split()[0] in commands, entry
    assert ask(engine, "gogui-interrupt") == ""


def test_gogui_param_command_lists_and_sets_values():
    engine = make_gtp_engine(Rules(size=5), CHEAP)
    param = [e.split("/")[2] for e in ask(engine, "gogui-analyze_commands").splitlines() if e.startswith("param/")]
    assert param == ["jaxgo-search_config"]
    listed = ask(engine, "jaxgo-search_config").splitlines()
    for row in listed:  # "[type] key value" or "key value", no whitespace in the key
        words = row.split()
        key, value = (words[1], words[2:]) if words[0].startswith("[") else (words[0], words[1:])
        assert len(value) == 1 and not re.search(r"\s", key), row
    for row in listed:  # GoGui sends back what it shows: every listed value must be accepted as it is
        _, key, value = row.split()
        assert ask(engine, f"jaxgo-search_config {key} {value}") == "", row
    assert ask(engine, "jaxgo-search_config").splitlines() == listed


def test_gogui_param_dialog_has_typed_fields_and_the_move_budget():
    """Issue 47: every value was free text, the policy showed as "Playouts: heavy" and there was no field for
    the playouts per move.  GoGui reads ``[bool]``, ``[list/a/b]`` and ``[string]`` and shows a key's "_" as
    spaces."""
    engine = make_gtp_engine(Rules(size=5), CHEAP)
    rows = {row.split()[1]: row for row in ask(engine, "jaxgo-search_config").splitlines()}
    assert all(row.startswith(("[bool] ", "[list/", "[string] ")) for row in rows.values())
    assert rows["early_stop"] == "[bool] early_stop 1"
    assert rows["strategy"].startswith("[list/uct/rave/") and rows["strategy"].endswith(" rave")
    policies = "/".join(PLAYOUT_POLICIES)
    assert rows["playout_policy"] == f"[list/{policies}] playout_policy light"
    assert "playouts" not in rows  # the count and the policy are no longer one word
    assert rows["playouts_per_move"] == "[string] playouts_per_move none"
    assert ask(engine, "jaxgo-search_config playouts_per_move 500") == "" and engine.session.player.playouts == 500
    assert ask(engine, "jaxgo-search_config playout_policy heavy") == ""
    assert engine.session.config.playout_policy == "heavy"
    assert ask(engine, "jaxgo-search_config early_stop 0") == "" and engine.session.config.early_stop is False
    assert engine.handle("jaxgo-search_config early_stop maybe").startswith("?")


class OwnershipOnly:
    """A Player search giving a fixed ownership map (what a dboard shows), no JAX search."""

    config = SearchConfig()

    def ownership(self, game, playouts=256):
        import numpy as np

        return np.linspace(-1, 1, game.size * game.size).reshape(game.size, game.size)

    def reset(self):
        pass


def test_gogui_dboard_response():
    from jaxgo.search.player import Player

    engine = make_gtp_engine(Rules(size=5), player=Player(search=OwnershipOnly()))
    rows = ask(engine, "jaxgo-ownership 8").splitlines()
    assert len(rows) == 5 and all(len(row.split()) == 5 for row in rows)
    assert all(-1.0 <= float(v) <= 1.0 for row in rows for v in row.split())


class SlowConnection:
    """Analysis queries that report every 0.1 s and send their final result only once terminated."""

    def __init__(self):
        self.terminated = []

    def query(self, obj):
        connection = self

        class Stream:
            def __init__(self):
                self.stopped = False

            def get(self, timeout=None):
                if self.stopped:
                    return dict(RESPONSE, isDuringSearch=False, rootInfo={"visits": 128, "winrate": 0.6})
                time.sleep(min(timeout or 0.1, 0.1))
                return dict(RESPONSE)

            def terminate(self):
                self.stopped = True
                connection.terminated.append(obj.get("id"))

        return Stream()

    def close(self):
        pass



def session_output(engine, script, timeout=120) -> str:
    out = io.StringIO()
    thread = threading.Thread(target=serve, args=(engine, ScriptedInput(script), out), daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "the session hung: the interrupt was not seen"
    return out.getvalue()


def test_gogui_interrupt_ends_genmove_analyze_with_the_best_move_so_far():
    connection = SlowConnection()
    engine = make_gtp_engine(Rules(size=5), CHEAP, playouts=10 ** 6, analysis=connection)
    out = session_output(engine, [(0, b"gogui-interrupt\n"), (0, b"lz-genmove_analyze b 10\n"),
                                  (1.0, b"# interrupt\n"), (0, b"name\n")])
    replies = out[:-2].split("\n\n")
    assert replies[0] == "= " and replies[-1] == "= jaxgo" and len(replies) == 3
    assert replies[1].split("\n")[-1] == "play C3" and connection.terminated


def test_gogui_interrupt_stops_a_server_search_of_genmove():
    connection = SlowConnection()
    engine = make_remote_gtp_engine(connection, Rules(size=5), CHEAP, playouts=10 ** 6)
    out = session_output(engine, [(0, b"genmove b\n"), (1.0, b"# interrupt\n"), (0, b"name\n")])
    assert out == "= C3\n\n= jaxgo\n\n" and connection.terminated


def test_gogui_interrupt_stops_a_local_genmove():
    engine = make_gtp_engine(Rules(size=5), CHEAP, playouts=10 ** 7)
    out = session_output(engine, [(0, b"genmove b\n"), (1.0, b"# interrupt\n"), (0, b"name\n")])
    first, second = out.split("\n\n")[:2]
    assert re.fullmatch(r"= [A-E][1-5]", first) and second == "= jaxgo"
    assert engine.session.player.search.searcher(engine.session.game.rules).total_playouts < 10 ** 7


def test_pondering_thinks_between_genmove_and_the_next_command():
    log = io.StringIO()
    engine = make_gtp_engine(Rules(size=5), CHEAP, playouts=64, ponder=True, log=log)
    out = session_output(engine, [(0, b"genmove b\n"), (2.0, b"play w pass\n"), (0, b"genmove b\n"),
                                  (0, b"quit\n")])
    replies = out.split("\n\n")[:4]
    assert re.fullmatch(r"= [A-E][1-5]", replies[0]) and replies[1] == "= " and replies[3] == "= "
    assert "pondered: " in log.getvalue()  # a ponder search ran and ended at the next command
    searcher = engine.session.player.search.searcher(engine.session.game.rules)
    assert searcher.total_playouts > 2 * 64  # two genmoves' budgets plus what pondering added
    quiet = make_gtp_engine(Rules(size=5), CHEAP, playouts=64, log=io.StringIO())
    session_output(quiet, [(0, b"genmove b\n"), (0, b"quit\n")])
    assert "pondered" not in quiet.session.log.getvalue()  # off by default


def test_an_interrupt_line_alone_is_a_comment():
    engine = make_gtp_engine(Rules(size=5), CHEAP)
    out = session_output(engine, [(0, b"# interrupt\n"), (0, b"name\n")])
    assert out == "= jaxgo\n\n"
