"""The fourteenth independent playtest's cases, one table a kind of mistake (each its own module)."""

from __future__ import annotations

from .check_cases_errors import ERRORS_14
from .check_cases_loops import LOOPS_14
from .check_cases_review14 import REVIEW_14
from .check_cases_technique import TECHNIQUE_14

PLAYTEST_14 = [*LOOPS_14, *ERRORS_14, *TECHNIQUE_14, *REVIEW_14]
