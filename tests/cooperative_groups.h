// CUDA's <cooperative_groups.h> as the CPU harness has it (tests/cuda_threads_on_cpu.h, included
// first): the grid's barrier is the one every thread of launch_cooperative waits at. Found before
// any system header because the tests compile with -I tests/.
namespace cooperative_groups {
struct grid_group {
    void sync() const { pthread_barrier_wait(&grid_barrier); }
};
inline grid_group this_grid() { return {}; }
}  // namespace cooperative_groups
