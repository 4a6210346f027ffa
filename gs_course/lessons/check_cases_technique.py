"""The harness's cases from the fourteenth independent playtest and others of the same kinds: the technique each exercise teaches checked where the values are right (jit where it is asked, integer-array indexing, a task's steps from its inputs).
`gs_course.lessons.check_cases` puts them in its `CASES`; one line each, as there.
"""

from __future__ import annotations

from .check_answers import FAIL, NOT_CHECKED, PASS, Case  # noqa: F401 (the verdicts the cases use)

TECHNIQUE_14: list[Case] = [
]
