"""The harness's cases from the fourteenth independent playtest and others of the same kinds: Python loops where one array operation is asked (a loop of one-line bodies over rows or columns, a convolution a row, map over the images, scalar indexings one by one), and the hints of slices that miss a whole row or column.
`gs_course.lessons.check_cases` puts them in its `CASES`; one line each, as there.
"""

from __future__ import annotations

from .check_answers import FAIL, NOT_CHECKED, PASS, Case  # noqa: F401 (the verdicts the cases use)

LOOPS_14: list[Case] = [
]
