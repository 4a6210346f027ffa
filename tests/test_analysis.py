"""Tutorial 4's reference implementations (gs_course.lessons.analysis) against plain NumPy written the long
way, and its checkers (gs_course.lessons.analysis_check): each accepts the right answer and gives each
typical wrong one its own hint. The kernels run on a GPU only (marked `gpu`)."""

import h5py
import numpy as np
import pytest

from gs_course.lessons import analysis, analysis_check
from gs_course import backends
from gs_course.lessons.checkers import NotYet
from gs_course.output import DATASET, FrameWriter
from gs_course.parameters import Parameters

CUPY = backends.probe("cupy")
gpu_only = pytest.mark.skipif(not CUPY.ok, reason=f"no GPU: {CUPY.reason}")


@pytest.fixture
def images():
    return analysis_check.batch(np.random.default_rng(1), images=6, grid=(37, 53), levels=64)


# --- the reference implementations ------------------------------------------------------------------

def test_mass_and_spot_mass_are_sums_over_each_image(images):
    loop = [sum(float(x) for x in image.ravel()) for image in images]
    np.testing.assert_allclose(analysis.mass(images), loop, rtol=1e-12)
    spots = [sum(float(x) for x in image.ravel() if x > np.float32(analysis.SPOT_THRESHOLD)) for image in images]
    np.testing.assert_allclose(analysis.spot_mass(images), spots, rtol=1e-12)


def test_histograms_are_numpys_image_by_image_top_edge_included(images):
    assert (images == 1.0).any()
    want = np.stack([np.histogram(image, analysis.BINS, (0, 1))[0] for image in images])
    np.testing.assert_array_equal(analysis.histograms(images), want)


def test_bright_cells_are_argwhere_in_row_major_order(images):
    image = images[2]
    coordinates, values = analysis.bright_cells(image)
    want = [(r, c) for r in range(image.shape[0]) for c in range(image.shape[1])
            if image[r, c] > np.float32(analysis.SPOT_THRESHOLD)]
    assert [tuple(x) for x in coordinates] == want
    np.testing.assert_array_equal(values, [image[r, c] for r, c in want])
    np.testing.assert_allclose(analysis.spot_fraction(images[2:3]), [len(want) / image.size])


def test_deciles_are_numpys_lower_percentiles_and_ties_go_up(images):
    edges, classes = analysis.deciles(images)
    np.testing.assert_array_equal(edges, np.percentile(images, 100 * analysis.DECILES, method="lower"))
    on_edge = images == edges[4]
    assert on_edge.any() and (classes[on_edge] == 5).all()
    assert classes.min() >= 0 and classes.max() <= 9
    np.testing.assert_array_equal(classes, (images[..., None] >= edges).sum(axis=-1))


def test_similarity_is_the_cosine_of_each_pair_and_windows_are_its_diagonal_blocks(images):
    got = analysis.similarity(images)
    flat = images.reshape(len(images), -1).astype(np.float64)
    for i in range(len(images)):
        for j in range(len(images)):
            cosine = flat[i] @ flat[j] / np.linalg.norm(flat[i]) / np.linalg.norm(flat[j])
            assert got[i, j] == pytest.approx(cosine, rel=1e-5)
    windows = analysis.window_similarity(images, 3)
    assert windows.shape == (2, 3, 3)
    np.testing.assert_allclose(windows[1], got[3:6, 3:6], rtol=1e-5)


def test_images_per_buffer_obeys_the_budget_and_the_free_memory():
    frame = 1080 * 1920 * 4
    assert analysis.images_per_buffer(frame, 140 * 10**9, 10**9) == 10**9 // (2 * frame)  # the budget
    assert analysis.images_per_buffer(frame, 400 * 10**6) == 200 * 10**6 // (2 * frame)  # half the free memory
    assert analysis.images_per_buffer(frame, 400 * 10**6, 10**9) == 200 * 10**6 // (2 * frame)
    with pytest.raises(ValueError, match="cannot hold 2 buffers of one 8.3 MB image"):
        analysis.images_per_buffer(frame, 10 * 10**6)
    assert analysis.FULL.bytes > analysis.FULL.budget_bytes and analysis.SMALL.bytes > analysis.SMALL.budget_bytes


