"""A student's CUDA C kernel run on the CPU, to check its values where there is no GPU.

The course's kernels are small: one function of plain C, with CUDA's thread indices, shared
memory, `__syncthreads()` and CUDA's atomics. Compiled as C++ with a prelude that gives those names
their meaning on the CPU, a kernel runs block after block; within a block its threads run either
one after another (in order, or in reverse order: a kernel whose result depends on the order has a
race) or as threads of their own that wait for each other at `__syncthreads()` (a barrier that
not every thread reaches then never opens: the program is stopped after `timeout` seconds).

The program runs in a child process: a wild pointer costs that process, never the notebook's.
Each array sits between two guard zones filled with a value of its own; a kernel that writes into
them wrote outside its array. So does one that changes shared memory past the launch's dynamic size
(`dynamic_shared_bytes`, which a checker's `main` sets as CUDA's `shared_mem`). Without a C++ compiler (`compiler()` is None), nothing here runs and
the checkers say "not checked".
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from .c_code import UNDECLARED, compile_hint, endless_loop, unpaired, whole_function, your_line
from .check_core import NotYet

#: Elements of guard zone on each side of every array: a step kernel's row stride of rows for
#: cols, or its index transposed, reads up to a few thousand elements past the end of a checker's grid.
GUARD = 16384

PRELUDE = r"""
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct dim3 {
    unsigned int x, y, z;
    dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};
