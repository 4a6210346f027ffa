"""Shared fixtures: which backends run here, and the rule that a required backend may not skip.

CI sets GS_COURSE_REQUIRE_BACKENDS=numpy,jax,cupynumeric: there a missing cuPyNumeric is a failure,
not a silent skip. The GPU host adds cupy.
"""

import os

import pytest

from gs_course import backends

REQUIRED = {name for name in os.environ.get("GS_COURSE_REQUIRE_BACKENDS", "").split(",") if name}


def _usable(name: str) -> backends.Probe:
    found = backends.probe(name)
    if found.ok:
        return found
    if name in REQUIRED:
        pytest.fail(f"backend {name} is required here (GS_COURSE_REQUIRE_BACKENDS) but {found.reason}")
    if name == "cupy":
        pytest.skip(f"no GPU: {found.reason}")
    pytest.skip(f"{name} not available: {found.reason}")
    return found


@pytest.fixture(params=backends.BACKENDS)
def backend(request) -> str:
    """Each backend in turn; skipped (or failed, where required) when it cannot run here."""
    _usable(request.param)
    return request.param

