"""GoGui's ``gogui-analyze_commands`` (the analysis commands a GoGui user can pick from a menu) and
``gogui-interrupt``.

Each entry is ``type/label/command`` (GoGui's format, chapter "Analyze Commands" of its manual); every command
listed is registered by another family (``jaxgo.gtp.play``, ``jaxgo.gtp.analysis``, ``jaxgo.gtp.territory``,
``jaxgo.gtp.proof``).  ``%p`` is a point the user clicks; a ``param`` command lists ``key value`` lines and sets
one with ``command key value`` (GoGui's parameter dialog).

``gogui-interrupt`` tells GoGui that a running command can be interrupted by the comment line ``# interrupt``:
the read loop (``jaxgo.gtp.loop``) ends a live analysis on it and a search through an analysis engine
(``*-genmove_analyze``, ``jaxgo-pv_gfx``, ``genmove`` of ``jaxgo gtp --server``) answers with its best move so
far.  (A ``genmove`` searching in this process runs to its budget: ``Searcher.search`` has no stop hook yet.)
"""

from __future__ import annotations

GOGUI_ANALYZE = ("dboard/Ownership (playouts)/jaxgo-ownership\n"
                 "dboard/Territory (CRF)/jaxgo-territory\n"
                 "gfx/Principal variation/jaxgo-pv_gfx\n"
                 "string/Search statistics/jaxgo-search_stats\n"
                 "param/Search parameters/jaxgo-search_config\n"
                 "string/Attack (proof search)/attack %p\n"
                 "string/Defend (proof search)/defend %p")


def analyze_commands(session, args):
    return GOGUI_ANALYZE


def interrupt(session, args):
    """GoGui's ``gogui-interrupt``: an empty answer says ``# interrupt`` lines are understood."""
    return ""


COMMANDS = {"gogui-analyze_commands": analyze_commands, "gogui-interrupt": interrupt}
