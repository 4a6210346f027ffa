// Just enough of CUDA for gray_scott.cu's and persistent.cu's kernels to run on a CPU, compiled by
// g++ as C++ (test harness of tests/test_multistep.py): every thread of a block on a thread of its
// own, __syncthreads() a barrier between them. `launch` runs the blocks one after another, shared
// memory one array (`region`); `launch_cooperative` runs every thread of every block at once, each
// block with its own barrier and its own dynamic shared memory, and cooperative_groups' grid
// barrier (tests/cooperative_groups.h) waits for all of them, as on a GPU.
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <utility>
#include <vector>

struct dim3 {
    unsigned int x, y, z;
};
static thread_local dim3 threadIdx, blockIdx;
static dim3 blockDim;
static thread_local pthread_barrier_t* block_barrier;  // the barrier of this thread's block
static pthread_barrier_t grid_barrier;                 // every thread of a cooperative launch
static inline void __syncthreads() { pthread_barrier_wait(block_barrier); }
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
#define __constant__
#define __shared__
#define __launch_bounds__(...)
extern "C" float region[1 << 20];  // the dynamic shared memory of gray_scott_fused
float region[1 << 20];
// Dynamic shared memory as the course's checkers rewrite it (gs_course.cuda_on_cpu), here the
// arena of this thread's block in a cooperative launch.
static thread_local float* shared_arena;

template <class F> struct ThreadStart {
    F* kernel;
    dim3 block, thread;
    pthread_barrier_t* barrier;
    float* shared;
};

template <class F> static void* run_thread(void* arg)
{
    ThreadStart<F>* start = static_cast<ThreadStart<F>*>(arg);
    blockIdx = start->block, threadIdx = start->thread;
    block_barrier = start->barrier, shared_arena = start->shared;
    (*start->kernel)();
    return nullptr;
}

// Starts one thread for each of `starts` and waits for them all.
template <class F> static void run_threads(std::vector<ThreadStart<F>>& starts)
{
    std::vector<pthread_t> ids(starts.size());
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 1 << 20);
    for (size_t t = 0; t < starts.size(); ++t) {
        if (pthread_create(&ids[t], &attributes, run_thread<F>, &starts[t]) != 0) {
            fprintf(stderr, "cannot start thread %zu of %zu\n", t, starts.size());
            exit(3);
        }
    }
    for (pthread_t id : ids) pthread_join(id, nullptr);
    pthread_attr_destroy(&attributes);
}

// Runs kernel() on a grid of `grid` blocks of `block` threads, one block after another.
template <class F> static void launch(dim3 grid, dim3 block, F kernel)
{
    const unsigned int threads = block.x * block.y;
    blockDim = block;
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, nullptr, threads);
    for (unsigned int y = 0; y < grid.y; ++y) {
        for (unsigned int x = 0; x < grid.x; ++x) {
            std::vector<ThreadStart<F>> starts(threads);
            for (unsigned int t = 0; t < threads; ++t)
                starts[t] = {&kernel, {x, y, 0}, {t % block.x, t / block.x, 0}, &barrier, region};
            run_threads(starts);
        }
    }
    pthread_barrier_destroy(&barrier);
}

// Runs kernel() on every thread of a grid of `grid` blocks of `block.x` threads at once, each
// block with `shared_floats` of its own dynamic shared memory, filled with NaN (a kernel that
// reads a cell it never wrote gets NaN into its results).
template <class F> static void launch_cooperative(dim3 grid, dim3 block, size_t shared_floats, F kernel)
{
    const unsigned int blocks = grid.x * grid.y, threads = block.x;
    blockDim = block;
    std::vector<pthread_barrier_t> barriers(blocks);
    std::vector<std::vector<float>> shared(blocks, std::vector<float>(shared_floats, NAN));
    pthread_barrier_init(&grid_barrier, nullptr, blocks * threads);
    std::vector<ThreadStart<F>> starts;
    for (unsigned int b = 0; b < blocks; ++b) {
        pthread_barrier_init(&barriers[b], nullptr, threads);
        for (unsigned int t = 0; t < threads; ++t)
            starts.push_back({&kernel, {b % grid.x, b / grid.x, 0}, {t, 0, 0}, &barriers[b], shared[b].data()});
    }
    run_threads(starts);
    for (pthread_barrier_t& barrier : barriers) pthread_barrier_destroy(&barrier);
    pthread_barrier_destroy(&grid_barrier);
}

// The tests' programs: U then V (float32, `cells` each) from stdin, then for each of the
// `launches` numbers of steps, launch_steps(u, v, u_next, v_next, steps) and the two pairs swapped,
// then U and V to stdout. Returns main's exit status.
template <class F> static int launches_from_stdin(int cells, int launches, char** steps, F launch_steps)
{
    std::vector<float> state(4 * cells);
    if (fread(state.data(), sizeof(float), 2 * cells, stdin) != (size_t) (2 * cells)) return 2;
    float *u = &state[0], *v = u + cells, *u_next = v + cells, *v_next = u_next + cells;
    for (int k = 0; k < launches; ++k) {
        launch_steps(u, v, u_next, v_next, atoi(steps[k]));
        std::swap(u, u_next), std::swap(v, v_next);
    }
    fwrite(u, sizeof(float), cells, stdout);
    fwrite(v, sizeof(float), cells, stdout);
    return 0;
}
