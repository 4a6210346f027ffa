"""The harness's cases from the sixteenth independent playtest, the synthesis notebook: each answer, its verdict and the hint it must get.
`gs_course.lessons.check_cases` puts them in its `CASES` (through check_cases_playtest14); one line each, as there.
"""

from __future__ import annotations

from .check_answers import FAIL, NOT_CHECKED, PASS, Case  # noqa: F401 (the verdicts the cases use)

PLAYTEST_16_SYNTHESIS: list[Case] = [
]
