"""The harness's cases from the fourteenth independent playtest and others of the same kinds: Python loops where one array operation is asked (a loop of one-line bodies over rows or columns, a convolution a row, map over the images, scalar indexings one by one), and the hints of slices that miss a whole row or column.
`gs_course.lessons.check_cases` puts them in its `CASES`; one line each, as there.
"""

from __future__ import annotations

from .check_answers import FAIL, NOT_CHECKED, PASS, Case  # noqa: F401 (the verdicts the cases use)

#: The reference Laplacian's window sum, which the cases below replace.
_SUM = "window_sum = sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))\n    return window_sum - counts * a"
#: Playtest 14's loops over the rows (three column sums a row) and over the columns, one line a turn ({xp}: the library).
_ROW_SUMS = ("out = -counts * a\n    for r in range(rows):\n        out[r, :] = out[r, :] + padded[r:r + 3, :].sum(axis=0)[0:cols] + "
             "padded[r:r + 3, 1:cols + 1].sum(axis=0) + padded[r:r + 3, 2:cols + 2].sum(axis=0)\n    return out")
_COLUMNS = ("out = {xp}.empty_like(a)\n    for c in range(cols):\n        out[:, c] = padded[0:rows, c:c + 3].sum(axis=1) + "
            "padded[1:rows + 1, c:c + 3].sum(axis=1) + padded[2:rows + 2, c:c + 3].sum(axis=1) - counts[:, c] * a[:, c]\n    return out")
#: A row's window sum of the three padded rows around it (a generator over the nine offsets, inside a loop over the rows).
_ROW_GENERATOR = ("out = {xp}.empty_like(a)\n    for r in range(rows):\n        out[r] = sum(padded[r + i, j : j + cols] for i in range(3) "
                  "for j in range(3)) - counts[r] * a[r]\n    return out")
#: The columns' window sums as a list, stacked.
_COLUMN_LIST = ("return {xp}.stack([padded[:, c : c + 3].sum(axis=1)[0:rows] + padded[:, c : c + 3].sum(axis=1)[1:rows + 1] + "
                "padded[:, c : c + 3].sum(axis=1)[2:rows + 2] for c in range(cols)], axis=1) - counts * a")
#: Two rows a turn, the nine slices written out (the grid padded by one more row below, for the last turn).
_TWO_ROWS = ("padded = {xp}.pad(a, 1)", "padded = {xp}.pad(a, ((1, 2), (1, 1)))", _SUM,
             "out = {xp}.empty((rows + 1, cols), dtype=a.dtype)\n    for r in range(0, rows, 2):\n        out[r : r + 2] = "
             + " + ".join(f"padded[r + {i} : r + {i + 2}, {j} : cols + {j}]" for i in range(3) for j in range(3))
             + "\n    return out[:rows] - counts * a")
#: The rows through map and a lambda.
_MAPPED = ("return {xp}.stack(list(map(lambda r: padded[r : r + 3, 0:cols].sum(axis=0) + padded[r : r + 3, 1:cols + 1].sum(axis=0) "
           "+ padded[r : r + 3, 2:cols + 2].sum(axis=0), range(rows)))) - counts * a")
#: Right: the nine offsets in a double loop, accumulated.
_OFFSETS = ("s = {xp}.zeros_like(a)\n    for i in range(3):\n        for j in range(3):\n            s = s + padded[i:i + rows, j:j + cols]\n"
            "    return s - counts * a")
#: Right: the nine slices written out.
_NINE_WRITTEN = ("return (padded[:-2, :-2] + padded[:-2, 1:-1] + padded[:-2, 2:] + padded[1:-1, :-2] + padded[1:-1, 1:-1] "
                 "+ padded[1:-1, 2:] + padded[2:, :-2] + padded[2:, 1:-1] + padded[2:, 2:]) - counts * a")
#: Right: a padded array of zeros written by hand, the three row offsets each summed over its three columns.
_BY_HAND = ("p = {xp}.zeros((rows + 2, cols + 2), dtype=a.dtype)\n    p[1:-1, 1:-1] = a\n    rows_summed = p[:-2] + p[1:-1] + p[2:]\n"
            "    return rows_summed[:, :-2] + rows_summed[:, 1:-1] + rows_summed[:, 2:] - counts * a")
