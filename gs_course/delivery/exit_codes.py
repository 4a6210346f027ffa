"""How a `gs-course` command ends: its exit code, and the one line a user can act on.

Bad input or an unusable backend exits 2, a failure during the run 1, an interrupted run 130.
"""

from __future__ import annotations

import sys

from .. import backends, distributed
from ..model import GridError
from ..output import OutputError

EXIT_USAGE, EXIT_FAILURE, EXIT_INTERRUPTED = 2, 1, 130


class UsageError(Exception):
    """Bad input: one line to the user, exit code 2."""


def failure(err: Exception) -> int | None:
    """The exit code of an error the user can act on, said in one line (None for any other)."""
    if isinstance(err, (UsageError, GridError, backends.BackendError, OutputError, distributed.DistributedError)):
        print(f"gs-course: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    if "out of memory" in str(err).lower() or "resource_exhausted" in str(err).lower():
        print(f"gs-course: error: the device ran out of memory ({type(err).__name__}); try a smaller "
              "grid with -r and -c, or free the GPU (nvidia-smi shows who holds it)", file=sys.stderr)
        return EXIT_FAILURE
    return None
