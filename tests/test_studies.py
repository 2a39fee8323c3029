"""studies/: every reproduction script compiles, is listed with its command in its folder's README, and every
folder is listed in studies/README.md; nothing in the package imports a study script."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STUDIES = ROOT / "studies"


def test_every_study_script_compiles_and_its_readme_gives_its_command():
    folders = sorted(p for p in STUDIES.iterdir() if p.is_dir())
    assert [p.name for p in folders] == ["bpip", "cgt", "crf", "gammas", "proof", "search"]
    index = (STUDIES / "README.md").read_text()
    for folder in folders:
        assert f"]({folder.name}/README.md)" in index
        readme = (folder / "README.md").read_text()
        for script in sorted(folder.glob("*.py")):
            compile(script.read_text(), str(script), "exec")
            assert f"python studies/{folder.name}/{script.name}" in readme, script


def test_the_package_never_imports_a_study():
    for path in (ROOT / "jaxgo").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                assert not any(name.startswith("studies") for name in names), path
