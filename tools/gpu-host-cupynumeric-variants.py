"""Which NumPy habit makes cuPyNumeric slow: one step of the school's model written seven ways,
each timed on its own (Legate reads LEGATE_CONFIG once: run it under the settings to measure),
each twice: with the arrays made from NumPy's by `cupynumeric.asarray` (attached: Legate writes
every update through to the NumPy buffer), and by `cupynumeric_backend.to_legate` (Legate's own).

The ways differ in one thing at a time:
- how the window sum is made: nine slices in one expression, or a copy then eight `+=`;
- how the new state is stored: assigned into the padded array's interior (`P[1:-1, 1:-1] = new`),
  or added in place into that view (`u += dt * du`, u a view of P);
- `convolve` on a view of the padded array or on an unpadded array;
- the tutorial's step: unpadded arrays, padded anew (`cnp.pad`) for each Laplacian.
`in-place sum + in-place view` was gs_course's first `slices`, `convolve on a view + in-place
view` its first `convolve`; `expression + assign` and `convolve, fresh` are the backend's now
(with arrays of Legate's own).

Usage (from the repository root, Legate settings in LEGATE_CONFIG):
    python tools/gpu-host-cupynumeric-variants.py ROWS COLS STEPS
Prints one line per way: ms a step (median of 3 timings of STEPS steps, each ended by a fence).
"""

import sys
import time

import numpy as np

from gs_course.backends import cupynumeric_backend as backend
import cupynumeric as cn  # noqa: E402
from gs_course.model import initial_state, window_counts
from gs_course.parameters import Parameters

P = Parameters(dt=0.9)


def ways(rows: int, cols: int, make) -> dict:
    u0, v0 = initial_state(rows, cols)
    counts = make(window_counts(rows, cols))
    window = cn.ones((3, 3), dtype=np.float32)
    padded = [make(np.pad(a, 1)) for a in (u0, v0)]
    fresh = [make(u0), make(v0)]
    inner = (slice(1, -1), slice(1, -1))

    def sum_expression(a):
        shifted = [a[i : i + rows, j : j + cols] for i in range(3) for j in range(3)]
        return sum(shifted[1:], start=shifted[0]) - counts * a[inner]

    def sum_in_place(a):
        out = a[:rows, :cols].copy()
        for i, j in [(i, j) for i in range(3) for j in range(3)][1:]:
            out += a[i : i + rows, j : j + cols]
        out -= counts * a[inner]
        return out

    def convolve_view(a):
        return cn.convolve(a[inner], window, mode="same", method="direct") - counts * a[inner]

    def assign(laplacian):
        def step():
            u_new, v_new = backend.updated(padded[0][inner], padded[1][inner],
                                           laplacian(padded[0]), laplacian(padded[1]), P)
            padded[0][inner] = u_new
            padded[1][inner] = v_new
        return step

    def in_place_view(laplacian):
        def step():
            u, v = padded[0][inner], padded[1][inner]
            uvv = u * v * v
            du = P.du * laplacian(padded[0]) - uvv + P.feed * (1 - u)
            dv = P.dv * laplacian(padded[1]) + uvv - (P.feed + P.kill) * v
            u += P.dt * du
            v += P.dt * dv
        return step

    def pad_each_step():
        u, v = fresh
        fresh[:] = backend.updated(u, v, sum_expression(cn.pad(u, 1)), sum_expression(cn.pad(v, 1)), P)

    def convolve_fresh():
        u, v = fresh
        lap = [cn.convolve(a, window, mode="same", method="direct") - counts * a for a in (u, v)]
        fresh[:] = backend.updated(u, v, *lap, P)

    return {
        "expression + assign (slices now)": assign(sum_expression),
        "expression + in-place view": in_place_view(sum_expression),
        "in-place sum + assign": assign(sum_in_place),
        "in-place sum + in-place view (slices before)": in_place_view(sum_in_place),
        "padded anew each step, fresh (the tutorial's step)": pad_each_step,
        "convolve on a view + in-place view (convolve before)": in_place_view(convolve_view),
        "convolve, fresh (convolve now)": convolve_fresh,
    }


def ms_a_step(step, steps: int) -> list[float]:
    """Three timings of `steps` calls, after three untimed ones, each ended by a fence."""
    for _ in range(3):
        step()
    backend._wait_for_legate()
    times = []
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        backend._wait_for_legate()
        times.append((time.perf_counter() - start) / steps * 1e3)
    return times


def attached(host):
    return cn.asarray(np.array(host, np.float32))


def main() -> None:
    rows, cols, steps = (int(x) for x in sys.argv[1:4])
    print(f"{rows} x {cols}, {steps} steps a timing, LEGATE_CONFIG={backend.os.environ['LEGATE_CONFIG']!r}")
    for label, make in (("attached (cupynumeric.asarray)", attached), ("Legate's own (to_legate)", backend.to_legate)):
        print(f"arrays {label}:")
        for name, step in ways(rows, cols, make).items():
            times = ms_a_step(step, steps)
            print(f"  {name:55} {np.median(times):8.3f} ms a step ({min(times):.3f}-{max(times):.3f})", flush=True)


if __name__ == "__main__":
    main()
