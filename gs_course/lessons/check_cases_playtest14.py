"""The cases of the fourteenth independent playtest and later ones: one table a kind of mistake or a notebook (each its own module)."""

from __future__ import annotations

from .check_cases_errors import ERRORS_14
from .check_cases_loops import LOOPS_14
from .check_cases_p16_cupy import PLAYTEST_16_CUPY
from .check_cases_p16_jax import PLAYTEST_16_JAX
from .check_cases_p16_review import PLAYTEST_16_REVIEW
from .check_cases_p16_synthesis import PLAYTEST_16_SYNTHESIS
from .check_cases_review14 import REVIEW_14
from .check_cases_technique import TECHNIQUE_14

PLAYTEST_14 = [*LOOPS_14, *ERRORS_14, *TECHNIQUE_14, *REVIEW_14, *PLAYTEST_16_CUPY, *PLAYTEST_16_JAX, *PLAYTEST_16_SYNTHESIS,
               *PLAYTEST_16_REVIEW]
