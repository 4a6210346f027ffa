#!/usr/bin/env python3
"""Play the CuPy tutorial's exercises with students' typical wrong answers, through the student
notebook's own cells in one Jupyter kernel, and write what each got to $OUT/wrong-answers-cupy.md.

    OUT=out COMMIT=$(git rev-parse --short HEAD) python3 tools/gpu-host-wrong-answers.py

Each exercise cell of notebooks/3_Python_GPU_CuPy.ipynb runs once per wrong answer typed in place
of its your-turn line, then with the solution's answer, which must still pass (so the session
survived the wrong ones). The cells between the exercises run as solutions/ has them, on the small
grid (GS_COURSE_SIZE=small). A wrong answer is handled right when its cell fails, shows the
expected hint and no traceback. Without a GPU only the exercises checked on the CPU are played,
the others are listed as not played. Exit status 1 when any answer was handled wrong.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from gs_course.backends import probe
from gs_course.lessons.notebooks import YOUR_TURN_MESSAGE

PAD_SUM = "padded = xp.pad(a, 1)\nwindow_sum = sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))\n"
STEP_TERMS = "uvv = u * v * v\n"
CLAMPED = ("for (int r = max(row - 1, 0); r <= min(row + 1, rows - 1); ++r) {\n"
           "    for (int c = max(col - 1, 0); c <= min(col + 1, cols - 1); ++c) {\n")
RAW_BODY = ('step_body = """\nconst float uc = u[cell], vc = v[cell];\nfloat lu = 0.0f, lv = 0.0f;\n' + CLAMPED
            + "        lu += u[r * cols + c] - uc;\n        lv += v[r * cols + c] - vc;\n    }\n}\n"
            "const float uvv = uc * vc * vc;\n"
            "u_next[cell] = uc + dt * (du * lu - uvv + feed * (1.0f - uc));\n"
            "v_next[cell] = vc + dt * (dv * lv + uvv - (feed + kill) * vc);\n\"\"\"\n")
UPDATE_BODY = ('update_body = """\nfloat uvv = u * v * v;\nu_next = u + dt * (du * lu - uvv + feed * (1.0f - u));\n'
               'v_next = v + dt * (dv * lv + uvv - (feed + kill) * v);\n"""\n')
SAVE = ("rows, cols = simulation.rows, simulation.cols\n"
        "frames = FrameWriter(path, nbimage, rows, cols, simulation.params, nbextrastep, deflate=None)\n")

