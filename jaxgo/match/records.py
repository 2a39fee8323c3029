"""Game records on disk: the SGF files of folders, of tar archives of such folders, or single files, as the
referee and the evaluation tools write and read them."""

from __future__ import annotations

from pathlib import Path


def sgf_files(path, folder: str | None = None) -> dict[str, bytes]:
    """{name: bytes} of the ``.sgf`` files of a game folder (as ``run_match(sgf_dir=...)`` writes them; names
    relative to it) or of a tar of such folders (member names; any compression ``tarfile`` reads).  ``folder``:
    only the files under that top folder.  A tar is read at once: a compressed tar cannot be read from two
    threads."""
    import tarfile

    path = Path(path)
    if path.is_dir():
        found = {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*.sgf")}
    else:
        with tarfile.open(path) as archive:
            found = {m.name: archive.extractfile(m).read()
                     for m in archive.getmembers() if m.isfile() and m.name.endswith(".sgf")}
    return {name: data for name, data in found.items() if folder is None or name.split("/")[0] == folder}


def read_game_records(paths, folder: str | None = None) -> tuple[list, int]:
    """([(name, ``jaxgo.go.sgf.GameRecord``)] sorted by name, number of unreadable records skipped) of the SGF
    files, game folders and tars of them named in ``paths``; ``folder`` as in ``sgf_files`` (for folders and
    tars).  Names: a file's path, or ``FOLDER_OR_TAR:MEMBER``."""
    import tarfile

    from jaxgo.go.sgf import SGFError, load_sgf

    blobs = {}
    for path in map(Path, paths):
        if path.is_dir() or tarfile.is_tarfile(path):
            blobs.update({f"{path}:{name}": data for name, data in sgf_files(path, folder).items()})
        else:
            blobs[str(path)] = path.read_bytes()
    records, broken = [], 0
    for name in sorted(blobs):
        try:
            records.append((name, load_sgf(blobs[name])))
        except SGFError:
            broken += 1
    return records, broken
