// The school's Gray-Scott step in CUDA, three ways: one thread a cell (CuPy's `elementwise`, `raw`
// and `graph` formulations), one thread a strip of a column (CuPy's `strip`, and cuPyNumeric's
// `task` formulation on a GPU), and several steps per launch on tiles in shared memory (CuPy's
// `multistep`, at the end of the file). In between, three variants that the CuPy tutorial
// measures against these: threads mapped across rows (coalescing), a tile in shared memory, and
// the stencil and parameters in constant memory.

// The update of one cell from its U, V and their Laplacians, written to *u_out and *v_out: dt
// multiplies every term.
__device__ __forceinline__ void gray_scott_update(
    float uc, float vc, float lu, float lv, float du, float dv, float feed, float kill, float dt,
    float* __restrict__ u_out, float* __restrict__ v_out)
{
    const float uvv = uc * vc * vc;
    *u_out = uc + dt * (du * lu - uvv + feed * (1.0f - uc));
    *v_out = vc + dt * (dv * lv + uvv - (feed + kill) * vc);
}

// How many cells of the 3 x 3 window of (row, col) lie inside the grid: 9 inside, 6 on an edge, 4
// in a corner. With the all-ones stencil, L(a) = window sum (zero outside the grid) - count * a.
__device__ __forceinline__ float window_cells(int row, int col, int rows, int cols)
{
    return (3 - (row == 0) - (row == rows - 1)) * (3 - (col == 0) - (col == cols - 1));
}

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
    gray_scott_update(uc, vc, lu, lv, du, dv, feed, kill, dt, u_next + cell, v_next + cell);
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
    float above_u = row_sum(u, first_row - 1, col, rows, cols), here_u = row_sum(u, first_row, col, rows, cols);
    float above_v = row_sum(v, first_row - 1, col, rows, cols), here_v = row_sum(v, first_row, col, rows, cols);
#pragma unroll
    for (int k = 0; k < STRIP_ROWS; ++k) {
        const int row = first_row + k;
        if (row >= rows) break;
        const float below_u = row_sum(u, row + 1, col, rows, cols), below_v = row_sum(v, row + 1, col, rows, cols);
        const int cell = row * cols + col;
        const float uc = u[cell], vc = v[cell];
        const float in_grid = window_cells(row, col, rows, cols);
        const float lu = above_u + here_u + below_u - in_grid * uc;
        const float lv = above_v + here_v + below_v - in_grid * vc;
        gray_scott_update(uc, vc, lu, lv, du, dv, feed, kill, dt, u_next + cell, v_next + cell);
        above_u = here_u, here_u = below_u;
        above_v = here_v, here_v = below_v;
    }
}

// gray_scott_step with the threads mapped the other way round: threadIdx.x runs along rows. The
// 32 threads of a warp then read 32 addresses `cols` floats apart, one memory transaction each,
// where gray_scott_step's warp reads 32 consecutive floats in one or two (coalesced).
extern "C" __global__ void gray_scott_step_transposed(
    const float* __restrict__ u, const float* __restrict__ v,
    float* __restrict__ u_next, float* __restrict__ v_next,
    int rows, int cols, float du, float dv, float feed, float kill, float dt)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    const int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        gray_scott_cell(u, v, u_next, v_next, row, col, rows, cols, du, dv, feed, kill, dt);
    }
}

// One step, one thread a cell, on blocks of TILE_COLS x TILE_ROWS threads. A block first copies its
// tile of U and V with a one-cell halo into shared memory (zero outside the grid), waits for all
// its threads, then sums each window there: a cell is read from global memory by the 1.3 blocks
// (on average, for a 32 x 8 tile) whose tile or halo holds it, instead of by the 9 threads of
// gray_scott_step; the 9 window reads a cell come from shared memory.
#ifndef TILE_COLS
#define TILE_COLS 32
#endif
#ifndef TILE_ROWS
#define TILE_ROWS 8
#endif

