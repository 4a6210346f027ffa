"""The module paths of the course before its layers (engine, measurement, lessons, delivery), kept
for one school so that a notebook handed out before still runs: `from gs_course import check`,
`from gs_course.measure import FULL`, `gs_course.backends.cupy_backend.VARIANTS`.

Nothing in the package uses these names; new code imports the modules where they are now. Delete
this module (and its two lines in `gs_course/__init__.py`) once no such notebook is in use.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

#: An old module of gs_course -> the module(s) its names are in now (in the order they are looked up).
MODULES = {
    "analysis": ("gs_course.lessons.analysis",),
    "analysis_check": ("gs_course.lessons.analysis_check",),
    "bench": ("gs_course.measurement.bench",),
    "check": ("gs_course.lessons.checkers",),
    "classroom": ("gs_course.delivery.classroom",),
    "course": ("gs_course.sizing",),
    "cuda_core_route": ("gs_course.lessons.cuda_core_route",),
    "cupy_check": ("gs_course.lessons.cupy_check",),
    "handout": ("gs_course.delivery.handout",),
    "instructor": ("gs_course.delivery.instructor",),
    "kernels": ("gs_course.delivery.jupyter_kernels",),
    "measure": ("gs_course.workload", "gs_course.paths", "gs_course.measurement.timer",
                "gs_course.measurement.records"),
    "memory_kinds": ("gs_course.measurement.memory_kinds",),
    "notebooks": ("gs_course.lessons.notebooks",),
    "results": ("gs_course.delivery.documents", "gs_course.delivery.lesson_figures"),
    "scale": ("gs_course.measurement.scale",),
    "transfer": ("gs_course.measurement.transfer",),
    "view": ("gs_course.lessons.view",),
}

#: Names that left a module which is still there -> where they are now.
MOVED_NAMES = {
    "gs_course.backends.cupy_backend": {
        name: "gs_course.lessons.cupy_variants"
        for name in ("VARIANTS", "step_time_us", "launch_transposed", "launch_tiled", "launch_constant", "tiled_kernel")
    },
    "gs_course.devices": {
        name: "gs_course.sizing"
        for name in ("default_legate_config", "default_jax_memory_fraction", "gpu_legate_config",
                     "GPU_LEGATE_CONFIG", "CPU_LEGATE_CONFIG")
    },
}


def _look_up(name: str, where: tuple[str, ...], asked: str):
    for module_name in where:
        module = importlib.import_module(module_name)
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"{asked} has no {name!r} (it moved: see gs_course/_aliases.py)")


def old_module(name: str) -> types.ModuleType:
    """The module that answers for gs_course.`name` of before: the new module itself where one took
    its place, else a module whose names are looked up in the new ones."""
    where = MODULES[name]
    if len(where) == 1:
        return importlib.import_module(where[0])
    alias = types.ModuleType(f"gs_course.{name}", f"The names of gs_course.{name} of before, now in {', '.join(where)}.")
    alias.__getattr__ = lambda attribute: _look_up(attribute, where, f"gs_course.{name}")
    return alias


class _OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`import gs_course.measurement.records` and the like; and the names that left a module still there."""

    def find_spec(self, fullname, path=None, target=None):
        package, _, leaf = fullname.rpartition(".")
        if package == "gs_course" and leaf in MODULES:
            return importlib.util.spec_from_loader(fullname, self)
        if fullname in MOVED_NAMES:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is not None:
                spec.loader = _WithMovedNames(spec.loader, MOVED_NAMES[fullname])
            return spec
        return None

    def create_module(self, spec):
        return old_module(spec.name.rpartition(".")[2])

    def exec_module(self, module):
        pass


class _WithMovedNames(importlib.abc.Loader):
    """The module's own loader, then a module `__getattr__` (PEP 562) for the names that left it."""

    def __init__(self, loader, moved: dict[str, str]):
        self.loader, self.moved = loader, moved

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)

        def moved_name(name):
            if name not in self.moved:
                raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
            return _look_up(name, (self.moved[name],), module.__name__)

        module.__getattr__ = moved_name


def install() -> None:
    if not any(isinstance(finder, _OldPaths) for finder in sys.meta_path):
        sys.meta_path.insert(0, _OldPaths())
