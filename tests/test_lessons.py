"""Each solved notebook is a lesson of one 90-minute session (issue 28): objectives a student can
check, minutes on every core section adding up to 90 or less, at most five exercises and five
hand-typed figures in the core, keypoints at its end, the rest under "Going further"; the day's
teaching order; every glossary link pointing at a defined term, and the terms a newcomer cannot
guess linked where a notebook first uses them."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "notebooks" / "glossary.md"
#: The school's teaching order (the file names are the original course's).
ORDER = ["3_Python_GPU_CuPy", "2_Python_GPU_cuPyNumeric", "1_Python_GPU_JAX", "4_Python_GPU_synthesis"]
SOLVED = [ROOT / "solutions" / f"{name}.ipynb" for name in ORDER]
CORE_MINUTES = 90
MOST_EXERCISES = 5
MOST_TYPED_FIGURES = 5
GOING_FURTHER = re.compile(r"^##\s+(Going further|After the session)", re.M | re.I)
MINUTES = re.compile(r"\((\d+) min\)\s*$")
#: A number with a unit, as a reader sees a measured figure in the prose.
FIGURE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:us|µs|ms|s|GB/s|TB/s|MiB|GiB|GB|MB|x|×)(?![\w/])")
DIMENSIONS = re.compile(r"\b\d+ x \d+\b")  # a grid's rows x columns is a size, not a measurement
RENDERED = re.compile(r"<!-- results:.*?<!-- /results -->", re.S)
#: Terms a newcomer cannot guess: the first cell of a notebook that uses one links its definition
#: (or defines it in bold there). Words with an everyday meaning too (block, grid, task, stream)
#: are left to the reader of the notebook.
LINKED_ON_FIRST_USE = {
    "warp": r"\bwarps?\b", "occupancy": r"\boccupancy\b", "coalescing": r"\bcoalesc", "xla": r"\bXLA\b",
    "jaxpr": r"\bjaxprs?\b", "fusion": r"\bfus(?:ion|es|ed)\b", "ghost-rows": r"\bghost rows?\b",
    "halo": r"\bhalos?\b", "--fbmem": r"--fbmem", "pinned-memory": r"\bpinned\b", "shard_map": r"\bshard_map\b",
    "privatisation": r"\bprivatis", "atomic-operation": r"\batomic", "bitonic-sort": r"\bbitonic\b",
    "cublas": r"\bcuBLAS\b",
}
REQUIRED_TERMS = ["kernel", "launch", "block", "grid-cuda", "warp", "occupancy", "stream", "pinned-memory", "xla",
                  "tracing", "jit", "fusion", "halo", "ghost-rows", "task", "legate", "--fbmem", "coalescing"]


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def _core(cells: list[dict]) -> list[dict]:
    """The cells after the first, up to the first "Going further" heading."""
    core = []
    for cell in cells[1:]:
        if cell["cell_type"] == "markdown" and GOING_FURTHER.search(_source(cell)):
            break
        core.append(cell)
    return core


def _headings(cells: list[dict]) -> list[str]:
    return [line for c in cells if c["cell_type"] == "markdown" for line in _source(c).splitlines()
            if line.startswith("## ")]


def typed_figures(markdown: str) -> list[str]:
    """The figures a Markdown text types by hand: outside code blocks and rendered result blocks."""
    text = RENDERED.sub("", re.sub(r"```.*?```", "", markdown, flags=re.S))
    return FIGURE.findall(DIMENSIONS.sub("", text))


def anchors() -> set[str]:
    return set(re.findall(r'<a name="([^"]+)"></a>', GLOSSARY.read_text()))


@pytest.fixture(params=SOLVED, ids=ORDER)
def solved(request) -> Path:
    return request.param


def test_the_first_cell_gives_the_session_objectives_prerequisites_and_plan(solved):
    first = _source(_cells(solved)[0])
    session = ORDER.index(solved.stem) + 1
    assert first.startswith("# "), "the first cell starts with the notebook's title"
    assert re.search(rf"\bSession {session} of 4\b", first), f"the first cell says 'Session {session} of 4'"
    labels = [first.find(label) for label in ("**Learning objectives**", "**Prerequisites**", "**Plan**")]
    assert -1 not in labels and labels == sorted(labels), "objectives, prerequisites and plan, in that order"
    objectives = first[labels[0]:labels[1]]
    bullets = re.findall(r"^\s*- (\S+)", objectives, re.M)
    assert 3 <= len(bullets) <= 5, f"3 to 5 learning objectives, found {len(bullets)}"
    vague = [word for word in bullets if word.lower().strip("*") in {"understand", "learn", "know", "see", "appreciate"}]
    assert not vague, f"objectives a student can check start with what they do, not {vague}"
    assert "](glossary.md)" in first, "the first cell links the glossary"


def test_every_core_section_has_its_minutes_and_the_core_fits_the_session(solved):
    core = _core(_cells(solved))
    headings = [h for h in _headings(core) if not h.startswith("## Keypoints")]
    untimed = [h for h in headings if not MINUTES.search(h)]
    assert headings and not untimed, f"core headings without '(N min)': {untimed}"
    total = sum(int(MINUTES.search(h).group(1)) for h in headings)
    assert total <= CORE_MINUTES, f"the core's sections add up to {total} minutes"


def test_the_core_ends_with_keypoints_and_the_rest_goes_further(solved):
    cells = _cells(solved)
    core = _core(cells)
    last = _source(core[-1])
    assert core[-1]["cell_type"] == "markdown" and last.startswith("## Keypoints"), "the core's last cell: Keypoints"
    assert 3 <= len(re.findall(r"^- ", last, re.M)) <= 6, "three to six keypoints"


def test_the_core_has_at_most_five_exercises_and_five_typed_figures(solved):
    core = _core(_cells(solved))
    exercises = sum("### BEGIN SOLUTION" in _source(c) for c in core if c["cell_type"] == "code")
    assert exercises <= MOST_EXERCISES, f"{exercises} exercises in the core"
    figures = [f for c in core if c["cell_type"] == "markdown" for f in typed_figures(_source(c))]
    assert len(figures) <= MOST_TYPED_FIGURES, f"figures typed by hand in the core's text: {figures}"


def test_typed_figures_are_counted_and_sizes_or_rendered_blocks_are_not():
    assert typed_figures("CuPy takes 0.27 s, JAX 1.8x, 4,214 GB/s and 3,189 MiB") == ["0.27 s", "1.8x", "4,214 GB/s", "3,189 MiB"]
    assert typed_figures("on 1080 x 1920\n<!-- results: bench-headline h200 -->\n0.27 s\n<!-- /results -->") == []
    assert typed_figures("```\nprint('2 s')\n```") == []


def test_the_glossary_defines_the_course_terms_and_every_link_points_at_one():
    defined = anchors()
    assert set(REQUIRED_TERMS) <= defined, f"undefined: {sorted(set(REQUIRED_TERMS) - defined)}"
    for path in SOLVED + [ROOT / "README.md"]:
        text = path.read_text()
        broken = sorted(set(re.findall(r"glossary\.md#([^)\s\"\\]+)", text)) - defined)
        assert not broken, f"{path.name} links undefined glossary terms {broken}"


def test_terms_a_newcomer_cannot_guess_are_linked_where_first_used(solved):
    cells = [_source(c) for c in _cells(solved) if c["cell_type"] == "markdown"]
    unlinked = []
    for anchor, pattern in LINKED_ON_FIRST_USE.items():
        first = next((text for text in cells if re.search(pattern, RENDERED.sub("", text), re.I)), None)
        if first is None:
            continue
        word = re.search(pattern, first, re.I).group(0)
        if f"glossary.md#{anchor}" not in first and f"**{word}" not in first:
            unlinked.append(word)
    assert not unlinked, f"first used without a glossary link or a definition in bold: {unlinked}"


def test_the_students_folder_has_the_glossary_the_notebooks_link():
    assert (ROOT / "notebooks" / "glossary.md").is_file()
    from gs_course.delivery import handout

    assert "glossary.md" in [p.name for p in handout.course_files()]


def _code_trees(path: Path) -> list:
    """Each code cell's syntax tree (IPython's % and ! lines left out)."""
    import ast

    trees = []
    for cell in _cells(path):
        if cell["cell_type"] == "code":
            lines = [line for line in _source(cell).splitlines() if not line.lstrip().startswith(("%", "!"))]
            trees.append(ast.parse("\n".join(lines)))
    return trees


def gpu_only_rebinds(trees: list) -> list[tuple[str, int, int]]:
    """(name, cell, later cell): a name bound for every machine (in an earlier cell, or in the same
    cell outside its branches), rebound inside a GPU-only branch (`if CUPY.ok:`, `if ...gpu...:`,
    the `else:` of `if not CUPY.ok:`), then read by a later cell that does not bind it itself: that
    cell runs with another value on a GPU than on the CPU the tests run on. (The CuPy tutorial's
    timing loop rebound `steps` so, and the image-writing cell after it did ten times its work on
    the H200 only.) A later cell that binds the name after reading it is not looked at."""
    import ast

    def stores(nodes) -> set[str]:
        return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

    def gpu_only(test) -> bool:
        text = ast.unparse(test)
        return "not " not in text and (text.endswith(".ok") or "gpu" in text.lower())

    found, everywhere = [], set()
    for number, tree in enumerate(trees):
        sides = [(n.body, n.orelse) for n in ast.walk(tree) if isinstance(n, ast.If) and gpu_only(n.test)]
        sides += [(n.orelse, n.body) for n in ast.walk(tree) if isinstance(n, ast.If) and isinstance(n.test, ast.UnaryOp)
                  and isinstance(n.test.op, ast.Not) and gpu_only(n.test.operand)]
        branches = [gpu for gpu, _ in sides]
        # a name bound on both sides of one `if` (xp = cupy, else numpy) is a choice per machine, not a rebind
        in_branches = set().union(*(stores(gpu) - stores(cpu) for gpu, cpu in sides))
        inside = {id(n) for branch in branches for node in branch for n in ast.walk(node)}
        everywhere |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                       and id(n) not in inside}
        for later in range(number + 1, len(trees)):
            reads = {n.id for n in ast.walk(trees[later]) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            found += [(name, number, later) for name in sorted(in_branches & everywhere & reads - stores([trees[later]]))]
    return found


def test_no_gpu_only_branch_rebinds_a_name_that_a_later_cell_reads(solved):
    assert gpu_only_rebinds(_code_trees(solved)) == []


def test_a_gpu_only_rebind_read_later_is_found():
    import ast

    cells = ["steps = 32", "if CUPY.ok:\n    steps = 320\n    run(steps)", "save(steps)", "steps = 4\nsave(steps)"]
    assert gpu_only_rebinds([ast.parse(c) for c in cells]) == [("steps", 1, 2)]
    same_cell = ["n = 1\nif not CUPY.ok:\n    pass\nelse:\n    n = 10", "print(n)"]
    assert gpu_only_rebinds([ast.parse(c) for c in same_cell]) == [("n", 0, 1)]