def _run_file(path, frames):
    with FrameWriter(path, len(frames), *frames.shape[1:], Parameters(), 3, deflate=None) as writer:
        for frame in frames:
            writer.write(frame)
    return path


def test_stream_hands_over_every_image_once_the_last_batch_short(tmp_path, images):
    path = _run_file(tmp_path / "run.h5", images)
    seen = []
    batches = analysis.stream(path, 4, lambda start, batch: seen.append((start, analysis.array_module(batch).asnumpy(
        batch) if CUPY.ok else batch.copy())))
    assert batches == 2 and [start for start, _ in seen] == [0, 4] and len(seen[1][1]) == 2
    np.testing.assert_array_equal(np.concatenate([b for _, b in seen]), images)
    masses = analysis.stream_masses(path, 4)
    np.testing.assert_allclose(masses.get() if CUPY.ok else masses, analysis.mass(images), rtol=1e-6)


def test_write_run_writes_the_simulations_images(tmp_path):
    size = analysis.RunSize(images=3, rows=21, cols=27, budget_bytes=10**4, pattern_images=2)
    made = analysis.write_run(tmp_path / "run.h5", size, steps_per_image=5, backend="numpy")
    with h5py.File(tmp_path / "run.h5") as f:
        frames = f[DATASET][()]
        assert f[DATASET].attrs["complete"] and f[DATASET].compression is None
    sim = backends.create("numpy", Parameters(), 21, 27)
    sim.advance(15)
    np.testing.assert_array_equal(frames[2], sim.fetch_v())
    assert made["backend"] == "numpy" and made["seconds"] > 0
    np.testing.assert_array_equal(analysis.load_batch(tmp_path / "run.h5", 2), frames[1:])


# --- the checkers on the host -------------------------------------------------------------------------

def _right(name):
    return getattr(analysis, name)


def _nudged(values, by):
    """`values` with its second entry changed by `by`: one wrong number among right ones."""
    values = np.array(values, copy=True)
    values.flat[1] += by
    return values


#: The reference with one value wrong, and the line its checker must give: a checker that compared
#: the answer with itself (or with nothing) would pass the reference and these alike.
ONE_VALUE_WRONG = {
    "mass": (lambda images: _nudged(analysis.mass(images), 1.0), r"your mass is off at \(1,\)"),
    "bright_cells": (lambda image, t: (analysis.bright_cells(image, t)[0],
                                       _nudged(analysis.bright_cells(image, t)[1], 0.01)),
                     "your values are not V at your coordinates"),
    "deciles": (lambda images: (analysis.deciles(images)[0], _nudged(analysis.deciles(images)[1], 1)),
                r"your classes are off at \(0, 0, 1\)"),
    "similarity": (lambda images: _nudged(analysis.similarity(images), 0.1), r"your similarity is off at \(0, 1\)"),
}


@pytest.mark.parametrize("name", list(ONE_VALUE_WRONG))
def test_checkers_accept_the_reference_and_refuse_it_with_one_value_wrong(name, capsys):
    checker = getattr(analysis_check, name)
    checker(_right(name))
    assert capsys.readouterr().out.startswith("\N{CHECK MARK}")
    wrong, hint = ONE_VALUE_WRONG[name]
    with pytest.raises(NotYet, match=hint):
        checker(wrong)


def test_checkers_accept_the_right_answer_written_other_ways(capsys):
    analysis_check.mass(lambda images: np.sum(images, axis=(1, 2), dtype="float64"))
    analysis_check.bright_cells(lambda image, t: (np.argwhere(image > t), image[tuple(np.argwhere(image > t).T)]))
    assert capsys.readouterr().out.count("\N{CHECK MARK}") == 2


def test_the_bright_cells_values_by_a_mask_are_refused_the_exercise_teaches_integer_array_indexing():
    with pytest.raises(NotYet, match="integer-array indexing"):
        analysis_check.bright_cells(lambda image, t: (np.argwhere(image > t), image[image > t]))


