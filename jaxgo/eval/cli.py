"""``jaxgo eval TOOL ...``: the dispatcher to the evaluation tools (each a module with ``main(argv) -> int``)."""

from __future__ import annotations

import importlib
import sys

TOOLS = {
    "strength": ("jaxgo.eval.strength", "series against GNU Go: run, report (table, plots), audit, ladders, swings"),
    "spsa": ("jaxgo.eval.spsa", "SPSA self-play tuning of search constants (resumable log, report, plot)"),
    "move-quality": ("jaxgo.eval.move_quality", "engines' moves in SGF positions scored by GNU Go's top_moves"),
    "playout-quality": ("jaxgo.eval.playout_quality", "how well playout policies predict the games' results"),
    "judged-moves": ("jaxgo.eval.judged_moves", "how far playout policies tell apart moves a judge rates apart"),
    "balance": ("jaxgo.eval.balance", "simulation balancing: SPSA on the heavy playouts' gamma factors"),
    "rave-bias": ("jaxgo.eval.rave_bias", "bias of RAVE values in the engine's own trees, Silver's rave_c3"),
    "compare": ("jaxgo.eval.compare", "playout speed and gammas accuracy of two revisions in one run"),
    "device-check": ("jaxgo.eval.device_check", "the same playouts on an accelerator and on the CPU"),
    "analysis": ("jaxgo.eval.analysis", "19x19 analysis as KaTrain asks it: even game, policy, opening losses"),
    "score-fit": ("jaxgo.eval.score_fit", "the analysis' score calibration: collect counted games, fit, check"),
}


def usage() -> str:
    lines = ["usage: jaxgo eval TOOL [ARGS...]", "", "tools:"]
    lines += [f"  {name:<16} {text}" for name, (_, text) in TOOLS.items()]
    lines += ["", "`jaxgo eval TOOL --help` describes each tool."]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Run ``argv[0]``'s tool with the rest; usage on stdout for --help (0), on stderr otherwise (2)."""
    if argv and argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    if not argv or argv[0] not in TOOLS:
        unknown = f"jaxgo eval: unknown tool {argv[0]!r}\n\n" if argv else ""
        print(unknown + usage(), file=sys.stderr)
        return 2
    module = importlib.import_module(TOOLS[argv[0]][0])
    return int(module.main(argv[1:]) or 0)
