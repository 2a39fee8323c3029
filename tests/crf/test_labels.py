"""GNU Go territory labels (dead stones via GTP final_status_list dead, then area assignment)."""
import os
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np
import pytest

from jaxgo.crf.labels import gnugo_path, gtp_to_point, territory_labels

FIXTURE = Path(__file__).parents[1] / "fixtures" / "crf_dead_9x9.sgf"


def test_gtp_to_point():
    assert gtp_to_point("A9", 9) == 0
    assert gtp_to_point("J1", 9) == 80
    assert gtp_to_point("T19", 19) == 18
    assert gtp_to_point("T1", 19) == 360


@pytest.mark.gnugo
@pytest.mark.skipif(gnugo_path() is None, reason="GNU Go not installed (apt-get install -y gnugo)")
def test_dead_stone_removed_and_area_assigned():
    # Black wall on column D, White wall on column E, a lone White stone at B2 (sgf bh) inside Black's area.
    n, board, lab = territory_labels(FIXTURE.read_bytes())
    assert n == 9
    b2 = 7 * 9 + 1
    assert board[b2] == -1 and lab[b2] == 1            # dead stone becomes Black area
    lab = lab.reshape(9, 9)
    assert np.all(lab[:, :4] == 1) and np.all(lab[:, 4:] == -1)
