"""The JSON files of the measurements (`gs-course transfer`, `gs-course bench`): written, and read
back only when their kind and schema are the ones this code draws tables and charts from."""

from __future__ import annotations

import json
from pathlib import Path


def save(results: dict, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(json.dumps(results, indent=1) + "\n")
    return path


def load(path: str | Path, kind: str, schema: int) -> dict:
    results = json.loads(Path(path).read_text())
    if results.get("schema") != schema:
        raise ValueError(f"{path} is not a gs-course {kind} result (schema {schema})")
    return results