#: exercise: (the checker call that finds its cell, GPU only, [(wrong answer, expected hint, what it is)]).
#: An expected hint starting with "PASS:" is a right answer that must pass with that text in its line.
EXERCISES = {
    "1 Laplacian": ("check.laplacian(laplacian", False, [
        (PAD_SUM + "return window_sum - 9 * a", "cells at the border have fewer neighbours", "9 neighbours everywhere"),
        ("return sum(xp.roll(a, (i, j), (0, 1)) for i in (-1, 0, 1) for j in (-1, 0, 1)) - 9 * a",
         "wrapped around", "np.roll: a wrapped border"),
        (PAD_SUM, "is None: end the function with return", "no return"),
        # CuPy arrays take NumPy's functions over (NEP 18, __array_function__): np.pad runs cupy.pad, on the device.
        (PAD_SUM.replace("xp.pad", "np.pad") + "return window_sum - counts * a", "PASS:laplacian: right",
         "np.pad on a CuPy array: runs cupy.pad, right (GPU)"),
        (PAD_SUM + "return (window_sum - counts * a).get()", "went back to the host", ".get(): to the host (GPU)"),
    ]),
    "2 step": ("check.step(step", False, [
        ("return u, v", "it is the state you were given", "the start state returned"),
        (STEP_TERMS + "return v + p.dt * (p.dv * laplacian(v) + uvv - (p.feed + p.kill) * v), "
         "u + p.dt * (p.du * laplacian(u) - uvv + p.feed * (1 - u))", "U and V are swapped", "U for V"),
        (STEP_TERMS + "return u + p.du * laplacian(u) - uvv + p.dt * p.feed * (1 - u), "
         "v + p.dv * laplacian(v) + uvv - p.dt * (p.feed + p.kill) * v", "dt on the feed term only", "dt on feed only"),
        (STEP_TERMS + "return u + p.dt * p.du * laplacian(u) - uvv + p.feed * (1 - u), "
         "v + p.dt * p.dv * laplacian(v) + uvv - (p.feed + p.kill) * v", "dt on the diffusion terms only",
         "dt on diffusion only"),
        (STEP_TERMS + "return u + p.dt * (p.dv * laplacian(u) - uvv + p.feed * (1 - u)), "
         "v + p.dt * (p.du * laplacian(v) + uvv - (p.feed + p.kill) * v)", "Du and Dv are swapped", "Du for Dv"),
        (STEP_TERMS + "return u + p.dt * (p.du * laplacian(u) - uvv + p.feed * (1 - u))", "must return a pair",
         "u only returned"),
        (STEP_TERMS + "du = p.du * laplacian(u) - uvv + p.feed * (1 - u)\n"
         "dv = p.dv * laplacian(v) + uvv - (p.feed + p.kill) * v\nu += p.dt * du\nv += p.dt * dv\nreturn u, v",
         "PASS:changed its inputs in place", "in place (right)"),
    ]),
    "3 ElementwiseKernel": ("check.elementwise_update(", True, [
        (UPDATE_BODY.replace("u + dt * (du", "u + (du"), "multiply every term of the update by dt", "dt missing on u"),
        (UPDATE_BODY.replace("v_next = v + dt", "float unused = v + dt"), "your v_next was never written",
         "writes u_next only"),
        (UPDATE_BODY.replace("du * lu", "DV_LU").replace("dv * lv", "du * lv").replace("DV_LU", "dv * lu"),
         "Du and Dv are swapped", "Du for Dv"),
        ('update_body = "u_next = undeclared;"', "your kernel does not compile", "a compiler error"),
    ]),
    "4 RawKernel": ("check.step_kernel(", True, [
        (RAW_BODY.replace(CLAMPED, "for (int r = row - 1; r <= row + 1; ++r) {\n"
                          "    for (int c = col - 1; c <= col + 1; ++c) {\n"),
         "reads outside its arrays at the border", "window not clamped (out of bounds)"),
        (RAW_BODY.replace("lu += u[r * cols + c] - uc;", "lu += u[r * cols + c];")
         .replace("lv += v[r * cols + c] - vc;", "lv += v[r * cols + c];")
         .replace("const float uvv", "lu -= 9.0f * uc; lv -= 9.0f * vc;\nconst float uvv"),
         "cells at the border have fewer neighbours", "sum minus 9 * uc"),
        (RAW_BODY.replace("v_next[cell] = ", "const float unused = "), "your v_next was never written",
         "v_next never written"),
        ('step_body = ""', "your u_next was never written", "an empty body"),
        (RAW_BODY.replace("dt * (du * lu", "dt * (DV_LU").replace("dt * (dv * lv", "dt * (du * lv")
         .replace("DV_LU", "dv * lu"), "Du and Dv are swapped", "Du for Dv"),
        (RAW_BODY.replace("u[cell], vc", "u[cell + (1 << 28)], vc"), "tried in a separate process",
         "a wild read (would lose the context)"),
    ]),
    "6 pinned fetch": ("check.pinned_fetch(", True, [
        # Does not wait for the busy stream either: accepted, the message saying the stream is not checked.
        ("out = cupyx.empty_pinned(v.shape, v.dtype)\ncupy.asnumpy(v, out=out)\nreturn out",
         "PASS:Not checked: which stream did the copy", "blocking copy on the default stream"),
        ("return cupyx.empty_pinned(v.shape, v.dtype)", "your fetched V is off", "pinned memory, nothing copied"),
        ("out = cupyx.empty_pinned(v.shape, v.dtype)\ncupy.asnumpy(v, stream=stream, out=out)\nreturn out",
         "waits for the copy", "blocking copy on the stream"),
        ("return v.get(stream=stream)", "ordinary \\(pageable\\) memory", "pageable memory"),
        ("return v", "return a NumPy array", "the device array returned"),
    ]),
    "7 overlapped output": ("check.saved_images(save_images,", False, [
        (SAVE + "with frames as writer:\n    for _ in range(nbimage):\n        simulation.advance(nbextrastep)\n"
         "        writer.write(simulation.fetch_v())", "written in line", "in line, no writer thread"),
        (SAVE + "writer = BackgroundWriter(frames)\nfor _ in range(nbimage):\n    simulation.advance(nbextrastep)\n"
         "    writer.write(simulation.fetch_v())", "your writer is still open", "BackgroundWriter never closed"),
        (SAVE + "with BackgroundWriter(frames) as writer:\n    for _ in range(nbimage):\n"
         "        writer.write(simulation.fetch_v())\n        simulation.advance(nbextrastep)",
         "V after 0 x nbextrastep steps", "the first image before the first steps"),
    ]),
}

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _typed_in(student_source: str, answer: str) -> str:
    """The student's cell with `answer` in place of its your-turn line, at that line's indentation."""
    lines = student_source.splitlines()
    index = next(i for i, line in enumerate(lines) if YOUR_TURN_MESSAGE in line)
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
    lines[index : index + 1] = [indent + line if line else line for line in answer.splitlines()]
    return "\n".join(lines)


