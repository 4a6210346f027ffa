"""`gs-course notebooks`: a student's first copy, the course's updates during the school without
losing the student's work, a fresh copy on request, and one line for a folder that cannot be
written."""

import json

from gs_course.delivery import classroom, handout
from gs_course.cli import main
from gs_course.lessons import notebooks
from gs_course.paths import course_folder
from test_read_only import read_only  # noqa: F401  (the fixture: a read-only tmpfs mount as root)


def _tutorials() -> list[str]:
    """The four tutorials' file names, from solutions/, in the school's teaching order: each number
    of the order must name one solved notebook."""
    solved = sorted(course_folder("solutions").glob("*.ipynb"))
    chosen = [notebooks.named(solved, number) for number in classroom.SCHOOL_ORDER]
    assert all(len(found) == 1 for found in chosen), f"solutions/ lacks a tutorial of {classroom.SCHOOL_ORDER}: {chosen}"
    return [found.name for (found,) in chosen]


def _course(folder, **notebooks):
    folder.mkdir(exist_ok=True)
    for name, text in notebooks.items():
        (folder / f"{name}.ipynb").write_text(json.dumps({"cells": [text]}))
    return folder


def test_the_course_hands_out_every_tutorial_its_readme_and_glossary():
    names = [p.name for p in handout.course_files()]
    tutorials = _tutorials()
    assert len(tutorials) == 4 and sorted(name for name in names if name.endswith(".ipynb")) == sorted(tutorials)
    assert {"README.md", "glossary.md"} <= set(names)
    assert all((handout.SOURCE / name).read_bytes() for name in names)


def test_first_copy_then_updates_that_never_overwrite_the_students_work(tmp_path):
    course = _course(tmp_path / "course", a="a1", b="b1", c="c1")
    mine = tmp_path / "mine"
    assert handout.sync(mine, course) == ["new: a.ipynb", "new: b.ipynb", "new: c.ipynb"]
    assert (mine / "a.ipynb").read_text() == (course / "a.ipynb").read_text()

    (mine / "a.ipynb").write_text("my answers")            # the student works in a
    _course(course, a="a2", b="b2", d="d1")                   # the course fixes a and b, adds d
    said = handout.sync(mine, course)
    assert said == ["kept your a.ipynb (you changed it); the course's new version is beside it: a.updated.ipynb",
                    "updated: b.ipynb", "new: d.ipynb"]
    assert (mine / "a.ipynb").read_text() == "my answers"
    assert (mine / "a.updated.ipynb").read_text() == (course / "a.ipynb").read_text()
    assert (mine / "b.ipynb").read_text() == (course / "b.ipynb").read_text()
    assert (mine / "c.ipynb").read_text() == (course / "c.ipynb").read_text()

    assert handout.sync(mine, course) == [], "nothing new: nothing said, nothing touched"
    assert (mine / "a.ipynb").read_text() == "my answers"


def test_reset_gives_a_fresh_copy_and_keeps_the_students_as_a_backup(tmp_path):
    course = _course(tmp_path / "course", **{"1_first": "x1", "2_second": "y1"})
    mine = tmp_path / "mine"
    handout.sync(mine, course)
    (mine / "2_second.ipynb").write_text("half done")
    said = handout.reset(mine, "2", course)
    backups = list(mine.glob("2_second.backup-*.ipynb"))
    assert len(backups) == 1 and backups[0].read_text() == "half done"
    assert said == [f"your 2_second.ipynb is kept as {backups[0].name}", "fresh: 2_second.ipynb"]
    assert (mine / "2_second.ipynb").read_text() == (course / "2_second.ipynb").read_text()
    _course(course, **{"2_second": "y2"})
    assert handout.sync(mine, course) == ["updated: 2_second.ipynb"], "the fresh copy counts as untouched"


