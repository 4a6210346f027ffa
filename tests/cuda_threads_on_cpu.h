// Just enough of CUDA for gray_scott.cu's kernels to run on a CPU, compiled by g++ as C++ (test
// harness of tests/test_multistep.py): blocks run one after another, the threads of a block each
// on a thread of its own, __syncthreads() a barrier between them, shared memory one array.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

struct dim3 {
    unsigned int x, y, z;
};
static thread_local dim3 threadIdx;
static dim3 blockIdx, blockDim;
static pthread_barrier_t block_barrier;
static inline void __syncthreads() { pthread_barrier_wait(&block_barrier); }
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
#define __constant__
#define __shared__
extern "C" float region[1 << 20];  // the dynamic shared memory of gray_scott_fused
float region[1 << 20];

// Runs kernel() on a grid of `grid` blocks of `block` threads.
template <class F> static void launch(dim3 grid, dim3 block, F kernel)
{
    const unsigned int threads = block.x * block.y;
    blockDim = block;
    pthread_barrier_init(&block_barrier, nullptr, threads);
    struct Start { F* kernel; unsigned int x, y; };
    std::vector<Start> starts(threads);
    std::vector<pthread_t> ids(threads);
    for (blockIdx.y = 0; blockIdx.y < grid.y; ++blockIdx.y) {
        for (blockIdx.x = 0; blockIdx.x < grid.x; ++blockIdx.x) {
            for (unsigned int t = 0; t < threads; ++t) {
                starts[t] = {&kernel, t % block.x, t / block.x};
                pthread_create(&ids[t], nullptr, [](void* arg) -> void* {
                    Start* start = static_cast<Start*>(arg);
                    threadIdx = {start->x, start->y, 0};
                    (*start->kernel)();
                    return nullptr;
                }, &starts[t]);
            }
            for (unsigned int t = 0; t < threads; ++t) pthread_join(ids[t], nullptr);
        }
    }
    pthread_barrier_destroy(&block_barrier);
}
