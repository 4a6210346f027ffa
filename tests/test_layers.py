"""gs_course's layers, read from its imports (those inside functions too): the engine at the top
level, then measurement/, lessons/, delivery/ and cli.py, each importing only the layers below it;
no import cycle; no module over 600 lines; above backends/, no import of a `*_backend` module."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "gs_course"
LAYERS = ("engine", "measurement", "lessons", "delivery", "cli")


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> str:
    second = module.split(".")[1] if "." in module else ""
    return second if second in LAYERS else "engine"


def _is_module(dotted: str) -> bool:
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports() -> list[tuple[str, str]]:
    """(importer, imported) for every import of a gs_course module by another."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "_aliases.py":  # old paths, as strings: kept for old notebooks
            continue
        me = _module(path)
        package = me if path.name == "__init__.py" else me.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if not target.startswith("gs_course"):
                    continue
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    found.append((me, full if _is_module(full) else target))
            elif isinstance(node, ast.Import):
                found += [(me, alias.name) for alias in node.names if alias.name.startswith("gs_course")]
    return [(a, b) for a, b in found if a != b]


def test_every_import_runs_down_the_layers():
    upward = [(a, b) for a, b in imports() if LAYERS.index(_layer(b)) > LAYERS.index(_layer(a))]
    assert upward == []


def test_no_import_cycle():
    graph: dict[str, set[str]] = {}
    for a, b in imports():
        if not a.startswith(b + "."):  # a module's own package runs its __init__ first: not a cycle
            graph.setdefault(a, set()).add(b)
    state: dict[str, int] = {}

    def visit(node, trail):
        state[node] = 1
        for nxt in graph.get(node, ()):
            if state.get(nxt) == 1:
                pytest.fail(f"import cycle: {' -> '.join(trail[trail.index(nxt):] + [nxt])}")
            if nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for node in list(graph):
        if node not in state:
            visit(node, [node])


def test_no_module_is_over_600_lines():
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py") if (n := len(p.read_text().splitlines())) > 600}
    assert long == {}


def test_above_the_backends_nothing_imports_a_backend_module():
    """The contract is `gs_course.backends` (create, probe, formulations) and its shared pieces
    (cuda_steps, temporal_blocking): a `*_backend` module's insides stay its own."""
    reaching = [(a, b) for a, b in imports() if b.endswith("_backend") and not a.startswith("gs_course.backends")]
    assert reaching == []


def test_the_layers_are_what_this_test_reads():
    """The reading finds the imports it must (a test of the test): the CLI imports delivery, the
    benchmark imports the engine's backends, a checker the model."""
    found = set(imports())
    assert ("gs_course.cli", "gs_course.delivery.doctor") in found
    assert ("gs_course.measurement.bench", "gs_course.backends") in found
    assert ("gs_course.lessons.check_model", "gs_course.model") in found