#: Right: rolls, the wrapped neighbours taken back out through a rolled mask of ones.
_ROLLED = ("inside = {xp}.pad({xp}.ones_like(a), 1)\n    big = {xp}.pad(a, 1)\n"
           "    s = sum({xp}.roll(big, (i, j), axis=(0, 1)) * {xp}.roll(inside, (i, j), axis=(0, 1)) for i in (-1, 0, 1) for j in (-1, 0, 1))\n"
           "    return s[1:-1, 1:-1] - counts * a")

#: Right: the counts made by a loop over the rows, once a grid (cached).
_CACHED_ROWS = ("@functools.cache\ndef row_counts(rows, cols):\n    c = xp.empty((rows, cols), dtype=xp.float32)\n"
                "    for r in range(rows):\n        c[r] = xp.asarray(model.window_counts(rows, cols)[r])\n    return c\n\n"
                "def laplacian(a):")

#: Slices that leave out a whole row or column of the sum (the last row: playtest 14's).
_SHORT = ("s = xp.zeros_like(a)\n    for i in range(3):\n        for j in range(3):\n            s[{into}] += padded[{rows}, {cols}]\n"
          "    return s - counts * a")


def _short(into: str, rows: str = "i:i + rows", cols: str = "j:j + cols") -> tuple[str, str]:
    return _SUM, _SHORT.format(into=into, rows=rows, cols=cols)


#: The convolution exercise's reference line, and loops of 1-D convolutions in its place.
_CONVOLVED = 'return cnp.convolve(a, window, mode="same") - counts * a'
_ROW_CONVOLUTIONS = ('rows, cols = a.shape\n    w = cnp.ones(3, dtype=np.float32)\n    s = cnp.zeros_like(a)\n'
                     '    padded = cnp.pad(a, ((1, 1), (0, 0)))\n    for r in range(rows):\n        s[r] = cnp.convolve(padded[r], w, mode="same") + '
                     'cnp.convolve(padded[r + 1], w, mode="same") + cnp.convolve(padded[r + 2], w, mode="same")\n    return s - counts * a')
_COLUMN_CONVOLUTIONS = ('rows, cols = a.shape\n    w = cnp.ones(3, dtype=np.float32)\n    s = cnp.zeros_like(a)\n'
                        '    padded = cnp.pad(a, ((0, 0), (1, 1)))\n    for c in range(cols):\n        s[:, c] = cnp.convolve(padded[:, c], w, mode="same") + '
                        'cnp.convolve(padded[:, c + 1], w, mode="same") + cnp.convolve(padded[:, c + 2], w, mode="same")\n    return s - counts * a')
_STACKED_CONVOLUTIONS = ('w = cnp.ones(3, dtype=np.float32)\n    padded = cnp.pad(a, ((1, 1), (0, 0)))\n'
                         '    return cnp.stack([sum(cnp.convolve(padded[r + i], w, mode="same") for i in range(3)) for r in range(a.shape[0])]) - counts * a')

#: A Laplacian put before the step (its loop is the step's).
_BEFORE_STEP = "def laplacian(a):\n    rows, cols = a.shape\n    counts = window_counts(rows, cols)\n    padded = cnp.pad(a, 1)\n    {body}\n\ndef step(u, v, p):"
_ROW_UPDATE = ("return u + p.dt * du, v + p.dt * dv",
               "un, vn = cnp.empty_like(u), cnp.empty_like(v)\n    for r in range(u.shape[0]):\n"
               "        un[r], vn[r] = u[r] + p.dt * du[r], v[r] + p.dt * dv[r]\n    return un, vn")

_ROWS, _COLS = "runs a Python loop over the grid's rows \\(line \\d+ of your cell, in ", "runs a Python loop over the grid's columns \\(line \\d+ of your cell, in "

