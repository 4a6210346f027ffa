"""The student's path in a real browser: JupyterLab started by `./course lab`, the first student
notebook opened in headless Chromium, run up to its first exercise, pictures drawn, a wrong answer
refused with the checker's hint, the right one accepted, and the explorer answering a slider.

Drives Debian's chromium (`apt-get install chromium`) through Playwright, with no browser
download. Skipped where either is missing, unless GS_COURSE_REQUIRE_BROWSER=1 (CI sets it).
The notebooks are copied first: the server works on the copies, so the repository stays as it
was. Screenshots are kept in the test's temporary folder (pytest prints where).
"""

import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "3_Python_GPU_CuPy.ipynb"  # the first session taught
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
REQUIRED = os.environ.get("GS_COURSE_REQUIRE_BROWSER") == "1"

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(600)]


def _missing() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return "playwright is not installed (the test extra)"
    if not Path(CHROMIUM).is_file():
        return "no chromium (apt-get install chromium)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _api(base: str, token: str, path: str, method: str = "GET"):
    request = urllib.request.Request(f"{base}{path}", method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        body = answer.read()
    return json.loads(body) if body else None


def _processes_using(path: Path) -> list[int]:
    """Pids whose command line names `path` (the server, its kernels)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if str(path) in (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(int(proc.name))
            except OSError:
                pass
    return found


@pytest.fixture
def lab(tmp_path):
    """JupyterLab as `./course lab` starts it (a free local port, a token), on copies of the
    notebooks; shut down afterwards, kernels first, and checked gone."""
    why = _missing()
    if why:
        if REQUIRED:
            pytest.fail(f"GS_COURSE_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(why)
    # The course script in a copy of the repository's layout (its environment linked, not copied),
    # so that the notebooks the browser runs and saves are copies.
    stage = tmp_path / "course"
    stage.mkdir()
    for name in ("course", "pyproject.toml"):
        shutil.copy2(ROOT / name, stage / name)
    shutil.copytree(ROOT / "constraints", stage / "constraints")  # ./course installs the tested versions
    for name in (".venv", ".cache"):
        if (ROOT / name).exists():
            (stage / name).symlink_to(ROOT / name)
    notebooks = stage / "notebooks"
    shutil.copytree(ROOT / "notebooks", notebooks)
    runtime = tmp_path / "runtime"
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime), "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "ws")}
    log = open(tmp_path / "lab.log", "w")
    server = subprocess.Popen(
        [str(stage / "course"), "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}"],
        stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                _api(base, token, "/api/status")
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start: {(tmp_path / 'lab.log').read_text()[-2000:]}")
                time.sleep(1)
        yield base, token, tmp_path
    finally:
        try:
            for kernel in _api(base, token, "/api/kernels"):
                _api(base, token, f"/api/kernels/{kernel['id']}", "DELETE")
            _api(base, token, "/api/shutdown", "POST")
            server.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGTERM)  # the process group this fixture started
                server.wait(timeout=30)
        log.close()
        deadline = time.monotonic() + 30
        while _processes_using(runtime) and time.monotonic() < deadline:
            time.sleep(1)
        assert not _processes_using(runtime), "a kernel outlived the server"


def _exercise_index(path: Path, after: int = -1) -> int:
    cells = json.loads(path.read_text())["cells"]
    return next(i for i, cell in enumerate(cells) if i > after and "Your turn" in "".join(cell["source"]))


def _answer(page, cell, source: str) -> None:
    """Replace the cell's code with `source` and run it (inserted, not typed: no auto-indent)."""
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(source)
    page.keyboard.press("Shift+Enter")


def test_the_first_notebook_in_a_browser(lab):
    from playwright.sync_api import expect, sync_playwright

    base, token, folder = lab
    notebook = folder / "course" / "notebooks" / NOTEBOOK
    exercise = _exercise_index(notebook)
    source = "".join(json.loads(notebook.read_text())["cells"][exercise]["source"])
    turn = next(line for line in source.splitlines() if "Your turn" in line)
    shots = folder / "screenshots"
    shots.mkdir()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{base}/lab/tree/{NOTEBOOK}?token={token}")
            cells = page.locator(".jp-NotebookPanel .jp-Cell")
            expect(cells.nth(exercise)).to_be_visible(timeout=120_000)
            expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")).to_have_count(1, timeout=120_000)

            # Run every cell above the first exercise, as a student does with Shift+Enter.
            cells.nth(0).locator(".jp-InputPrompt").click()
            for _ in range(exercise):
                page.keyboard.press("Shift+Enter")
            last_code = max(i for i in range(exercise) if "jp-CodeCell" in (cells.nth(i).get_attribute("class") or ""))
            expect(cells.nth(last_code).locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\d+\]"), timeout=300_000)

            images = page.locator(".jp-OutputArea-output img")
            expect(images.first).to_be_visible(timeout=60_000)
            drawn = images.evaluate_all("all => all.map(img => img.complete && img.naturalWidth > 0)")
            assert drawn and all(drawn), f"images not drawn: {drawn}"
            errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
            assert not errors.count(), errors.all_inner_texts()
            page.screenshot(path=shots / "1-run-to-the-first-exercise.png")

            # The explorer answers its k slider (typed into the slider's readout).
            explorer = page.locator(".jp-OutputArea-output .widget-image").first
            explorer.scroll_into_view_if_needed()
            before = explorer.get_attribute("src")
            k = page.locator(".widget-hslider", has=page.get_by_text("k", exact=True)).first
            k.locator(".widget-readout").click()
            page.keyboard.press("Control+A")
            page.keyboard.insert_text("0.0500")
            page.keyboard.press("Enter")
            expect(explorer).not_to_have_attribute("src", before, timeout=60_000)
            # Play runs frames while the kernel still takes the controls' changes; pause stops them.
            app = explorer.locator("xpath=ancestor::div[contains(@class, 'jp-OutputArea-output')]")
            app.get_by_role("button", name="play").click()
            expect(app.get_by_text(re.compile(r"step \d{1,3},\d{3}"))).to_be_visible(timeout=120_000)
            app.get_by_role("button", name="pause").click()
            status = app.get_by_text(re.compile(r"frames/s"))
            seen = [status.inner_text()]
            for _ in range(20):  # the images already sent still arrive for a moment
                time.sleep(1)
                seen.append(status.inner_text())
                if seen[-1] == seen[-2]:
                    break
            assert seen[-1] == seen[-2], f"still running after pause: {seen}"
            # A click on the image drops a seed there (ipyevents): the picture changes, paused.
            before = explorer.get_attribute("src")
            explorer.click(position={"x": 20, "y": 20})
            expect(explorer).not_to_have_attribute("src", before, timeout=30_000)
            app.screenshot(path=shots / "explorer.png")

            # The exercise: a wrong answer gets the checker's hint, the right one its tick.
            cell = cells.nth(exercise)
            cell.scroll_into_view_if_needed()
            indent = turn[: len(turn) - len(turn.lstrip())]
            window_sum = "sum(xp.pad(a, 1)[i : i + rows, j : j + cols] for i in range(3) for j in range(3))"
            _answer(page, cell, source.replace(turn, f"{indent}return {window_sum}"))  # the centre not taken off
            expect(cell.locator(".jp-OutputArea-output")).to_contain_text("window sum", timeout=120_000)
            page.screenshot(path=shots / "2-wrong-answer.png")
            _answer(page, cell, source.replace(turn, f"{indent}return {window_sum} - counts * a"))
            expect(cell.locator(".jp-OutputArea-output")).to_contain_text("\N{CHECK MARK}", timeout=120_000)
            expect(cell.locator(".jp-OutputArea-output")).not_to_contain_text("window sum")
            page.screenshot(path=shots / "3-right-answer.png")

            # A stuck student replaces the next exercise's whole cell with %catch_up: typed with another
            # exercise's number, the cell's id (JupyterLab sends it; the course's notebooks keep the solved
            # ones') tells whose cell it is; with its own, the answer comes into the cell.
            following = _exercise_index(notebook, after=exercise)
            cell = cells.nth(following)
            cell.scroll_into_view_if_needed()
            _answer(page, cell, "%catch_up 1")
            expect(cell.locator(".jp-OutputArea-output")).to_contain_text("This cell is exercise 2's", timeout=60_000)
            _answer(page, cell, "%catch_up 2")
            expect(cell.locator(".jp-OutputArea-output")).to_contain_text("Exercise 2's answer is now in this cell",
                                                                          timeout=60_000)
            expect(cell.locator(".cm-content")).to_contain_text("check.step(", timeout=30_000)
            page.screenshot(path=shots / "4-catch-up.png")
        finally:
            browser.close()
    print(f"screenshots in {shots}")
