"""The front pages stay a front door: README.md fits one screen's worth (<= 200 lines, no line over 200
characters), benchmarks/RESULTS.md is a page of today's figures (<= 400 lines, one short line per figure: none over
300 characters), and every relative link of the Markdown pages (README, RESULTS and its history, benchmarks/logs,
docs/, studies/) points to a file or folder that exists and, for
``page.md#anchor``, to a heading of that page."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def pages() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "benchmarks" / "RESULTS.md"]
    for folder in ("docs", "studies", "benchmarks/history", "benchmarks/logs"):
        found += sorted((ROOT / folder).rglob("*.md"))
    return found


def anchors(page: Path) -> set[str]:
    """GitHub's anchor of every heading: lower case, punctuation dropped, spaces to hyphens."""
    heads = re.findall(r"^#+ (.+)$", page.read_text(), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def test_readme_is_one_screen_and_results_one_page():
    readme = (ROOT / "README.md").read_text().splitlines()
    assert len(readme) <= 200 and max(map(len, readme)) <= 200
    assert len((ROOT / "benchmarks" / "RESULTS.md").read_text().splitlines()) <= 400


def test_results_has_one_short_line_per_figure():
    lines = (ROOT / "benchmarks" / "RESULTS.md").read_text().splitlines()
    assert [n for n, line in enumerate(lines, 1) if len(line) > 300] == []


def test_every_relative_link_resolves():
    broken = []
    for page in pages():
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve()
            if not resolved.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_the_anchor_rule_matches_githubs():
    page = ROOT / "benchmarks" / "RESULTS.md"
    assert {"gtp-start-up-and-hostile-input", "strength-against-gnu-go", "playouts"} <= anchors(page)