extern "C" __global__ void gray_scott_tiled(
    const float* __restrict__ u, const float* __restrict__ v,
    float* __restrict__ u_next, float* __restrict__ v_next,
    int rows, int cols, float du, float dv, float feed, float kill, float dt)
{
    __shared__ float tile_u[TILE_ROWS + 2][TILE_COLS + 2];
    __shared__ float tile_v[TILE_ROWS + 2][TILE_COLS + 2];
    // The grid cell of the tile's corner (halo included), then the tile loaded by all threads.
    const int top = blockIdx.y * TILE_ROWS - 1, left = blockIdx.x * TILE_COLS - 1;
    for (int k = threadIdx.y * TILE_COLS + threadIdx.x; k < (TILE_ROWS + 2) * (TILE_COLS + 2);
         k += TILE_ROWS * TILE_COLS) {
        const int r = k / (TILE_COLS + 2), c = k % (TILE_COLS + 2);
        const int row = top + r, col = left + c;
        const bool inside = row >= 0 && row < rows && col >= 0 && col < cols;
        tile_u[r][c] = inside ? u[row * cols + col] : 0.0f;
        tile_v[r][c] = inside ? v[row * cols + col] : 0.0f;
    }
    __syncthreads();
    const int row = top + 1 + threadIdx.y, col = left + 1 + threadIdx.x;
    if (row >= rows || col >= cols) return;
    float sum_u = 0.0f, sum_v = 0.0f;
#pragma unroll
    for (int r = 0; r < 3; ++r) {
#pragma unroll
        for (int c = 0; c < 3; ++c) {
            sum_u += tile_u[threadIdx.y + r][threadIdx.x + c];
            sum_v += tile_v[threadIdx.y + r][threadIdx.x + c];
        }
    }
    const float uc = tile_u[threadIdx.y + 1][threadIdx.x + 1], vc = tile_v[threadIdx.y + 1][threadIdx.x + 1];
    const float in_grid = window_cells(row, col, rows, cols);
    const int cell = row * cols + col;
    gray_scott_update(uc, vc, sum_u - in_grid * uc, sum_v - in_grid * vc, du, dv, feed, kill, dt,
                      u_next + cell, v_next + cell);
}

// The stencil's nine weights (row by row) and the model's parameters in constant memory, set from
// the host (CuPy: RawModule.get_global("step_constants")) before the launches. Every thread of a
// warp reads the same address at the same time, which the constant cache serves to all 32 at once.
struct StepConstants {
    float weights[9];
    float du, dv, feed, kill, dt;
};
__constant__ StepConstants step_constants;

// One step, one thread a cell, as gray_scott_step, with any 3 x 3 stencil:
// L(a) = sum over the window of w * (a[n] - a), neighbours outside the grid left out.
extern "C" __global__ void gray_scott_step_constant(
    const float* __restrict__ u, const float* __restrict__ v,
    float* __restrict__ u_next, float* __restrict__ v_next, int rows, int cols)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols) return;
    const int cell = row * cols + col;
    const float uc = u[cell], vc = v[cell];
    float lu = 0.0f, lv = 0.0f;
#pragma unroll
    for (int dr = -1; dr <= 1; ++dr) {
#pragma unroll
        for (int dc = -1; dc <= 1; ++dc) {
            if (row + dr >= 0 && row + dr < rows && col + dc >= 0 && col + dc < cols) {
                const int neighbour = cell + dr * cols + dc;
                const float w = step_constants.weights[(dr + 1) * 3 + dc + 1];
                lu += w * (u[neighbour] - uc);
                lv += w * (v[neighbour] - vc);
            }
        }
    }
    const StepConstants& p = step_constants;
    gray_scott_update(uc, vc, lu, lv, p.du, p.dv, p.feed, p.kill, p.dt, u_next + cell, v_next + cell);
}

// Several steps per launch (CuPy's `multistep`; temporal_blocking.py explains the scheme and holds
// the same index arithmetic in Python, tested against the model on a CPU). A block copies its
// region (its FUSED_TILE_ROWS x FUSED_TILE_COLS tile and a halo of FUSED_HALO cells, zero outside
// the grid) into shared memory, advances it `steps` <= FUSED_HALO steps there, each step on a
// region one cell narrower on every side, and writes the tile's cells of the last step to memory.
#ifndef FUSED_TILE_COLS
#define FUSED_TILE_COLS 112
#endif
#ifndef FUSED_TILE_ROWS
#define FUSED_TILE_ROWS 48
#endif
#ifndef FUSED_HALO
#define FUSED_HALO 8
#endif
#define FUSED_REGION_COLS (FUSED_TILE_COLS + 2 * FUSED_HALO)
#define FUSED_REGION_ROWS (FUSED_TILE_ROWS + 2 * FUSED_HALO)
#define FUSED_REGION_CELLS (FUSED_REGION_COLS * FUSED_REGION_ROWS)

// The sum of the cells (r, c - 1), (r, c), (r, c + 1) of a region in shared memory, whose cells
// outside the grid hold zero; *centre gets (r, c).
__device__ __forceinline__ float region_row_sum(const float* a, int r, int c, float* centre)
{
    const float* line = a + r * FUSED_REGION_COLS + c;
    *centre = line[0];
    return line[-1] + line[0] + line[1];
}