def _loop_of_histograms(images, bins):
    return np.stack([np.histogram(image, bins, (0, 1))[0] for image in images])


def _loop_of_masses(images):
    return np.array([image.sum(dtype=np.float64) for image in images])


def _loop_of_dots(images):
    rows = images.reshape(len(images), -1).astype(np.float64)
    norms = np.linalg.norm(rows, axis=1)
    return np.array([[rows[i] @ rows[j] / norms[i] / norms[j] for j in range(len(rows))] for i in range(len(rows))])


@pytest.mark.parametrize("checker, loop", [(analysis_check.mass, _loop_of_masses),
                                           (analysis_check.histograms, _loop_of_histograms),
                                           (analysis_check.similarity, _loop_of_dots)])
def test_checkers_refuse_a_python_loop_over_the_images(checker, loop):
    with pytest.raises(NotYet, match="right values, but from a Python loop"):
        checker(loop)


class _PlainArrays:
    """An array module that, as CuPy does, makes plain arrays of its own from a watched one."""
    ndarray = np.ndarray

    def asarray(self, a, dtype=None):
        return np.array(a, dtype)

    def __getattr__(self, name):
        return getattr(np, name)


@pytest.mark.parametrize("xp", [np, _PlainArrays()], ids=["numpy", "an xp making plain arrays"])
def test_a_map_over_the_images_after_asarray_is_seen_whichever_array_module_xp_is(xp):
    """The watch runs the call on NumPy keeping its arrays watched: np.asarray, and CuPy's functions on
    the GPU, make plain arrays, over which a map went unseen."""
    names = {"xp": xp, "np": np}
    exec("def mass(images):\n    images = xp.asarray(images)\n"
         "    return xp.asarray(list(map(lambda image: image.sum(dtype=np.float64), images)))", names)
    with pytest.raises(NotYet, match="right values, but from a Python loop over the images"):
        analysis_check.mass(names["mass"])
    assert names["xp"] is xp and names["np"] is np


@pytest.mark.parametrize("wrong, hint", [
    (lambda images: images.sum(), "one number for the whole batch"),
    (lambda images: images.sum(axis=0), "you summed over the images"),
    (lambda images: images.sum(axis=1), "you summed over one axis of the image only"),
    (lambda images: images.mean(axis=(1, 2)), "that is the mean V of each image"),
    (lambda images: [image.sum() for image in images], "compute it in one call over the whole batch"),
    (lambda images: images.max(axis=(1, 2)), "each image's largest V \\(max\\)"),
    (lambda images: images.sum(axis=(1, 2), dtype=np.float64) * 1.5, "your mass is off at"),
    (lambda images: images.sum(axis=(1, 2)), "sum in float64"),
    (lambda images: images.sum(axis=(0, 1), dtype=np.float64), r"summed over the images \(axis 0\) and one axis"),
])
def test_mass_checker_names_the_mistake(wrong, hint):
    with pytest.raises(NotYet, match=hint):
        analysis_check.mass(wrong)


def _histograms_by(index_of, minlength=True, offsets=lambda count, bins: (np.arange(count) * bins)[:, None, None]):
    """The bincount answer with the bin index `index_of(images, bins)` and the offsets given."""
    def histograms(images, bins):
        count = len(images)
        index = index_of(images, bins) + offsets(count, bins)
        counted = np.bincount(index.ravel(), minlength=count * bins if minlength else 0)
        return counted.reshape(count, bins)
    return histograms


def _clipped(index_of):
    return lambda images, bins: np.minimum(index_of(images, bins), bins - 1)


def _histograms_top_edge_dropped(images, bins):
    index = (images * bins).astype(np.int64)  # 1.0 lands in bin `bins`, cut off by the reshape below
    offsets = (np.arange(len(images)) * (bins + 1))[:, None, None]
    return np.bincount((index + offsets).ravel(), minlength=len(images) * (bins + 1)).reshape(-1, bins + 1)[:, :bins]


