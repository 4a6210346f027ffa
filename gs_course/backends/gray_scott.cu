// The school's Gray-Scott step in CUDA, two ways: one thread a cell (CuPy's `elementwise`, `raw`
// and `graph` formulations), and one thread a strip of a column (CuPy's `strip`, and
// cuPyNumeric's `task` formulation on a GPU).

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
        // L(a) = window sum (zero outside the grid) - (in-grid cells of the window) * a:
        // 9 inside, 6 on an edge, 4 in a corner.
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
