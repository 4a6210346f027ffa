"""The table and the figure of a record, rendered on demand: results/ keeps the records alone
(`python -m gs_course.delivery.documents --show RECORD`, `--figure RECORD IMAGE`)."""

from __future__ import annotations

import json
from pathlib import Path

from ..measurement import bench, records, scale, transfer
from . import classroom, instructor

#: kind: (load, its Markdown table, its figure or None)
VIEWS = {
    bench.KIND: (bench.load, bench.markdown, bench.figure),
    transfer.KIND: (transfer.load, transfer.table, transfer.figure),
    scale.KIND: (lambda path: records.load(path, scale.KIND), scale.table, scale.figure),
    classroom.KIND: (classroom.load, classroom.markdown, None),
    instructor.KIND: (instructor.load, instructor.markdown, None),
}


def _view(path: str | Path) -> tuple[dict, object, object]:
    """(record, table, figure) of the record at `path`; ResultError for a file of no kind shown."""
    try:
        kind = json.loads(Path(path).read_text()).get("kind")
    except (OSError, ValueError, AttributeError):
        kind = None
    if kind not in VIEWS:
        raise records.ResultError(f"{path}: not a record this renders (records of kind {', '.join(VIEWS)})")
    load, table, figure = VIEWS[kind]
    return load(path), table, figure


def show(path: str | Path) -> str:
    """The Markdown table of the record at `path`."""
    record, table, _ = _view(path)
    return table(record)


def save_figure(path: str | Path, image: str | Path) -> Path:
    """The figure of the record at `path`, saved as `image` (.png, .svg, .pdf)."""
    record, _, figure = _view(path)
    if figure is None:
        raise records.ResultError(f"{path}: a {record['kind']} record has a table (--show), no figure")
    figure(record).savefig(image, dpi=120)
    return Path(image)
