"""The harness's cases from the fourteenth independent playtest and others of the same kinds: a student's own errors and wrong signatures told in one line (no checker's traceback), and kernels that do not compile told so (not as another mistake).
`gs_course.lessons.check_cases` puts them in its `CASES`; one line each, as there.
"""

from __future__ import annotations

from .check_answers import FAIL, NOT_CHECKED, PASS, Case  # noqa: F401 (the verdicts the cases use)

ERRORS_14: list[Case] = [
]