static thread_local dim3 threadIdx;
static dim3 blockIdx, blockDim, gridDim;
static pthread_barrier_t block_barrier;
static bool threads_of_their_own = false;
static inline void __syncthreads() {
    if (!threads_of_their_own) { fprintf(stderr, "__syncthreads() in a launch without a barrier\n"); exit(3); }
    pthread_barrier_wait(&block_barrier);
}
static unsigned char shared_arena[48 * 1024];
// The dynamic shared memory a launch gives (CUDA's shared_mem argument): a block that changes a byte
// past it wrote outside its extern __shared__ array (on a GPU that passes unseen, or faults).
static size_t dynamic_shared_bytes = sizeof shared_arena;
// The first byte past it that an atomic updated: atomicAdd(&counts[bins], 0u) changes no byte there.
static size_t atomic_past_shared = 0;
static void check_shared_bounds() {
    for (size_t b = dynamic_shared_bytes; b < sizeof shared_arena; ++b)
        if (shared_arena[b] != 7) {
            unsigned int word;
            memcpy(&word, shared_arena + b / 4 * 4, 4);
            fprintf(stderr, "past shared memory: it wrote %u at byte %zu of the block's shared memory, which holds %zu bytes\n",
                    word, b / 4 * 4, dynamic_shared_bytes);
            exit(5);
        }
    if (atomic_past_shared) {
        fprintf(stderr, "past shared memory: it made an atomic update at byte %zu of the block's shared memory, which "
                "holds %zu bytes (one that changed nothing there, as adding 0)\n", atomic_past_shared, dynamic_shared_bytes);
        exit(5);
    }
}
static inline void shared_bound(const void* p) {  // each atomic's address, seen by check_shared_bounds
    const unsigned char* at = (const unsigned char*) p;
    if (at >= shared_arena + dynamic_shared_bytes && at < shared_arena + sizeof shared_arena && !atomic_past_shared)
        atomic_past_shared = at - shared_arena;
}
template <class T, class V> static inline T atomicAdd(T* p, V v) {
    shared_bound(p);
    return __atomic_fetch_add(p, (T) v, __ATOMIC_SEQ_CST);
}
template <class T, class F> static inline T atomic_update(T* p, F f) {  // *p = f(*p) atomically; the old value
    shared_bound(p);
    T old = *p, want;
    do { want = f(old); } while (!__atomic_compare_exchange(p, &old, &want, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    return old;
}
template <class V> static inline float atomicAdd(float* p, V v) { return atomic_update(p, [&](float o) { return o + (float) v; }); }
template <class T, class V> static inline T atomicSub(T* p, V v) { shared_bound(p); return __atomic_fetch_sub(p, (T) v, __ATOMIC_SEQ_CST); }
template <class T, class V> static inline T atomicAnd(T* p, V v) { shared_bound(p); return __atomic_fetch_and(p, (T) v, __ATOMIC_SEQ_CST); }
template <class T, class V> static inline T atomicOr(T* p, V v) { shared_bound(p); return __atomic_fetch_or(p, (T) v, __ATOMIC_SEQ_CST); }
template <class T, class V> static inline T atomicXor(T* p, V v) { shared_bound(p); return __atomic_fetch_xor(p, (T) v, __ATOMIC_SEQ_CST); }
template <class T, class V> static inline T atomicExch(T* p, V v) {
    T want = (T) v, old;
    shared_bound(p);
    __atomic_exchange(p, &want, &old, __ATOMIC_SEQ_CST);
    return old;
}
template <class T, class C, class V> static inline T atomicCAS(T* p, C compare, V v) {
    T expected = (T) compare, want = (T) v;
    shared_bound(p);
    __atomic_compare_exchange(p, &expected, &want, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return expected;
}
template <class T, class V> static inline T atomicMin(T* p, V v) { return atomic_update(p, [&](T o) { return (T) v < o ? (T) v : o; }); }
template <class T, class V> static inline T atomicMax(T* p, V v) { return atomic_update(p, [&](T o) { return o < (T) v ? (T) v : o; }); }
// CUDA's float conversions that name their rounding (rd down, ru up, rn to nearest even, rz toward 0).
static inline int __float2int_rd(float x) { return (int) floorf(x); }
static inline int __float2int_ru(float x) { return (int) ceilf(x); }
static inline int __float2int_rn(float x) { return (int) nearbyintf(x); }
static inline int __float2int_rz(float x) { return (int) truncf(x); }
static inline unsigned int __float2uint_rd(float x) { return (unsigned int) floorf(x); }
static inline unsigned int __float2uint_ru(float x) { return (unsigned int) ceilf(x); }
static inline unsigned int __float2uint_rn(float x) { return (unsigned int) nearbyintf(x); }
static inline unsigned int __float2uint_rz(float x) { return (unsigned int) truncf(x); }
static inline float __int2float_rn(int x) { return (float) x; }
static inline float __uint2float_rn(unsigned int x) { return (float) x; }
static inline float __saturatef(float x) { return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
static inline float __fdividef(float a, float b) { return a / b; }
// CUDA's fast maths and its arithmetic of a named rounding, here the CPU's own (exact: within any
// checker's tolerance). Macros: the C library declares some of these names for itself.
#define __powf powf
#define __expf expf
#define __exp10f exp10f
#define __logf logf
#define __log2f log2f
#define __log10f log10f
#define __sinf sinf
#define __cosf cosf
#define __tanf tanf
#define ROUNDED(name, result) \
    static inline float name##_rn(float a, float b) { return result; } \
    static inline float name##_rz(float a, float b) { return result; } \
    static inline float name##_ru(float a, float b) { return result; } \
    static inline float name##_rd(float a, float b) { return result; }
ROUNDED(__fadd, a + b) ROUNDED(__fsub, a - b) ROUNDED(__fmul, a * b) ROUNDED(__fdiv, a / b)
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline float __fmaf_rz(float a, float b, float c) { return fmaf(a, b, c); }
static inline float __fmaf_ru(float a, float b, float c) { return fmaf(a, b, c); }
static inline float __fmaf_rd(float a, float b, float c) { return fmaf(a, b, c); }
template <class T> static inline T __ldg(const T* p) { return *p; }  // a read through the read-only cache
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline unsigned int atomicInc(unsigned int* p, unsigned int limit) {
    return atomic_update(p, [&](unsigned int o) { return o >= limit ? 0u : o + 1; });
}
static inline unsigned int atomicDec(unsigned int* p, unsigned int limit) {
    return atomic_update(p, [&](unsigned int o) { return o == 0 || o > limit ? limit : o - 1; });
}
#define atomicAdd_block atomicAdd  // the block's scope, the system's: one scope on the CPU
#define atomicAdd_system atomicAdd
template <class A, class B> static inline auto min(A a, B b) -> decltype(a + b) { return b < a ? b : a; }
template <class A, class B> static inline auto max(A a, B b) -> decltype(a + b) { return a < b ? b : a; }
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
template <class F> struct ThreadStart { F* kernel; unsigned int t; };
static inline void set_thread(unsigned int t) {
    threadIdx = dim3(t % blockDim.x, (t / blockDim.x) % blockDim.y, t / (blockDim.x * blockDim.y));
}
template <class F> static void* start_thread(void* arg) {
    ThreadStart<F>* start = (ThreadStart<F>*) arg;
    set_thread(start->t);
    (*start->kernel)();
    return 0;
}
template <class F> static void launch(dim3 grid, dim3 block, bool own_threads, bool reverse, F kernel) {
    gridDim = grid;
    blockDim = block;
    const unsigned int threads = block.x * block.y * block.z;
    if (threads > 1024) { fprintf(stderr, "more than 1024 threads a block\n"); exit(3); }
    for (unsigned int bz = 0; bz < grid.z; ++bz)
    for (unsigned int by = 0; by < grid.y; ++by)
    for (unsigned int bx = 0; bx < grid.x; ++bx) {
        blockIdx = dim3(bx, by, bz);
        memset(shared_arena, 7, sizeof shared_arena);  // shared memory is not cleared between blocks
        if (own_threads) {
            static ThreadStart<F> starts[1024];
            static pthread_t ids[1024];
            pthread_barrier_init(&block_barrier, 0, threads);
            threads_of_their_own = true;
            for (unsigned int t = 0; t < threads; ++t) {
                starts[t].kernel = &kernel;
                starts[t].t = t;
                pthread_create(&ids[t], 0, start_thread<F>, &starts[t]);
            }
            for (unsigned int t = 0; t < threads; ++t) pthread_join(ids[t], 0);
            threads_of_their_own = false;
            pthread_barrier_destroy(&block_barrier);
        } else {
            for (unsigned int s = 0; s < threads; ++s) {
                set_thread(reverse ? threads - 1 - s : s);
                kernel();
            }
        }
        check_shared_bounds();
    }
}
"""

#: The C++ type of each NumPy dtype an array may have.
_C_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double", np.dtype(np.int32): "int",
            np.dtype(np.uint32): "unsigned int", np.dtype(np.int64): "long long"}


class NotOnCpu(NotYet):
    """A kernel that calls one of CUDA's own functions that PRELUDE does not define: it compiles on a
    GPU only, so it is not checked here (the kernel checkers print the message as their "not checked" line)."""


class KernelFailed(Exception):
    """The kernel did not run to its end on the CPU; `kind` says how: "compile" (the message holds
    the compiler's error lines), "crash", "hang" or "outside" (it wrote into a guard zone)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def compiler() -> str | None:
    """The C++ compiler that runs kernels here, or None."""
    return next((found for name in ("c++", "g++", "clang++") if (found := shutil.which(name))), None)


def shared_memory_as_cpu(body: str) -> str:
    """CUDA's shared arrays as the CPU has them: `extern __shared__ T name[];` points into the
    block's arena, `__shared__ T name[N];` is one static array (blocks run one at a time)."""
    body = re.sub(r"extern\s+__shared__\s+([\w\s]+?)\s*(\w+)\s*\[\s*\]\s*;", r"\1* \2 = (\1*) shared_arena;", body)
    return re.sub(r"__shared__", "static", body)


class Program:
    """A kernel and the `main` that launches it, compiled; `run` it on arrays."""

    def __init__(self, kernel: str, arrays: dict[str, np.dtype], main: str, folder: Path):
        cxx = compiler()
        if cxx is None:
            raise RuntimeError("no C++ compiler here")
        self.names = list(arrays)
        self.folder = folder
        declarations = "\n".join(
            f"    {_C_TYPES[np.dtype(dtype)]}* {name} = ({_C_TYPES[np.dtype(dtype)]}*) storage[{i}] + {GUARD};"
            for i, (name, dtype) in enumerate(arrays.items()))
        source = (PRELUDE + shared_memory_as_cpu(kernel.replace('extern "C"', "")) + f"""
int main(int argc, char** argv) {{
    const bool reverse = argc > 2 && argv[2][0] == 'r';
    FILE* file = fopen(argv[1], "rb");
    long long sizes[{len(arrays)}];
    void* storage[{len(arrays)}];
    for (int i = 0; i < {len(arrays)}; ++i) {{
        if (fread(&sizes[i], sizeof(long long), 1, file) != 1) return 4;
        storage[i] = malloc(sizes[i]);
        if (fread(storage[i], 1, sizes[i], file) != (size_t) sizes[i]) return 4;
    }}
    fclose(file);
{declarations}
    (void) reverse;
{main}
    file = fopen(argv[1], "wb");
    for (int i = 0; i < {len(arrays)}; ++i) {{ fwrite(&sizes[i], sizeof(long long), 1, file); fwrite(storage[i], 1, sizes[i], file); }}
    fclose(file);
    return 0;
}}
""")
        (folder / "kernel.cpp").write_text(source)
        built = subprocess.run([cxx, "-std=c++17", "-O1", "-pthread", "-w", "-o", str(folder / "kernel"),
                                str(folder / "kernel.cpp")], capture_output=True, text=True, timeout=120)
        if built.returncode != 0:
            errors = [re.sub(r"^.*?kernel\.cpp:\d+:\d+:\s*", "", line) for line in built.stderr.splitlines()
                      if "error" in line]
            raise KernelFailed("compile", "\n".join(errors[:5]) or built.stderr.strip()[:500])

    def run(self, arrays: dict[str, np.ndarray], reverse: bool = False, timeout: float = 20,
            fills: dict | None = None) -> dict[str, np.ndarray]:
        """The arrays after the program ran (each in its guard zones, filled with `_guard_fill`, or
        with `fills`' value for its name: a read there whose value changed nothing then shows)."""
        data = self.folder / "arrays.bin"
        guarded = []
        with open(data, "wb") as out:
            for name in self.names:
                a = np.ascontiguousarray(arrays[name]).ravel()
                fill = a.dtype.type((fills or {}).get(name, _guard_fill(a.dtype)))
                whole = np.concatenate([np.full(GUARD, fill, a.dtype), a, np.full(GUARD, fill, a.dtype)])
                guarded.append((name, a, fill))
                out.write(np.int64(whole.nbytes).tobytes())
                out.write(whole.tobytes())
        try:
            child = subprocess.run([str(self.folder / "kernel"), str(data), "r" if reverse else "f"],
                                   capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise KernelFailed("hang", f"it did not finish within {timeout:g} s") from None
        if child.returncode != 0:
            raise KernelFailed("crash", child.stderr.strip().splitlines()[-1] if child.stderr.strip() else
                               f"stopped by signal {-child.returncode}" if child.returncode < 0 else
                               f"exit status {child.returncode}")
        results, raw, offset = {}, data.read_bytes(), 0
        for name, a, fill in guarded:
            size = int(np.frombuffer(raw, np.int64, 1, offset)[0])
            whole = np.frombuffer(raw, a.dtype, size // a.itemsize, offset + 8)
            offset += 8 + size
            guards = np.concatenate([whole[:GUARD], whole[-GUARD:]])
            if not (np.isnan(guards).all() if np.isnan(fill) else (guards == fill).all()):
                raise KernelFailed("outside", f"it wrote outside {name}")
            results[name] = whole[GUARD:-GUARD].reshape(np.shape(arrays[name])).copy()
        return results


def _guard_fill(dtype: np.dtype):
    """What fills the guard zones: a read there turns a float result huge, an integer one wrong."""
    return dtype.type(1e20) if dtype.kind == "f" else dtype.type(0x5A5A5A5A)


def compiled(kernel: str, arrays: dict[str, np.dtype], main: str):
    """A context manager: the compiled Program, its folder removed afterwards."""
    import contextlib

    @contextlib.contextmanager
    def made():
        with tempfile.TemporaryDirectory(prefix="gs-course-kernel-") as folder:
            yield Program(kernel, arrays, main, Path(folder))

    return made()


#: The file name the compilers give the student's lines in `marked` code: their errors there name a line of the body.
YOUR_CODE = "your code"


def marked(template: str, body: str) -> str:
    """`template` with `body` in place of BODY, the body's lines numbered from 1 for the compilers
    (#line): an error in it names the student's line, "your code:3:5: error: ..." (nvrtc: "your code(3)")."""
    return template.replace("BODY", f'\n#line 1 "{YOUR_CODE}"\n{body}\n#line 1 "checker"\n')


def syntax_errors(kernel: str) -> list[str]:
    """The error lines of compiling `kernel` (C++ with PRELUDE, nothing built or run), [] where it
    compiles; the file and line each names kept ("your code:3:5: error: ..." for a `marked` body)."""
    with tempfile.TemporaryDirectory(prefix="gs-course-kernel-") as folder:
        source = Path(folder) / "kernel.cpp"
        source.write_text(PRELUDE + shared_memory_as_cpu(kernel.replace('extern "C"', "")))
        built = subprocess.run([compiler(), "-std=c++17", "-fsyntax-only", "-w", str(source)],
                               capture_output=True, text=True, timeout=120)
    if built.returncode == 0:
        return []
    return [line for line in built.stderr.splitlines() if "error" in line] or built.stderr.strip().splitlines()[:1]


def compile_failure(kernel: str, message: str, compile_mistake=None, body: str | None = None) -> str:
    """The one line for a kernel that the CPU's compiler refused with the error lines `message`: the
    exercise's usual mistake (`compile_mistake(error lines)`), a call of a function the kernel does not
    have, else the compiler's first line; with the student's line where `body` (of a `marked` kernel) is
    given. One of CUDA's own names that PRELUDE lacks is no mistake: NotOnCpu (it is not checked here)."""
    half = re.search(r"[‘'](__half2?|half2?)[’'] was not declared", message)
    if half and re.search(rf"\(\s*{half[1]}\s*\)|\b{half[1]}\s+[A-Za-z_]|\b{half[1]}\s*\(", kernel):
        raise NotOnCpu(f"not checked here: it uses {half[1]}, CUDA's half-precision type (cuda_fp16.h), which "
                       "this CPU's stand-in for CUDA does not define (it runs on an NVIDIA GPU)")
    cuda_own = re.search(r"[‘'](__\w+)[’'] was not declared(?!.*__syncthreads)", message)
    if cuda_own:  # a misspelt __syncthreads is the student's, anything else CUDA's (__fmul_rn...)
        raise NotOnCpu(f"not checked here: it calls {cuda_own[1]}, one of CUDA's own functions, which this "
                       "CPU's stand-in for CUDA does not define (it runs on an NVIDIA GPU)")
    lines = message.splitlines()
    if body is not None and (whole := whole_function(body)):  # before the exercise's own: the root of its errors
        return f"your code does not compile: {whole}"
    named = ((compile_mistake(lines) if compile_mistake else None) or (unpaired(body) if body is not None else None)
             or undeclared_call(kernel, lines))
    where = your_line(lines, body) if body is not None else ""
    if named:  # braces that do not pair: the compiler's line is where it noticed, seldom where one is missing
        return f"your code does not compile: {named}{'' if 'do not pair' in named else where}"
    return compile_hint(lines, where)


def undeclared_call(code: str, errors: list[str]) -> str | None:
    """The hint for a call of a function the kernel does not have (swap(a, b), as in C++), named
    from the compiler's error lines and the code; else None."""
    found = re.search(UNDECLARED, "\n".join(errors))
    name = found and next(g for g in found.groups() if g)
    if not name or not re.search(rf"\b{name}\s*\(", code):
        return None
    if name in ("swap", "exchange"):
        return (f"{name}() is no function of CUDA C here: exchange the two values through temporaries, read both first "
                "(const float a = values[i], b = values[partner];), then write each where the other was")
    return f"{name}() is no function the kernel knows: write what it does in the kernel itself"


def run_checked(kernel: str, arrays: dict, main: str, runs: list[dict], compile_mistake=None,
                **run_options) -> list[dict]:
    """The arrays after each of `runs` (their inputs, and run options), the kernel compiled once;
    its failures as hints, those of compiling named by `compile_mistake(error lines)` where it
    returns a hint (the exercise's usual mistakes), else by the compiler's first line."""
    try:
        with compiled(kernel, {name: a.dtype for name, a in arrays.items()}, main) as program:
            return [program.run({**arrays, **inputs}, **options, **run_options) for inputs, options in runs]
    except KernelFailed as err:
        if err.kind == "compile":
            raise NotYet(compile_failure(kernel, str(err), compile_mistake)) from None
        if err.kind == "hang":
            loop = endless_loop(kernel)
            barrier = ("a __syncthreads() that not every thread of the block reaches waits forever (put it where every "
                       "thread passes), or a loop that never ends" if re.search(r"__syncthreads\s*\(", kernel) else
                       "a loop that never ends (its variable never changes, or its condition never turns false)")
            raise NotYet(f"your kernel never finished (run on the CPU): {loop or barrier}") from None
        if str(err).startswith(_PAST_SHARED):
            raise NotYet(f"your kernel writes past its shared memory array (run on the CPU, it{str(err)[len(_PAST_SHARED):]}): "
                         "keep every index below the array's size") from None
        raise NotYet(f"your kernel reads or writes outside its arrays (run on the CPU: {err}): keep every index "
                     "inside its array") from None


_PAST_SHARED = "past shared memory: it"  # the start of PRELUDE's line on a write past the dynamic shared memory