@pytest.mark.parametrize("wrong, hint", [
    (lambda images, bins: np.histogram(images, bins, (0, 1))[0], "one histogram for the whole batch"),
    (lambda images, bins: np.histogram(images[0], bins, (0, 1)), r"\(counts, edges\)"),
    (_histograms_top_edge_dropped, "the cells equal to 1 are missing"),
    (lambda images, bins: np.stack([np.histogram(i, bins)[0] for i in images]), "each image got its own bins"),
    (lambda images, bins: np.stack([np.histogram(i, bins, (0, 1), density=True)[0] for i in images]),
     "not counts"),
    (lambda images, bins: analysis.histograms(images, bins)[::-1], "your histograms are off at"),
    (_histograms_by(lambda images, bins: (images * bins).astype(np.int64)), "went into the next image's first bin"),
    (_histograms_by(_clipped(lambda images, bins: (images * bins).astype(np.int64)), minlength=False),
     "fewer than images x bins .*minlength"),
    (_histograms_by(_clipped(lambda images, bins: (images * bins).astype(np.int64)),
                    offsets=lambda count, bins: (np.arange(count) * bins)[None, None, :]), r"\(images, 1, 1\)"),
    (_histograms_by(lambda images, bins: np.digitize(images, np.linspace(0, 1, bins + 1)).clip(max=bins - 1)),
     "one too high"),
    (_histograms_by(lambda images, bins: (images * (bins - 1)).astype(np.int64)), r"not int\(v \* \(bins - 1\)\)"),
    (_histograms_by(_clipped(lambda images, bins: np.round(images * bins).astype(np.int64))), "round down"),
    (lambda images, bins: analysis.histograms(images, bins).T, "transposed"),
])
def test_histograms_checker_names_the_mistake(wrong, hint):
    with pytest.raises(NotYet, match=hint):
        analysis_check.histograms(wrong)


def _bright(image, threshold):
    return analysis.bright_cells(image, threshold)


@pytest.mark.parametrize("wrong, hint", [
    (lambda image, t: image > t, "return a pair"),
    (lambda image, t: (image > t, image[image > t]), "the mask itself"),
    (lambda image, t: (np.stack(np.nonzero(image > t)), image[image > t]), "one row per axis"),
    (lambda image, t: (np.argwhere(image >= t), image[image >= t]), "not >="),
    (lambda image, t: (_bright(image, t)[0][:, ::-1], _bright(image, t)[1]), r"\(col, row\)"),
    (lambda image, t: (_bright(image, t)[0], np.sort(_bright(image, t)[1])), "index the image with the two"),
    (lambda image, t: (np.argwhere(image.T > t), image.T[image.T > t]), "those of the transposed image"),
    (lambda image, t: (np.argwhere(image > t), image[np.argwhere(image > t)]), "image\\[coordinates\\] takes whole "
     "rows|your values are not V at your coordinates"),
])
def test_bright_cells_checker_names_the_mistake(wrong, hint):
    with pytest.raises(NotYet, match=hint):
        analysis_check.bright_cells(wrong)


def _deciles_with(edges_of, side="right"):
    def deciles(images):
        edges = edges_of(images)
        return edges, np.searchsorted(edges, images, side=side)
    return deciles


def _sorted_at(index_of):
    def edges(images):
        ordered = np.sort(images.ravel())
        return ordered[index_of(ordered.size)]
    return edges


@pytest.mark.parametrize("wrong, hint", [
    (_deciles_with(lambda images: np.percentile(images, 100 * analysis.DECILES).astype(np.float32)),
     "interpolated"),
    (_deciles_with(_sorted_at(lambda n: (analysis.DECILES * n).astype(int))), "one too far"),
    (_deciles_with(lambda images: images.ravel()[np.floor(analysis.DECILES * (images.size - 1)).astype(int)]),
     "sort them first"),
    (lambda images: (np.stack([analysis.percentiles(i, analysis.DECILES) for i in images]),
                     analysis.deciles(images)[1]), "deciles per image"),
    (_deciles_with(lambda images: analysis.deciles(images)[0], side="left"), "side='right'"),
    (lambda images: analysis.deciles(images)[0], "return a pair"),
    (_deciles_with(lambda images: np.sort(images, axis=-1).ravel()[np.floor(analysis.DECILES * (images.size - 1))
                                                                   .astype(int)]), "sorted along one axis only"),
    (_deciles_with(_sorted_at(lambda n: np.round(analysis.DECILES * (n - 1)).astype(int))), "round down"),
    (_deciles_with(lambda images: np.percentile(images, analysis.DECILES, method="lower")), "percents"),
    (_deciles_with(_sorted_at(lambda n: analysis.DECILES * (n - 1))), "an index must be an integer"),
])
def test_deciles_checker_names_the_mistake(wrong, hint):
    with pytest.raises(NotYet, match=hint):
        analysis_check.deciles(wrong)


