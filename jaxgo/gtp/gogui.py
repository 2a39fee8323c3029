"""GoGui's ``gogui-analyze_commands``: the analysis commands a GoGui user can pick from a menu.

Each entry is ``type/label/command`` (GoGui's format); every command listed is registered by another family
(``jaxgo.gtp.play``, ``jaxgo.gtp.analysis``, ``jaxgo.gtp.territory``).
"""

from __future__ import annotations

GOGUI_ANALYZE = ("dboard/Ownership (playouts)/jaxgo-ownership\n"
                 "dboard/Territory (CRF)/jaxgo-territory\n"
                 "gfx/Principal variation/jaxgo-pv_gfx\n"
                 "string/Search statistics/jaxgo-search_stats\n"
                 "string/Search configuration/jaxgo-search_config")


def analyze_commands(session, args):
    return GOGUI_ANALYZE


COMMANDS = {"gogui-analyze_commands": analyze_commands}
