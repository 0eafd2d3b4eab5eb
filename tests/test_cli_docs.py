"""What the command-line help and the README promise: paths and defaults that exist (issue 17)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from referee.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _help(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_demo_help_states_the_demo_log_default(capsys) -> None:
    from referee.commands.demo import demo_db_path

    text = _help(capsys, "demo").replace("- ", "-")  # argparse wraps after a hyphen
    assert "default: " + str(demo_db_path()) in text
    assert "user's data directory" not in text  # that is serve's default, not the demo's


def test_corners_help_and_the_readme_point_at_a_design_doc_in_the_repo(capsys) -> None:
    text = _help(capsys, "replay")
    assert "docs/DESIGN.md" in text
    assert (ROOT / "docs" / "DESIGN.md").is_file()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(((?:docs/)?DESIGN\.md)[)#]", readme):
        assert (ROOT / target).is_file(), target
    assert "(DESIGN.md" not in readme.replace("](docs/DESIGN.md", "")


def test_readme_gives_the_real_page_count_of_the_35_mm_board(tmp_path: Path) -> None:
    from calibration.printing import print_dition_board

    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    said = re.search(r"for 35 mm discs (\d+) A4 pages, an index and (\d+) pages in (\d+) rows "
                     r"of (\d+)", readme)
    assert said, "the README does not say how many pages the 35 mm board takes"
    written = print_dition_board(tmp_path, 35.0, "a4")
    rows = len({t.row for t in written.plan.tiles})
    cols = len(written.plan.tiles) // rows
    assert [int(g) for g in said.groups()] == [written.plan.pages, len(written.plan.tiles),
                                               rows, cols]