def _gram(images):
    rows = images.reshape(len(images), -1)
    return rows @ rows.T


@pytest.mark.parametrize("wrong, hint", [
    (_gram, "that is the Gram matrix"),
    (lambda images: _gram(images) / np.sqrt(np.diag(_gram(images)))[:, None], "one image's norm only"),
    (lambda images: images.reshape(len(images), -1).T @ images.reshape(len(images), -1), "compares cells"),
    (lambda images: analysis.similarity(images)[1:], "has shape"),
    (lambda images: _gram(images) / (np.diag(_gram(images))[:, None] * np.diag(_gram(images))[None, :]),
     "squared norms"),
    (lambda images: images @ images.T, "make each image a row first"),
])
def test_similarity_checker_names_the_mistake(wrong, hint):
    with pytest.raises(NotYet, match=hint):
        analysis_check.similarity(wrong)


def test_checkers_refuse_an_answer_left_on_the_host_when_a_device_is_expected():
    import jax
    import jax.numpy as jnp

    with pytest.raises(NotYet, match="went back to the host"):
        analysis_check.mass(lambda images: np.asarray(images).sum(axis=(1, 2)), device_type=jax.Array,
                            to_device=jnp.asarray)
    analysis_check.mass(lambda images: images.sum(axis=(1, 2)), device_type=jax.Array, to_device=jnp.asarray)


SPOT = analysis.SPOT_MASS
#: The GPU exercises' typical mistakes and their hints (the kernels', wrong the same way on a GPU).
KERNEL_MISTAKES = {
    "spot_mass_kernel": [({**SPOT, "map_expr": "v"}, "the threshold|the mass of every cell"),
                         ({**SPOT, "map_expr": "v if v > threshold else 0"}, "C, not Python"),
                         ({**SPOT, "map_expr": "v > threshold ? 1 : 0"}, "counts the spots"),
                         ({**SPOT, "map_expr": "v > threshold"}, "counts the spots"),
                         ({**SPOT, "map_expr": "v >= threshold ? v : 0.0"}, "not >="),
                         ({**SPOT, "reduce_expr": "max(a, b)"}, "a \\+ b"),
                         ({**SPOT, "identity": "1"}, "the identity starts every thread's")],
    "histogram_kernel": [(analysis.GLOBAL_ATOMICS, "shared memory"),
                         (analysis.PRIVATISED.replace("atomicAdd(&block_counts[bin], 1u)", "block_counts[bin] += 1"),
                          "atomicAdd|increments were lost"),
                         (analysis.PRIVATISED.replace("__syncthreads();\n    for (int i", "for (int i"),
                          "__syncthreads|more counts than cells"),
                         (analysis.PRIVATISED.replace("block_counts[b] = 0;", ";"),
                          "set the block's histogram to 0|more counts than cells"),
                         (analysis.PRIVATISED.replace("min((int)(image[i] * bins), bins - 1)", "(int)(image[i] * bins)"),
                          "one past the last bin")],
    "bitonic_step": [(analysis.BITONIC_BODY.replace("partner > i", "true"), "only the one with partner > i"),
                     (analysis.BITONIC_BODY.replace("(i & k) == 0", "true"), "i & k|descending order")],
}


def _call_kernel_checker(name, answer):
    checker = getattr(analysis_check, name)
    return checker(**answer) if isinstance(answer, dict) else checker(answer)


@pytest.mark.parametrize("name, answer, hint", [(name, answer, hint) for name, cases in KERNEL_MISTAKES.items()
                                                for answer, hint in cases])
