"""GTP framing and dispatch (``jaxgo.gtp.protocol``) on a toy registry, and the GTP package's import structure."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from jaxgo.gtp.engine import FAMILIES, command_registry
from jaxgo.gtp.protocol import (
    Dispatcher,
    GtpError,
    board_rows,
    colour_arg,
    float_arg,
    format_response,
    parse_command,
    preprocess,
    require_count,
    vertex_arg,
)

GTP_PACKAGE = Path(__file__).resolve().parents[2] / "jaxgo" / "gtp"


class ToySession:
    """The least a Dispatcher needs: quit, debug, command_names."""

    def __init__(self):
        self.quit = False
        self.logged = []

    def debug(self, text):
        self.logged.append(text)


def broken(session, args):
    raise ZeroDivisionError("boom")


def refuse(session, args):
    raise GtpError("cannot score")


def echo(session, args):
    return "\n".join(args)


def stop(session, args):
    session.quit = True


@pytest.fixture
def dispatcher():
    return Dispatcher(ToySession(), {"broken": broken, "refuse": refuse, "echo": echo, "quit": stop})


def test_registry_names_are_the_commands(dispatcher):
    assert dispatcher.commands() == ["broken", "echo", "quit", "refuse"]
    assert dispatcher.session.command_names == ("broken", "echo", "quit", "refuse")


def test_failures_and_internal_errors_are_answered_and_the_session_goes_on(dispatcher):
    assert dispatcher.handle("3 refuse") == "?3 cannot score\n\n"
    assert dispatcher.handle("broken") == "? internal error: boom\n\n"
    assert "ZeroDivisionError" in dispatcher.session.logged[0]
    assert dispatcher.handle("frobnicate") == "? unknown command\n\n"
    assert dispatcher.handle("echo a") == "= a\n\n"


def test_multi_line_results_never_hold_an_empty_line(dispatcher):
    assert dispatcher.handle("echo a  b") == "= a\nb\n\n"
    assert format_response(True, "a\n\nb\n") == "= a\n \nb\n \n\n"


def test_run_script_stops_after_quit(dispatcher):
    assert dispatcher.run_script("1 echo x\n# note\n2 quit\n3 echo y\n") == "=1 x\n\n=2 \n\n"
    assert dispatcher.quit


def test_framing_helpers():
    assert preprocess("  12\tplay b\x01 c3 # comment\r") == "12 play b c3"
    assert parse_command("12 play b c3") == ("12", "play", ["b", "c3"])
    assert parse_command("7") == ("7", None, [])
    assert parse_command("name") == ("", "name", [])


def test_argument_helpers():
    require_count(["a"], 1, 2)
    with pytest.raises(GtpError, match="syntax error"):
        require_count([], 1)
    assert colour_arg("White") == -1
    with pytest.raises(GtpError, match="invalid color"):
        colour_arg("red")
    assert vertex_arg("A1", 5) == 20 and vertex_arg("pass", 5) == 25
    with pytest.raises(GtpError, match="invalid coordinate"):
        vertex_arg("Z9", 5)
    for word in ("inf", "nan", "x"):
        with pytest.raises(GtpError, match="syntax error"):
            float_arg(word)
    assert board_rows([1, -0.5, 0, 0.25], 2) == "1.00 -0.50\n0.00 0.25"


def test_families_never_register_one_name_twice():
    registry = command_registry()
    assert len(registry) == sum(len(commands) for commands in FAMILIES.values())
    with pytest.raises(ValueError, match="registered twice"):
        command_registry({"a": {"x": echo}, "b": {"x": refuse}})


def gtp_imports() -> dict[str, set[str]]:
    """module name -> the jaxgo.gtp modules it imports (anywhere in the file, functions included)."""
    graph = {}
    for path in GTP_PACKAGE.glob("*.py"):
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            imported |= {name.rsplit(".", 1)[-1] for name in names if name.startswith("jaxgo.gtp.")
                         and (GTP_PACKAGE / f"{name.rsplit('.', 1)[-1]}.py").exists()}
        graph[path.stem] = imported - {path.stem}
    return graph


def test_no_handler_imports_the_composition_and_no_import_cycle():
    graph = gtp_imports()
    importers_of_engine = {name for name, imported in graph.items() if "engine" in imported}
    assert importers_of_engine <= {"cli"}
    assert not any("cli" in imported for imported in graph.values())
    for family in ("core", "play", "analysis", "territory", "proof", "gogui", "params"):
        assert graph[family] <= {"protocol", "remote", "settings", "tree_analysis"}, family
    done, visiting = set(), set()

    def visit(name):
        assert name not in visiting, f"import cycle through jaxgo.gtp.{name}"
        if name in done:
            return
        visiting.add(name)
        for other in graph.get(name, ()):
            visit(other)
        visiting.discard(name)
        done.add(name)

    for name in graph:
        visit(name)
