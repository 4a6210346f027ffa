"""Which backends and formulations run here, and the rule that a required backend may not skip.

CI sets GS_COURSE_REQUIRE_BACKENDS=numpy,jax,cupynumeric: there a missing cuPyNumeric is a failure,
not a silent skip. The GPU host adds cupy.

A test that takes `backend` runs once per backend (its default formulation); one that takes
`case` runs once per (backend, formulation) pair.
"""

import os

import pytest

from gs_course import backends

REQUIRED = {name for name in os.environ.get("GS_COURSE_REQUIRE_BACKENDS", "").split(",") if name}


def _unusable(name: str):
    """None where `name` runs here, else the mark that skips its tests."""
    found = backends.probe(name)
    if found.ok:
        return None
    return pytest.mark.skip(reason=f"{'no GPU' if name == 'cupy' else name + ' not available'}: {found.reason}")


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames:
        params = []
        for name in backends.BACKENDS:
            mark = _unusable(name)
            params.append(pytest.param(name, id=name, marks=[mark] if mark else []))
        metafunc.parametrize("backend", params)
    if "case" in metafunc.fixturenames:
        params = []
        for name in backends.BACKENDS:
            mark = _unusable(name)
            if mark:
                params.append(pytest.param((name, None), id=name, marks=[mark]))
                continue
            for formulation in backends.load(name).FORMULATIONS:
                params.append(pytest.param((name, formulation), id=f"{name}-{formulation}"))
        metafunc.parametrize("case", params)


def pytest_collection_modifyitems(config, items):
    """A required backend that cannot run fails the session instead of skipping."""
    missing = [name for name in sorted(REQUIRED) if not backends.probe(name).ok]
    if missing:
        reasons = "; ".join(f"{name}: {backends.probe(name).reason}" for name in missing)
        raise pytest.UsageError(f"required backends cannot run here (GS_COURSE_REQUIRE_BACKENDS): {reasons}")