def test_the_command_copies_into_a_folder_and_says_what_it_did(tmp_path, capsys):
    assert main(["notebooks", str(tmp_path / "mine")]) == 0
    out = capsys.readouterr().out
    handed = sorted(line.removeprefix("new: ") for line in out.splitlines() if line.endswith(".ipynb"))
    assert handed == sorted(_tutorials()) and out.strip().endswith("done; open it in JupyterLab")
    assert main(["notebooks", str(tmp_path / "mine")]) == 0
    assert capsys.readouterr().out.strip().endswith("up to date; open it in JupyterLab")


def test_a_folder_that_cannot_be_written_gets_one_line(read_only, capsys):
    assert main(["notebooks", str(read_only / "mine")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"gs-course: error: cannot write to {read_only / 'mine'}") and "\n" not in err


def test_a_file_in_the_way_gets_one_line(tmp_path, capsys):
    """Root (CI, a container's build) writes anywhere: a file where the folder should be still fails."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    assert main(["notebooks", str(blocker)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"gs-course: error: cannot write to {blocker}") and "\n" not in err
    assert "give a folder of your own" in err


def test_reset_of_an_unknown_notebook_names_the_notebooks(tmp_path, capsys):
    assert main(["notebooks", str(tmp_path), "--reset", "9"]) == 2
    err = capsys.readouterr().err
    assert "no course notebook '9'" in err and "1_Python_GPU_JAX.ipynb" in err


def test_regenerating_the_student_notebooks_keeps_one_a_person_edited(tmp_path, monkeypatch, capsys):
    """python -m gs_course.lessons.notebooks replaces what it wrote itself, and keeps anything else as
    NAME.edited-TIME.ipynb (a student who saved their work in notebooks/ loses nothing)."""
    from gs_course.lessons import notebooks

    (tmp_path / "solutions").mkdir()
    (tmp_path / "notebooks").mkdir()
    solved = tmp_path / "solutions" / "1_first.ipynb"
    student = tmp_path / "notebooks" / "1_first.ipynb"
    monkeypatch.setattr(notebooks, "ROOT", tmp_path)
    monkeypatch.setattr(notebooks, "GENERATED", tmp_path / ".cache" / "generated.json")
    monkeypatch.setattr(notebooks, "pairs", lambda: [(solved, student)])

    def solve(answer: str) -> None:
        cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 1,
                "source": f"### BEGIN SOLUTION\n{answer}\n### END SOLUTION\n"}
        solved.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}))

    solve("x = 1")
    assert notebooks.main([]) == 0
    first = student.read_text()
    solve("x = 2")  # a solution changes: the notebook it wrote is simply replaced
    assert notebooks.main([]) == 0 and not list(student.parent.glob("*.edited-*"))
    student.write_text(first.replace("Your turn", "My answer"))  # a student saves their work
    solve("x = 3")
    assert notebooks.main([]) == 0
    (kept,) = student.parent.glob("1_first.edited-*.ipynb")
    assert "My answer" in kept.read_text() and "Your turn" in student.read_text()
    assert f"kept your edited notebooks/1_first.ipynb as notebooks/{kept.name}" in capsys.readouterr().out
    assert [p.name for p in handout.course_files(student.parent) if p.suffix == ".ipynb"] == ["1_first.ipynb"]


def test_a_notebook_as_git_has_it_may_be_regenerated(tmp_path):
    """A clone's notebooks are committed as the generator wrote them: replacing one loses nothing."""
    import subprocess

    from gs_course.lessons import notebooks

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "a.ipynb").write_text("as committed")
    subprocess.run([*git, "add", "a.ipynb"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "a"], check=True)
    assert notebooks.keep_if_edited(tmp_path / "a.ipynb") is None
    (tmp_path / "a.ipynb").write_text("edited")
    kept = notebooks.keep_if_edited(tmp_path / "a.ipynb")
    assert kept.read_text() == "edited" and not (tmp_path / "a.ipynb").exists()