// One fused step: the region's rows [first, end) and columns [first, col_end) from a_u, a_v, each
// thread a strip of rows of some columns (equal strips for the threadIdx.y rows of threads, the
// last shorter), its row sums in registers. The launch's last step (LAST) writes the grid's
// u_next, v_next (then the computed cells are the tile); the others the region's b_u, b_v. Cells
// outside the grid are never written: they stay zero.
template <bool LAST>
__device__ __forceinline__ void fused_step(
    const float* a_u, const float* a_v, float* b_u, float* b_v,
    float* __restrict__ u_next, float* __restrict__ v_next, int first, int top, int left,
    int rows, int cols, float du, float dv, float feed, float kill, float dt)
{
    const int end = FUSED_REGION_ROWS - first, col_end = FUSED_REGION_COLS - first;
    const int length = (end - first + (int) blockDim.y - 1) / (int) blockDim.y;
    const int strip_start = first + (int) threadIdx.y * length;
    const int strip_first = strip_start < end ? strip_start : end;
    const int strip_end = strip_first + length < end ? strip_first + length : end;
    for (int c = first + (int) threadIdx.x; c < col_end; c += (int) blockDim.x) {
        const int col = left + c;
        if (col < 0 || col >= cols || strip_first == strip_end) continue;
        const float col_cells = 3 - (col == 0) - (col == cols - 1);
        float centre_u, centre_v, below_centre_u, below_centre_v;
        float above_u = region_row_sum(a_u, strip_first - 1, c, &centre_u);
        float above_v = region_row_sum(a_v, strip_first - 1, c, &centre_v);
        float here_u = region_row_sum(a_u, strip_first, c, &centre_u);
        float here_v = region_row_sum(a_v, strip_first, c, &centre_v);
        for (int r = strip_first; r < strip_end; ++r) {
            const float below_u = region_row_sum(a_u, r + 1, c, &below_centre_u);
            const float below_v = region_row_sum(a_v, r + 1, c, &below_centre_v);
            const int row = top + r;
            if (row >= 0 && row < rows) {
                const float in_grid = (3 - (row == 0) - (row == rows - 1)) * col_cells;
                const float lu = above_u + here_u + below_u - in_grid * centre_u;
                const float lv = above_v + here_v + below_v - in_grid * centre_v;
                if (LAST) {
                    gray_scott_update(centre_u, centre_v, lu, lv, du, dv, feed, kill, dt,
                                      u_next + row * cols + col, v_next + row * cols + col);
                } else {
                    gray_scott_update(centre_u, centre_v, lu, lv, du, dv, feed, kill, dt,
                                      b_u + r * FUSED_REGION_COLS + c, b_v + r * FUSED_REGION_COLS + c);
                }
            }
            above_u = here_u, here_u = below_u, centre_u = below_centre_u;
            above_v = here_v, here_v = below_v, centre_v = below_centre_v;
        }
    }
}

// Launched on blocks of any shape, with 4 * FUSED_REGION_CELLS floats of dynamic shared memory:
// U and V of even steps, then U and V of odd steps.
extern "C" __global__ void gray_scott_fused(
    const float* __restrict__ u, const float* __restrict__ v,
    float* __restrict__ u_next, float* __restrict__ v_next,
    int rows, int cols, float du, float dv, float feed, float kill, float dt, int steps)
{
    extern __shared__ float region[];
    const int top = blockIdx.y * FUSED_TILE_ROWS - FUSED_HALO, left = blockIdx.x * FUSED_TILE_COLS - FUSED_HALO;
    // The ring of the region that a launch of fewer than FUSED_HALO steps does not need.
    const int unused = FUSED_HALO - steps;
    const int threads = blockDim.x * blockDim.y, me = threadIdx.y * blockDim.x + threadIdx.x;
    const int load_rows = FUSED_REGION_ROWS - 2 * unused, load_cols = FUSED_REGION_COLS - 2 * unused;
    for (int k = me; k < load_rows * load_cols; k += threads) {
        const int r = unused + k / load_cols, c = unused + k % load_cols;
        const int row = top + r, col = left + c, at = r * FUSED_REGION_COLS + c;
        if (row >= 0 && row < rows && col >= 0 && col < cols) {
            region[at] = u[row * cols + col];
            region[FUSED_REGION_CELLS + at] = v[row * cols + col];
        } else {  // absent at every step: zero in both buffers, never written
#pragma unroll
            for (int array = 0; array < 4; ++array) region[array * FUSED_REGION_CELLS + at] = 0.0f;
        }
    }
    __syncthreads();
    for (int step = 1; step < steps; ++step) {
        float* a = region + ((step - 1) % 2) * 2 * FUSED_REGION_CELLS;
        float* b = region + (step % 2) * 2 * FUSED_REGION_CELLS;
        fused_step<false>(a, a + FUSED_REGION_CELLS, b, b + FUSED_REGION_CELLS, u_next, v_next, unused + step,
                          top, left, rows, cols, du, dv, feed, kill, dt);
        __syncthreads();
    }
    float* a = region + ((steps - 1) % 2) * 2 * FUSED_REGION_CELLS;
    fused_step<true>(a, a + FUSED_REGION_CELLS, nullptr, nullptr, u_next, v_next, FUSED_HALO, top, left,
                     rows, cols, du, dv, feed, kill, dt);
}
