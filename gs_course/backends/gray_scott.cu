// The school's Gray-Scott step in CUDA, shared by CuPy's `elementwise`, `raw` and `graph`
// formulations and by cuPyNumeric's `task` formulation.

// Computes the next U and V of the cell (row, col) of rows x cols row-major arrays: the 3 x 3
// all-ones stencil with the neighbours outside the grid left out, exactly as the reference, and
// dt multiplying every term of the update.
__device__ __forceinline__ void gray_scott_cell(
    const float* __restrict__ u, const float* __restrict__ v,
    float* __restrict__ u_next, float* __restrict__ v_next,
    int row, int col, int rows, int cols,
    float du, float dv, float feed, float kill, float dt)
{
    const int cell = row * cols + col;
    const float uc = u[cell], vc = v[cell];
    float lu = 0.0f, lv = 0.0f;
    // Constant bounds: the compiler unrolls both loops into nine predicated loads.
#pragma unroll
    for (int dr = -1; dr <= 1; ++dr) {
#pragma unroll
        for (int dc = -1; dc <= 1; ++dc) {
            if (row + dr >= 0 && row + dr < rows && col + dc >= 0 && col + dc < cols) {
                const int neighbour = cell + dr * cols + dc;
                lu += u[neighbour] - uc;
                lv += v[neighbour] - vc;
            }
        }
    }
    const float uvv = uc * vc * vc;
    u_next[cell] = uc + dt * (du * lu - uvv + feed * (1.0f - uc));
    v_next[cell] = vc + dt * (dv * lv + uvv - (feed + kill) * vc);
}

// One step, one thread per cell, on a 2-D grid of 2-D blocks: neighbouring threads of a block
// share rows and columns, so most neighbour reads hit the cache.
extern "C" __global__ void gray_scott_step(
    const float* __restrict__ u, const float* __restrict__ v,
    float* __restrict__ u_next, float* __restrict__ v_next,
    int rows, int cols, float du, float dv, float feed, float kill, float dt)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        gray_scott_cell(u, v, u_next, v_next, row, col, rows, cols, du, dv, feed, kill, dt);
    }
}

// Several steps per launch ("temporal blocking"). A step moves 33 MB through memory for ~40
// floating-point operations a cell: memory bandwidth, not arithmetic, is the limit. So a block
// loads a tile of U and V once, keeps it in shared memory for `steps` <= MAX_STEPS steps and
// writes it back once: memory traffic divided by about `steps`.
//
// A cell's new value needs its neighbours' old ones, so each step the tile's outer ring of
// correct values shrinks by one cell: a block of TILE_ROWS x TILE_COLS threads, one cell each,
// reads a tile with a halo of MAX_STEPS cells and writes only its inner part. Neighbouring
// blocks overlap by 2 x MAX_STEPS cells and compute the overlap twice: cheap arithmetic for
// saved memory traffic. TILE_COLS, TILE_ROWS and MAX_STEPS are compile-time constants (set with
// -D options; the defaults were the fastest measured on an H200).
#ifndef TILE_COLS
#define TILE_COLS 32
#endif
#ifndef TILE_ROWS
#define TILE_ROWS 32
#endif
#ifndef MAX_STEPS
#define MAX_STEPS 2
#endif