def test_kernel_checkers_name_the_mistake_even_without_a_gpu(name, answer, hint):
    with pytest.raises(NotYet, match=hint):
        _call_kernel_checker(name, answer)


def test_the_spot_mass_kernel_names_its_sum_type_in_c():
    """CuPy pastes `reduce_type` into the kernel's C source as it is (`typedef ... _type_reduce;`):
    NumPy's name, float64, is no C type and did not compile on the GPU; C's, double, does. The
    parameters keep NumPy's names, which CuPy translates."""
    made = {}

    class Cupy:
        @staticmethod
        def ReductionKernel(*args, **kwargs):
            made.update(args=args, kwargs=kwargs)

    analysis.spot_mass_kernel(Cupy, **analysis.SPOT_MASS)
    assert made["args"][:2] == ("float32 v, float32 threshold", "float64 mass")
    assert made["kwargs"] == {"reduce_type": "double"}


def test_kernel_checkers_run_the_kernels_on_the_cpu_or_say_they_did_not_check(capsys, monkeypatch):
    """Without a GPU the kernels run on the CPU (a C++ compiler); without one either, the checkers
    say "not checked" and never tick (issue 29: text-only checks ticked wrong kernels)."""
    if CUPY.ok:
        pytest.skip("a GPU is here: the checkers run the kernels on it")
    from gs_course.lessons import cuda_on_cpu

    if cuda_on_cpu.compiler() is not None:
        analysis_check.spot_mass_kernel(**analysis.SPOT_MASS)
        analysis_check.histogram_kernel(analysis.PRIVATISED)
        analysis_check.bitonic_step(analysis.BITONIC_BODY)
        assert capsys.readouterr().out.count("(run on the CPU") == 3
    monkeypatch.setattr(cuda_on_cpu, "compiler", lambda: None)
    assert analysis_check.spot_mass_kernel(**analysis.SPOT_MASS) is None
    assert analysis_check.histogram_kernel(analysis.PRIVATISED) is None
    assert analysis_check.bitonic_step(analysis.BITONIC_BODY) is None
    out = capsys.readouterr().out
    for what in ("your ReductionKernel", "your histogram kernel", "your bitonic sort kernel"):
        assert f"- {what}: not checked here, it needs an NVIDIA GPU with CuPy, or a C++ compiler" in out
    assert "\N{CHECK MARK}" not in out


# --- on a GPU ------------------------------------------------------------------------------------------

@pytest.mark.gpu
@gpu_only
def test_kernels_match_the_references_on_the_gpu():
    import cupy

    images = analysis_check.batch(np.random.default_rng(2), images=4, grid=(301, 419))
    on_gpu = cupy.asarray(images)
    want = analysis.histograms(images)
    for body in (analysis.GLOBAL_ATOMICS, analysis.PRIVATISED):
        got = analysis.launch_histograms(analysis.histogram_kernel(cupy, body), on_gpu).get()
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(analysis.histograms(on_gpu).get(), want)
    kernel = analysis.spot_mass_kernel(cupy, **analysis.SPOT_MASS)
    np.testing.assert_allclose(kernel(on_gpu, cupy.asarray(np.float32(analysis.SPOT_THRESHOLD)), axis=(1, 2)).get(),
                               analysis.spot_mass(images), rtol=1e-9)
    bitonic = analysis.bitonic_kernel(cupy, analysis.BITONIC_BODY)
    for size in (1, 2, 3, 255, 256, 257, 100_003):
        values = cupy.random.random(size, dtype=np.float32)
        np.testing.assert_array_equal(analysis.bitonic_sort(bitonic, values).get(), cupy.sort(values).get())


@pytest.mark.gpu
@gpu_only
@pytest.mark.parametrize("route", analysis.ROUTES)
def test_every_route_streams_the_same_masses(route, tmp_path):
    frames = analysis_check.batch(np.random.default_rng(3), images=11, grid=(65, 97))
    path = _run_file(tmp_path / "run.h5", frames)
    np.testing.assert_allclose(analysis.stream_masses(path, 3, route).get(), analysis.mass(frames), rtol=1e-6)


