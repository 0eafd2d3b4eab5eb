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


# -- no import circles, no private names across modules, one description per game ------------------


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _project_modules(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    return {_module_name(p, root): p for pkg in packages for p in sorted((root / pkg).rglob("*.py"))}


def _import_edges(
    modules: dict[str, Path],
) -> tuple[dict[str, set[str]], list[str]]:
    """Every import of every module, at module level and inside functions alike (ast.walk):
    (module -> project modules it imports, the private names imported from another module as
    "path:line name from module")."""
    edges: dict[str, set[str]] = {m: set() for m in modules}
    private: list[str] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                edges[name] |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom):
                source = node.module or ""
                if node.level:  # relative: resolved against this module's package
                    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                    base = package[: len(package) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    if f"{source}.{alias.name}" in modules:  # a submodule
                        edges[name].add(f"{source}.{alias.name}")
                    elif source in modules:
                        edges[name].add(source)
                        if alias.name.startswith("_") and source != name:
                            private.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}"
                                           f":{node.lineno} {alias.name} from {source}")
    return edges, private


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: strongly connected components of more than one module, or a module
    importing itself (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges[node]:
                    found.append(sorted(component))
    return found


def test_no_import_circles() -> None:
    """No module reaches itself through imports, counting those inside functions (an import
    moved into a function hides a circle, it does not break it)."""
    edges, _ = _import_edges(_project_modules())
    circles = _cycles(edges)
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_no_private_name_imported_from_another_module() -> None:
    _, private = _import_edges(_project_modules())
    assert not private, "private names imported across modules:\n" + "\n".join(private)


def test_the_circle_and_private_checks_see_a_violation(tmp_path: Path) -> None:
    """Both checks can fail: a circle hidden in a function and a private import are found."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import helper\n")
    (pkg / "b.py").write_text("def helper():\n    from pkg.c import _secret\n    return _secret\n")
    (pkg / "c.py").write_text("_secret = 1\n\ndef f():\n    from . import a\n    return a\n")
    (pkg / "d.py").write_text("from pkg import c\n")  # on no circle
    edges, private = _import_edges(_project_modules(tmp_path, ("pkg",)))
    assert _cycles(edges) == [["pkg.a", "pkg.b", "pkg.c"]]
    assert [p.split(" ", 1)[1] for p in private] == ["_secret from pkg.c"]


#: the one place that may name a game in a comparison: each game's own description
GAME_DESCRIPTIONS = "referee/games/"


def _game_branches(path: Path) -> list[str]:
    """Comparisons of a `...game` against a game's name ("dition", ("a", "b")), and
    isinstance(match, ...) / isinstance(self.match, ...): branching on which game it is."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []

    def names_game(node: ast.expr) -> bool:
        return ((isinstance(node, ast.Name) and node.id.endswith("game"))
                or (isinstance(node, ast.Attribute) and node.attr.endswith("game")))

    def is_name_literal(node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str)
        return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(names_game(s) for s in sides) and any(is_name_literal(s) for s in sides):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "isinstance" and node.args):
            first = node.args[0]
            if ((isinstance(first, ast.Name) and first.id == "match")
                    or (isinstance(first, ast.Attribute) and first.attr == "match")):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_game_named_outside_its_description() -> None:
    """The loop, the service, the page, the log and the commands look a game up in the
    registry (referee/games/); none of them branches on which game it is."""
    bad = []
    for package in ("referee", "web"):
        for path in _modules(package):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(GAME_DESCRIPTIONS):
                continue
            bad += [f"{rel}:{line}" for line in _game_branches(path)]
    assert not bad, "a game named outside referee/games/:\n" + "\n".join(bad)


def test_the_game_branch_check_sees_a_violation(tmp_path: Path) -> None:
    planted = tmp_path / "x.py"
    planted.write_text(
        "def f(self, game, match, other):\n"
        "    if game == 'dition' or self.game in ('a', 'b'):\n"
        "        return isinstance(self.match, int)\n"
        "    return isinstance(match, str) or other.game == game\n"
    )
    found = _game_branches(planted)
    assert [f.split(":")[0] for f in found] == ["2", "2", "3", "4"]