def _shown(outputs) -> tuple[bool, str]:
    """(whether the cell failed, what the student sees)."""
    failed = any(o.output_type == "error" for o in outputs)
    parts = []
    for o in outputs:
        if o.output_type == "error":
            parts.append("\n".join(o.traceback))
        elif o.output_type == "stream":
            parts.append(o.text)
    return failed, ANSI.sub("", "\n".join(parts)).strip()


def _verdict(expected: str, failed: bool, shown: str) -> bool:
    if expected.startswith("PASS:"):
        return not failed and "\N{CHECK MARK}" in shown and expected[5:] in shown
    return failed and re.search(expected, shown) is not None and "Traceback" not in shown and "check.py" not in shown


def main() -> int:
    out = Path(os.environ.get("OUT", "gpu-results"))
    out.mkdir(parents=True, exist_ok=True)
    gpu = probe("cupy").ok and "--cpu-only" not in sys.argv
    os.environ.setdefault("GS_COURSE_SIZE", "small")
    solved = nbformat.read(ROOT / "solutions/3_Python_GPU_CuPy.ipynb", as_version=4)
    student = nbformat.read(ROOT / "notebooks/3_Python_GPU_CuPy.ipynb", as_version=4)
    for cell in solved.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    found = {name: next(i for i, c in enumerate(solved.cells) if call in c.source)
             for name, (call, _, _) in EXERCISES.items()}
    typed = {name: next(c.source for c in student.cells if call in c.source) for name, (call, _, _) in EXERCISES.items()}
    last = max(found.values())
    rows, failures = [], 0
    client = NotebookClient(solved, timeout=600, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(ROOT / "solutions")}})
    started = time.time()
    with client.setup_kernel():
        for index, cell in enumerate(solved.cells[: last + 1]):
            if cell.cell_type != "code":
                continue
            for name, (call, gpu_only, wrong_answers) in EXERCISES.items():
                if found[name] != index:
                    continue
                for answer, expected, what in wrong_answers:
                    if (gpu_only or "(GPU)" in what) and not gpu:
                        rows.append((name, what, expected, "not played: no GPU here", "-"))
                        continue
                    trial = nbformat.v4.new_code_cell(_typed_in(typed[name], answer))
                    client.execute_cell(trial, index)
                    failed, shown = _shown(trial.outputs)
                    good = _verdict(expected, failed, shown)
                    failures += not good
                    rows.append((name, what, expected, shown, "ok" if good else "WRONG"))
            client.execute_cell(cell, index)
            failed, shown = _shown(cell.outputs)
            if index in found.values():
                name = next(n for n, i in found.items() if i == index)
                good = not failed and ("\N{CHECK MARK}" in shown or "not checked here" in shown)
                failures += not good
                rows.append((name, "the solution, after the wrong ones", "PASS", shown, "ok" if good else "WRONG"))
            elif failed:
                print(f"cell {index} failed:\n{shown[-2000:]}", file=sys.stderr)
    gpu_name = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                              text=True).stdout.strip() if gpu else "none (CPU only)"
    lines = ["# The CuPy tutorial's exercises played with wrong answers (tools/gpu-host-wrong-answers.py)", "",
             f"date: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; commit: {os.environ.get('COMMIT', 'unknown')}; "
             f"GPU: {gpu_name}; {time.time() - started:.0f} s; handled wrong: {failures}", "",
             "| exercise | answer | expected | shown | verdict |", "|---|---|---|---|---|"]
    for name, what, expected, shown, verdict in rows:
        cell_text = shown.replace("|", "\\|").replace("\n", " / ")
        lines.append(f"| {name} | {what} | `{expected}` | {cell_text[:400]} | {verdict} |")
    report = out / "wrong-answers-cupy.md"
    report.write_text("\n".join(lines) + "\n")
    (out / "wrong-answers-cupy.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False))
    print(f"{len(rows)} answers, {failures} handled wrong: {report}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