@pytest.mark.gpu
@gpu_only
def test_gpu_checkers_accept_the_solutions_and_name_the_mistakes(capsys):
    assert analysis_check.spot_mass_kernel(**analysis.SPOT_MASS) is not None
    assert analysis_check.histogram_kernel(analysis.PRIVATISED) is not None
    assert analysis_check.bitonic_step(analysis.BITONIC_BODY) is not None
    assert capsys.readouterr().out.count("\N{CHECK MARK}") == 3
    spot = analysis.SPOT_MASS
    for wrong, hint in [({**spot, "map_expr": "v"}, "the mass of every cell"),
                        ({**spot, "map_expr": "v >= threshold ? v : 0.0"}, "not >="),
                        ({**spot, "reduce_expr": "max(a, b)"}, "that is the largest value"),
                        ({**spot, "identity": "1"}, "the identity starts every thread's"),
                        ({**spot, "map_expr": "v > threshold ? v : 0.0 +"}, "does not compile")]:
        with pytest.raises(NotYet, match=hint):
            analysis_check.spot_mass_kernel(**wrong)
    for wrong, hint in [(analysis.GLOBAL_ATOMICS, "that is the first kernel"),
                        (analysis.PRIVATISED.replace("block_counts[b] = 0;", ";"),
                         # what shared memory held before decides which symptom shows first
                         "more counts than cells|set the block's histogram to 0 first"),
                        (analysis.PRIVATISED.replace("atomicAdd(&block_counts[bin], 1u)", "block_counts[bin] += 1"),
                         "increments were lost"),
                        (analysis.PRIVATISED.replace("min((int)(image[i] * bins), bins - 1)", "(int)(image[i] * (bins - 1))"),
                         "in the wrong bins")]:
        with pytest.raises(NotYet, match=hint):
            analysis_check.histogram_kernel(wrong)
    for wrong, hint in [(analysis.BITONIC_BODY.replace("partner > i", "true"),  # a race: what it gives varies
                         "lost or duplicated|not sorted|only the one with partner > i"),
                        (analysis.BITONIC_BODY.replace("(i & k) == 0", "(i & k) != 0"), "descending order")]:
        with pytest.raises(NotYet, match=hint):
            analysis_check.bitonic_step(wrong)


def test_the_run_follows_the_grid_a_small_gpu_gets():
    """A small GPU runs tutorial 4 on the grid the memory free allows: its run is on that grid, with
    the small run's images and a budget grown with the grid, always smaller than the run."""
    from gs_course.workload import GRIDS

    for grid in GRIDS:
        run = analysis.run_size(grid.name)
        assert (run.rows, run.cols) == (grid.rows, grid.cols)
        assert run.budget_bytes < run.bytes, "the run must not fit the budget: the streaming has a point"
    assert analysis.run_size("half").images == analysis.SMALL.images


def _gram_summed_in_sequence(rows: np.ndarray) -> np.ndarray:
    """rows @ rows.T in float32, each product added in turn (one fused multiply-add a term), as a GEMM
    that sums in one sequence does."""
    gram = np.zeros((len(rows), len(rows)), np.float32)
    for k in range(rows.shape[1]):
        gram = (gram + np.outer(rows[:, k], rows[:, k]).astype(np.float64)).astype(np.float32)
    return gram


def test_similarity_half_operand_names_float16_not_float32_summed_in_sequence():
    from gs_course.lessons.analysis_inputs import batch
    from gs_course.lessons.analysis_mistakes import half_operand

    for seed in range(6):
        images = batch(np.random.default_rng(seed), images=7)
        rows = images.reshape(7, -1)
        exact = rows.astype(np.float64)
        want = analysis.similarity(exact)
        norms = np.linalg.norm(rows, axis=1)  # the norms taken apart, as the checker's hints allow
        in_sequence = _gram_summed_in_sequence(rows) / np.outer(norms, norms)
        assert half_operand(in_sequence.astype(np.float64), want, exact) is None
        half = rows @ rows.T.astype(np.float16)
        half_norms = np.sqrt(np.diagonal(half))
        assert "float16" in half_operand((half / np.outer(half_norms, half_norms)).astype(np.float64), want, exact)
