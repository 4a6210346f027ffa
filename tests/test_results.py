"""The figures the documents quote are rendered from the current result files: a figure typed by
hand, or a result file rerun without rendering, fails here."""

import json

from gs_course.delivery import documents as results
from gs_course.measurement import records
from gs_course import paths


def test_every_document_agrees_with_its_result_files():
    assert results.stale() == [], "run: python -m gs_course.delivery.documents"


def test_a_block_is_rendered_again_from_its_file():
    text = "intro\n<!-- results: transfer-summary h200 -->\nhand-typed 7.9 GB/s\n<!-- /results -->\nafter\n"
    rendered = results.render(text)
    assert "7.9 GB/s" not in rendered and rendered.startswith("intro\n<!-- results: transfer-summary h200 -->\n")
    assert rendered.endswith("<!-- /results -->\nafter\n") and results.render(rendered) == rendered
    recorded = records.load(paths.ROOT / "results/h200/transfer.json", "transfer", 2)
    pinned = recorded["copies"][-1]  # the largest copy, device to host, pinned
    assert f"{pinned['bytes'] / pinned['median_s'] / 1e9:.1f} GB/s pinned |" in rendered


def test_a_notebook_markdown_block_is_rendered_too(tmp_path):
    cell = {"cell_type": "markdown", "metadata": {}, "source": [
        "On the H200:\n", "<!-- results: transfer-summary h200 -->\n", "old\n", "<!-- /results -->\n"]}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "9_x.ipynb").write_text(json.dumps(notebook))
    assert results.stale(tmp_path) == ["solutions/9_x.ipynb"]
    rendered = json.loads(results._notebook_render(json.dumps(notebook)))
    assert "old\n" not in rendered["cells"][0]["source"] and "| | measured |\n" in rendered["cells"][0]["source"]
