"""``jaxgo.util.orphan``: which processes watch their parent."""

import os

from jaxgo.util.orphan import talks_through_pipes


def test_pipes_are_watched_and_files_are_not(tmp_path):
    read, write = os.pipe()
    try:
        assert talks_through_pipes((read,)) and talks_through_pipes((write,))
    finally:
        os.close(read)
        os.close(write)
    with open(tmp_path / "log", "w") as log, open(os.devnull) as null:
        assert not talks_through_pipes((log.fileno(), null.fileno()))  # nohup jaxgo serve > log &
