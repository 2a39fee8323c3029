"""``jaxgo match``: GTP engines played against each other, refereed by jaxgo's rules (``jaxgo.match.cli`` has the
command's full description).

One concept per module: ``referee`` (one game between two engines, a series of them, CPU shares), ``clock`` (the
referee's time control and each side's clock), ``league`` (round-robin tournaments from a TOML file, a resumable
results file, standings), ``stats`` (Wilson and Newcombe intervals, Bradley-Terry Elo), ``records`` (the SGF
files that games are written to and read back from) and ``cli`` (the command).  The names below are the package's
public interface, as they were when the match runner was one module.
"""

from jaxgo.match.cli import build_parser, main
from jaxgo.match.clock import GameClock, TimeControl
from jaxgo.match.league import (
    NAME_PATTERN,
    RESULTS_VERSION,
    TOURNAMENT_KEYS,
    Entrant,
    ResultsFile,
    Tournament,
    load_tournament,
    parse_players,
    play_scheduled,
    read_results,
    run_tournament,
    standings_table,
    tournament_summary,
)
from jaxgo.match.records import read_game_records, sgf_files
from jaxgo.match.referee import CpuShares, cpu_shares, play_game, run_match
from jaxgo.match.stats import ELO_METHOD, bradley_terry_elo, difference_interval, wilson_interval

__all__ = [
    "ELO_METHOD", "NAME_PATTERN", "RESULTS_VERSION", "TOURNAMENT_KEYS", "CpuShares", "Entrant", "GameClock",
    "ResultsFile", "TimeControl", "Tournament", "bradley_terry_elo", "build_parser", "cpu_shares",
    "difference_interval", "load_tournament", "main", "parse_players", "play_game", "play_scheduled",
    "read_game_records", "read_results", "run_match", "run_tournament", "sgf_files", "standings_table",
    "tournament_summary", "wilson_interval",
]
