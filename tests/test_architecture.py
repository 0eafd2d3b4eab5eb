"""DESIGN.md's import directions, enforced by reading every module's imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("rules", "vision", "hardware", "calibration", "web", "referee")

#: package -> project packages it may import (besides itself)
ALLOWED: dict[str, set[str]] = {
    "rules": set(),
    "hardware": set(),
    "vision": set(),
    "calibration": {"vision"},
    "referee": {"rules", "vision", "hardware", "calibration"},
    "web": {"referee", "rules", "vision", "hardware", "calibration"},
}

#: package -> third-party modules it must never import
FORBIDDEN_THIRD_PARTY: dict[str, set[str]] = {
    "rules": {"cv2", "flask", "sqlite3", "werkzeug", "waitress", "picamera2", "socket", "subprocess"},
    "vision": {"flask", "sqlite3", "picamera2"},
    "calibration": {"flask", "sqlite3", "picamera2"},
    "hardware": {"flask", "sqlite3"},
}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


#: The command line is the program's entry point: it wires the page to the referee service, so
#: the modules of `referee/commands/` may import `web` (lazily); no other module of referee/ may.
ENTRY_POINTS = {"referee/commands": {"web"}}


def _allowed(package: str, path: Path) -> set[str]:
    rel = path.relative_to(ROOT).as_posix()
    extra = {pkg for prefix, pkgs in ENTRY_POINTS.items() if rel.startswith(prefix + "/")
             for pkg in pkgs}
    return ALLOWED[package] | extra


@pytest.mark.parametrize("package", PACKAGES)
def test_import_directions(package: str) -> None:
    assert (ROOT / package / "__init__.py").exists(), f"{package}/ is not a package"
    bad = []
    for path in _modules(package):
        allowed = _allowed(package, path)
        for line, top in _imports(path):
            if top in PACKAGES and top != package and top not in allowed:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {top}")
            if top in FORBIDDEN_THIRD_PARTY.get(package, set()):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {top}")
    assert not bad, "import directions of DESIGN.md broken:\n" + "\n".join(bad)


def test_picamera2_only_imported_lazily() -> None:
    """picamera2 exists only on a Pi: it may be imported only inside a function."""
    bad = []
    for package in PACKAGES:
        for path in _modules(package):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in tree.body:
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                if any(n.split(".")[0] in ("picamera2", "libcamera") for n in names):
                    bad.append(str(path.relative_to(ROOT)))
    assert not bad, f"module-level picamera2/libcamera import in {bad}"


def test_only_the_command_line_may_reach_the_web() -> None:
    assert "web" not in _allowed("referee", ROOT / "referee" / "service.py")
    assert "web" in _allowed("referee", ROOT / "referee" / "commands" / "serve.py")


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    """The test must be able to fail: a planted bad import is found."""
    bad = tmp_path / "x.py"
    bad.write_text("import cv2\nfrom web.app import create_app\nfrom . import y\n")
    assert [t for _, t in _imports(bad)] == ["cv2", "web"]


def test_each_package_has_one_error_base() -> None:
    for package in PACKAGES:
        text = (ROOT / package / "errors.py").read_text(encoding="utf-8")
        bases = [n for n in ast.parse(text).body if isinstance(n, ast.ClassDef)
                 and any(isinstance(b, ast.Name) and b.id == "Exception" for b in n.bases)]
        assert len(bases) == 1, f"{package}/errors.py must define exactly one base error"
