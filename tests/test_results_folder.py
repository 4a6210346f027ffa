"""results/ holds records: every JSON file a record of the package's writer (kind, schema, provenance
with its commit), no table or figure committed beside the record it is rendered from, logs under
logs/ (gs_course.measurement.records; results/README.md)."""

import json

from gs_course import paths

RESULTS = paths.ROOT / "results"


def test_every_json_file_is_a_record_with_its_commit():
    found = sorted(RESULTS.rglob("*.json"))
    assert found
    for path in found:
        record = json.loads(path.read_text())
        assert isinstance(record, dict) and {"kind", "schema", "provenance"} <= record.keys(), path
        assert record["provenance"].get("commit"), f"{path}: no commit in its provenance"


def test_no_table_or_figure_sits_beside_its_record():
    derived = [path for path in RESULTS.rglob("*") if path.suffix in (".md", ".png")
               and path.with_suffix(".json").exists()]
    assert derived == [], "render them on demand: python -m gs_course.delivery.documents --show/--figure"


def test_logs_are_under_logs():
    stray = [path for path in RESULTS.rglob("*.txt") if path.parent.name != "logs"]
    assert stray == []
