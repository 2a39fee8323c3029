"""Move features for Bradley-Terry move models: 3x3 patterns and Coulom's (2007) tactical features."""

from jaxgo.features.games import game_features
from jaxgo.features.moves import (
    GROUPS,
    canonical_pattern_table,
    distance,
    group_offsets,
    group_sizes,
    move_features,
    num_features,
    pattern_codes,
)

__all__ = ["GROUPS", "canonical_pattern_table", "distance", "game_features", "group_offsets", "group_sizes",
           "move_features", "num_features", "pattern_codes"]