LOOPS_14: list[Case] = [
    Case("cupy 1", (_SUM, _ROW_SUMS), FAIL, _ROWS + "laplacian, .for r in range.*nine slices", name="playtest 14 F1: a loop over the rows, one line a row"),
    Case("cupy 1", (_SUM, _COLUMNS.format(xp="xp")), FAIL, _COLS + "laplacian, .for c in range", name="playtest 14 F2: a loop over the columns, one line a column"),
    Case("cupy 1", (_SUM, _ROW_GENERATOR.format(xp="xp")), FAIL, "runs a Python loop over the grid's (cells or )?rows", name="a loop over the rows, the nine offsets summed in each"),
    Case("cupy 1", (_SUM, _COLUMN_LIST.format(xp="xp")), FAIL, _COLS, name="a list of the columns, stacked"),
    Case("cupy 1", tuple(t.format(xp="xp") for t in _TWO_ROWS), FAIL, _ROWS, name="a loop over the rows, two a turn"),
    Case("cupy 1", (_SUM, _MAPPED.format(xp="xp")), FAIL, "loop over the grid's rows .*in <lambda>", name="map of a lambda over the rows"),
    Case("cupy 1", (_SUM, _OFFSETS.format(xp="xp")), PASS, "laplacian: right", name="a double loop over the nine offsets"),
    Case("cupy 1", (_SUM, _NINE_WRITTEN), PASS, "laplacian: right", name="the nine slices written out"),
    Case("cupy 1", (_SUM, _BY_HAND.format(xp="xp")), PASS, "laplacian: right", name="a padded array by hand, rows then columns summed"),
    Case("cupy 1", (_SUM, _ROLLED.format(xp="xp")), PASS, "laplacian: right", name="rolls of the padded array, masked"),
    Case("cupy 1", ("def laplacian(a):", _CACHED_ROWS, "counts = window_counts(rows, cols)", "counts = row_counts(rows, cols)"), PASS,
         "laplacian: right", name="the counts cached, made a row at a time (once a grid)"),
    Case("cupy 1", _short(":rows - 1, :cols", rows="i:i + rows - 1"), FAIL, "every cell of the last row is off, and no other: a slice",
         name="playtest 14 F22: slices one row short"),
    Case("cupy 1", _short("1:, :", rows="i + 1:i + rows"), FAIL, "every cell of the first row is off, and no other",
         name="slices that start a row late"),
    Case("cupy 1", _short(":, :cols - 1", cols="j:j + cols - 1"), FAIL, "every cell of the last column is off, and no other",
         name="slices one column short"),
    Case("cupy 1", _short(":rows - 1, :cols - 1", rows="i:i + rows - 1", cols="j:j + cols - 1"), FAIL,
         "every cell of the last row and the last column is off", name="slices a row and a column short"),
    Case("cupynumeric 2 laplacian", (_SUM, _COLUMNS.format(xp="cnp")), FAIL, _COLS + ".*Legate tasks",
         name="playtest 14 F3: a loop over the columns, one line a column"),
    Case("cupynumeric 2 laplacian", (_SUM, _ROW_GENERATOR.format(xp="cnp")), FAIL, "runs a Python loop over the grid's (cells or )?rows", name="a loop over the rows"),
    Case("cupynumeric 2 laplacian", tuple(t.format(xp="cnp") for t in _TWO_ROWS), FAIL, _ROWS, name="a loop over the rows, two a turn"),
    Case("cupynumeric 2 laplacian", (_SUM, _OFFSETS.format(xp="cnp")), PASS, "laplacian: right", name="a double loop over the nine offsets"),
    Case("cupynumeric 2 laplacian", (_SUM, _BY_HAND.format(xp="cnp")), PASS, "laplacian: right", name="a padded array by hand"),
    Case("cupynumeric 2 laplacian", (_SUM, _ROLLED.format(xp="cnp")), PASS, "laplacian: right", name="rolls of the padded array, masked"),
    Case("cupynumeric 2 step", ("def step(u, v, p):", _BEFORE_STEP.format(body=_COLUMNS.format(xp="cnp"))), FAIL,
         "your step runs a Python loop over the grid's columns \\(line \\d+ of your cell, in laplacian",
         name="playtest 14 F3: the step on a laplacian that loops over the columns"),
    Case("cupynumeric 2 step", _ROW_UPDATE, FAIL, "your step runs a Python loop over the grid's rows \\(line \\d+ of your cell, in step",
         name="the update a row at a time"),
    Case("cupynumeric 2 step", ("return u + p.dt * du, v + p.dt * dv",
                                "return tuple(x + p.dt * d for x, d in ((u, du), (v, dv)))"), PASS, "step: right",
         name="the two updates in a loop over (u, du), (v, dv)"),
    Case("cupynumeric 4", (_CONVOLVED, _ROW_CONVOLUTIONS), FAIL, "loop over the grid's rows .*one cnp.convolve of the whole 2-D grid",
         name="playtest 14 F4: three 1-D convolutions a row"),
    Case("cupynumeric 4", (_CONVOLVED, _COLUMN_CONVOLUTIONS), FAIL, "loop over the grid's columns .*one cnp.convolve of the whole 2-D grid",
         name="three 1-D convolutions a column"),
    Case("cupynumeric 4", (_CONVOLVED, _STACKED_CONVOLUTIONS), FAIL, "loop over the grid's rows .*one cnp.convolve of the whole 2-D grid",
         name="a list of 1-D convolutions, one a row, stacked"),
    Case("cupynumeric 4", ("counts = window_counts(*a.shape)", "counts = cnp.convolve(cnp.ones_like(a), window, mode=\"same\")"), PASS,
         "laplacian: right", name="the counts as a convolution of ones too"),
    # --- playtest 15: the copy exercise's arrays made by a loop (the checker saw only their values), a time loop
    # with a loop over the rows in it
    *(Case("cupynumeric 1", ("u = cnp.asarray(u0)", wrong), FAIL, "made by a Python loop .*line \\d+ of your cell.*cupynumeric.asarray", name=name)
      for wrong, name in (("u = cnp.asarray([row for row in u0])", "playtest 15: a comprehension over the rows"),
                          ("u = cnp.zeros(u0.shape, dtype=cnp.float32)\nfor r in range(u0.shape[0]):\n    u[r] = u0[r]", "a row at a time into zeros"),
                          ("u = cnp.asarray(u0.tolist(), dtype=cnp.float32)", "through a list of the values"),
                          ("u = cnp.stack(list(map(cnp.asarray, u0)))", "map of asarray over the rows"),
                          ("u = cnp.zeros_like(cnp.asarray(v0))\nr = 0\nwhile r < u0.shape[0]:\n    u[r, :] = cnp.asarray(u0[r, :])\n    r += 1",
                           "a while loop over the rows"))),
    *(Case("cupynumeric 1", ("u = cnp.asarray(u0)\nv = cnp.asarray(v0)", right), PASS, "2 arrays on the device", name=name)
      for right, name in (("u, v = (cnp.asarray(x) for x in (u0, v0))", "a generator over the pair"),
                          ("u, v = map(cnp.asarray, (u0, v0))", "map over the pair"),
                          ("u, v = [cnp.array(x, dtype=cnp.float32) for x in [u0, v0]]", "a list over the pair, cnp.array"),
                          ("for name, host in ((\"u\", u0), (\"v\", v0)):\n    globals()[name] = cnp.asarray(host)", "a for over the pair"))),
    Case("cupynumeric 3", ("for _ in range(steps):\n        u, v = step(u, v, p)",
                           "u, v = u.copy(), v.copy()\n    for _ in range(steps):\n        nu, nv = step(u, v, p)\n"
                           "        for r in range(u.shape[0]):\n            u[r] = nu[r]\n            v[r] = nv[r]"), FAIL,
         "your time loop runs a Python loop over the grid's (cells or )?rows", name="playtest 15: a loop over the rows in the time loop"),
    Case("cupynumeric 3", ("for _ in range(steps):\n        u, v = step(u, v, p)",
                           "for _ in range(steps // 3):\n        for _ in range(3):\n            u, v = step(u, v, p)\n"
                           "    for _ in range(steps % 3):\n        u, v = step(u, v, p)"), PASS, "time loop: right",
         name="the steps three at a time, then the rest"),
]