extern "C" __global__ void gray_scott_steps(
    const float* __restrict__ u, const float* __restrict__ v,
    float* __restrict__ u_out, float* __restrict__ v_out,
    int rows, int cols, float du, float dv, float feed, float kill, float dt, int steps)
{
    __shared__ float tile_u[TILE_ROWS][TILE_COLS];
    __shared__ float tile_v[TILE_ROWS][TILE_COLS];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * (TILE_ROWS - 2 * MAX_STEPS) - MAX_STEPS + ty;
    const int col = blockIdx.x * (TILE_COLS - 2 * MAX_STEPS) - MAX_STEPS + tx;
    const bool in_grid = row >= 0 && row < rows && col >= 0 && col < cols;
    // Cells outside the grid hold zero, so the window sum is over in-grid cells only, and
    // L(a) = window sum - (in-grid cells of the window) * a: 9 inside, 6 on an edge, 4 in a corner.
    const float window_cells = (3 - (row == 0) - (row == rows - 1)) * (3 - (col == 0) - (col == cols - 1));
    const bool has_neighbours = tx > 0 && tx < TILE_COLS - 1 && ty > 0 && ty < TILE_ROWS - 1;
    float uc = in_grid ? u[row * cols + col] : 0.0f;
    float vc = in_grid ? v[row * cols + col] : 0.0f;
    for (int s = 0; s < steps; ++s) {
        tile_u[ty][tx] = uc;
        tile_v[ty][tx] = vc;
        __syncthreads();  // every cell's value of this step is in shared memory
        if (in_grid && has_neighbours) {
            float sum_u = 0.0f, sum_v = 0.0f;
#pragma unroll
            for (int dr = -1; dr <= 1; ++dr) {
#pragma unroll
                for (int dc = -1; dc <= 1; ++dc) {
                    sum_u += tile_u[ty + dr][tx + dc];
                    sum_v += tile_v[ty + dr][tx + dc];
                }
            }
            const float uvv = uc * vc * vc;
            const float lu = sum_u - window_cells * uc, lv = sum_v - window_cells * vc;
            uc += dt * (du * lu - uvv + feed * (1.0f - uc));
            vc += dt * (dv * lv + uvv - (feed + kill) * vc);
        }
        __syncthreads();  // every thread has read its neighbours before they are overwritten
    }
    // Cells within `steps` of the tile's edge used stale neighbours: only the inner part is written.
    const bool in_output = tx >= MAX_STEPS && tx < TILE_COLS - MAX_STEPS && ty >= MAX_STEPS && ty < TILE_ROWS - MAX_STEPS;
    if (in_grid && in_output) {
        u_out[row * cols + col] = uc;
        v_out[row * cols + col] = vc;
    }
}

// One step, each thread walking down STRIP_ROWS cells of one column. The window sum of a cell is
// the sum of three row sums (the row above, its own, the row below), and each row sum serves the
// three cells that need it: a thread keeps the last two in registers and loads only the next
// row's three cells, for each of U and V: 6 loads a cell instead of the 18 of gray_scott_step.
// (Measured with Nsight Compute on an H200, that kernel is limited by its loads and their
// latency, not by memory bandwidth: the 33 MB working set mostly stays in the 60 MB L2 cache.)
#ifndef STRIP_ROWS
#define STRIP_ROWS 8
#endif

// The sum of a's cells (row, col - 1), (row, col), (row, col + 1) that lie inside the grid.
__device__ __forceinline__ float row_sum(const float* __restrict__ a, int row, int col, int rows, int cols)
{
    if (row < 0 || row >= rows) return 0.0f;
    const float* line = a + row * cols;
    float sum = line[col];
    if (col > 0) sum += line[col - 1];
    if (col < cols - 1) sum += line[col + 1];
    return sum;
}

extern "C" __global__ void gray_scott_strip(
    const float* __restrict__ u, const float* __restrict__ v,
    float* __restrict__ u_next, float* __restrict__ v_next,
    int rows, int cols, float du, float dv, float feed, float kill, float dt)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int first_row = (blockIdx.y * blockDim.y + threadIdx.y) * STRIP_ROWS;
    if (col >= cols || first_row >= rows) return;
    const int cols_in_window = 3 - (col == 0) - (col == cols - 1);
    float above_u = row_sum(u, first_row - 1, col, rows, cols), here_u = row_sum(u, first_row, col, rows, cols);
    float above_v = row_sum(v, first_row - 1, col, rows, cols), here_v = row_sum(v, first_row, col, rows, cols);
#pragma unroll
    for (int k = 0; k < STRIP_ROWS; ++k) {
        const int row = first_row + k;
        if (row >= rows) break;
        const float below_u = row_sum(u, row + 1, col, rows, cols), below_v = row_sum(v, row + 1, col, rows, cols);
        const int cell = row * cols + col;
        const float uc = u[cell], vc = v[cell];
        // L(a) = window sum - (in-grid cells of the window) * a, as in gray_scott_steps.
        const float window_cells = (3 - (row == 0) - (row == rows - 1)) * cols_in_window;
        const float lu = above_u + here_u + below_u - window_cells * uc;
        const float lv = above_v + here_v + below_v - window_cells * vc;
        const float uvv = uc * vc * vc;
        u_next[cell] = uc + dt * (du * lu - uvv + feed * (1.0f - uc));
        v_next[cell] = vc + dt * (dv * lv + uvv - (feed + kill) * vc);
        above_u = here_u, here_u = below_u;
        above_v = here_v, here_v = below_v;
    }
}
