"""The pieces behind issue 29's classes that the harness's answers do not reach one by one: the
kernel's trial in a child process (any failure of the child is the kernel's), the reading of a
__syncthreads() that not every thread reaches, and the CPU's run of a kernel (its crashes, hangs
and writes outside its arrays)."""

import numpy as np
import pytest

from gs_course.lessons import analysis, analysis_check, c_code, checkers as check, cuda_on_cpu, kernel_check

needs_compiler = pytest.mark.skipif(cuda_on_cpu.compiler() is None, reason="no C++ compiler here")


def test_any_failure_of_the_trial_child_is_the_kernels():
    """A child that fails with none of CUDA's three usual words (cudaErrorInvalidAddressSpace...)
    still stops the checker before the notebook's process runs the kernel."""
    with pytest.raises(check.NotYet, match="failed when tried in a separate process"):
        check.trial_in_a_child("gs_course.lessons.checkers:no_such_trial", "body")
    check.trial_in_a_child("os.path:basename", "a child that succeeds")  # nothing raised


@pytest.mark.parametrize("stderr, the_kernels", [
    ("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 15,872 bytes (allocated so far: 0 bytes).", False),
    ("cudaErrorMemoryAllocation: out of memory", False),
    ("CUDADriverError: CUDA_ERROR_OUT_OF_MEMORY: out of memory", False),
    ("cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorIllegalAddress: an illegal memory access", True),
])
def test_a_child_without_gpu_memory_is_no_trial(monkeypatch, stderr, the_kernels):
    """On a small GPU that the notebook nearly fills (the 2 GB rehearsal of results/h200), the child
    cannot allocate its first bytes: that says nothing of the kernel, whose right answer then ran
    in the notebook's process; any other failure is still the kernel's."""
    import subprocess

    failed = subprocess.CompletedProcess([], 1, "", "Traceback (most recent call last):\n  ...\n" + stderr + "\n")
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: failed)
    if the_kernels:
        with pytest.raises(check.NotYet, match="outside its arrays"):
            check.trial_in_a_child("os.path:basename", "body")
    else:
        check.trial_in_a_child("os.path:basename", "body")  # nothing raised: no trial


@pytest.mark.parametrize("body, divergent", [
    (analysis.PRIVATISED, False),
    (analysis.PRIVATISED.replace("__syncthreads();\n    for (int i", "if (threadIdx.x < bins) __syncthreads();\n    for (int i"), True),
    (analysis.PRIVATISED.replace("block_counts[b] = 0;\n    __syncthreads();", "{ block_counts[b] = 0; __syncthreads(); }"), True),
    ("const int t = threadIdx.x * 2;\n if (t < bins) { __syncthreads(); }", True),  # through a variable
    ("if (threadIdx.x >= bins) return;\n __syncthreads();", True),  # some threads left before it
    ("for (int r = 0; r < 4; ++r) { x[r] = 0; __syncthreads(); }", False),  # the same loop for every thread
    ("if (bins > 0) { __syncthreads(); }", False),  # a condition every thread agrees on
    ("// if (threadIdx.x >= bins) return;\n __syncthreads(); /* if (t) { __syncthreads(); } */", False),  # comments
])
def test_a_syncthreads_that_only_some_threads_reach_is_found(body, divergent):
    assert kernel_check.divergent_barrier(body) is divergent


KERNEL = r"""extern "C" __global__ void fill(float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    BODY
}"""
MAIN = "    launch(dim3(4), dim3(8), OWN, false, [&] { fill(out, 32); });"


def _run(body, own_threads=False, timeout=10):
    main = MAIN.replace("OWN", "true" if own_threads else "false")
    with cuda_on_cpu.compiled(KERNEL.replace("BODY", body), {"out": np.float32}, main) as program:
        return program.run({"out": np.zeros(32, np.float32)}, timeout=timeout)["out"]


@needs_compiler
def test_a_kernel_runs_on_the_cpu_with_its_indices():
    assert np.array_equal(_run("if (i < n) out[i] = i;"), np.arange(32))
    assert np.array_equal(_run("__syncthreads(); if (i < n) out[i] = threadIdx.x;", own_threads=True),
                          np.tile(np.arange(8), 4))


@needs_compiler
@pytest.mark.parametrize("body, kind", [
    ("out[i + 40] = 1;", "outside"),  # into the guard zone
    ("out[i * 100000000] = 1;", "crash"),  # far outside: the child dies, not this process
    ("if (threadIdx.x < 4) __syncthreads();", "hang"),  # the barrier never opens
    ("out[i] = undeclared;", "compile"),
])
def test_a_kernel_that_goes_wrong_on_the_cpu_is_told_how(body, kind):
    with pytest.raises(cuda_on_cpu.KernelFailed) as failed:
        _run(body, own_threads=kind == "hang", timeout=3)
    assert failed.value.kind == kind


@pytest.mark.parametrize("error, hint", [
    (TypeError("x must be int array"), "bin indices are floats"),  # cupy.bincount of floats
    (AttributeError("'int' object has no attribute 'shape'"), "second argument is weights"),  # cupy.bincount(x, 256)
])
def test_cupys_words_for_a_bincount_mistake_get_numpys_hint(error, hint):
    """CuPy words the two bincount mistakes of the histograms exercise otherwise than NumPy (the
    harness's cases on the H200 at d7c36b1): the same hint either way."""
    def histograms(images, bins):
        raise error

    with pytest.raises(check.NotYet, match=hint):
        analysis_check.histograms(histograms)


def test_nvrtcs_words_for_min_of_a_float_and_an_int():
    """nvrtc (on the GPU) rejects min(image[i] * bins, bins - 1) as an ambiguous overload, where g++
    on the CPU reports the float index: both name the float."""
    line = 'error: more than one instance of overloaded function "min" matches the argument list:'
    assert "an index is a float" in c_code.compile_hint([line])
