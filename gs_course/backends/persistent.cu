// CuPy's `persistent` formulation: every step of an advance in ONE cooperative launch
// (persistent_tiles.py explains the scheme; compiled after gray_scott.cu, whose gray_scott_update
// and window_cells it uses). Each block owns a fixed tile of the grid for the whole launch and
// keeps it on chip, in shared memory with a ring of `halo` cells around it (its *region*, cells
// outside the grid zero). Between two grid-wide barriers it advances the region `depth` <= `halo`
// steps, each step one cell narrower on every side (as gray_scott_fused does), so that the tile
// is exact after them; then it writes only the cells of its tile within `halo` of the tile's edge
// to global memory, waits at the grid barrier for every block to have done the same, and reads
// its ring back from its neighbours' cells. Memory is crossed once a launch for the state and once
// an exchange for the borders.
//
// The two exchange buffers are the launch's own arrays: exchange 0 goes through (u_next, v_next),
// exchange 1 through (u, v), and so on. A block writes buffer k % 2 only after the barrier of
// exchange k - 1, which every block reaches after it has read buffer (k - 2) % 2 (or, for k = 1,
// after its first load from u, v): no block overwrites cells another may still read. (u, v) do not
// hold the state after the launch.
#include <cooperative_groups.h>

// Rows of one column of the region each thread computes in a step, with their new values held in
// registers until every thread has read the old ones (the region has a single copy in shared
// memory: two would not fit on chip for the course grid). A compile-time constant, so that the
// strip's loop unrolls and its arrays stay in registers.
#ifndef PERSISTENT_STRIP
#define PERSISTENT_STRIP 16
#endif
// Threads a block: tells the compiler how many registers a thread may use.
#ifndef PERSISTENT_THREADS
#define PERSISTENT_THREADS 1024
#endif

// Of the `size` indices along one side of a rectangle, the i-th of those within `width` of either
// end: 0 .. width - 1, then size - width .. size - 1 (all of them where size <= 2 * width).
__device__ __forceinline__ int near_edge(int i, int size, int width)
{
    const int both = 2 * width < size ? 2 * width : size;
    return i < width ? i : size - both + i;
}

// The cells of a rows x cols rectangle within `width` of its edge, shared by a block's threads:
// visit(r, c) for each, r and c relative to the rectangle.
template <class Visit>
__device__ __forceinline__ void for_band(int rows, int cols, int width, Visit visit)
{
    const int caps = 2 * width < rows ? 2 * width : rows;   // rows of the top and bottom bands
    const int sides = 2 * width < cols ? 2 * width : cols;  // columns of the sides between them
    const int cells = caps * cols + (rows - caps) * sides;
    for (int k = threadIdx.x; k < cells; k += blockDim.x) {
        if (k < caps * cols) {
            visit(near_edge(k / cols, rows, width), k % cols);
        } else {
            const int side = k - caps * cols;
            visit(width + side / sides, near_edge(side % sides, cols, width));
        }
    }
}

// The sum of cells (r, c - 1), (r, c), (r, c + 1) of a region row-major with `stride` columns;
// *centre gets (r, c).
__device__ __forceinline__ float on_chip_row_sum(const float* a, int stride, int r, int c, float* centre)
{
    const float* line = a + r * stride + c;
    *centre = line[0];
    return line[-1] + line[0] + line[1];
}

// One step on the region's rows and columns [ring, size - ring) (the rest of the region left as
// it is), in place: each thread computes a strip of PERSISTENT_STRIP rows of one column into
// registers, the block waits until every thread has read the step's old values, then writes them.
__device__ __forceinline__ void on_chip_step(
    float* region_u, float* region_v, int region_rows, int region_cols, int ring, int top, int left,
    int rows, int cols, float du, float dv, float feed, float kill, float dt)
{
    // Strips cover the region but its outermost ring (whose neighbours are not on chip).
    const int strip_cols = region_cols - 2;
    const int c = 1 + (int) threadIdx.x % strip_cols;
    const int first = 1 + (int) threadIdx.x / strip_cols * PERSISTENT_STRIP;
    const int end = first + PERSISTENT_STRIP < region_rows - 1 ? first + PERSISTENT_STRIP : region_rows - 1;
    const int col = left + c;
    const bool column_computed = c >= ring && c < region_cols - ring && col >= 0 && col < cols && first < end;
    float next_u[PERSISTENT_STRIP], next_v[PERSISTENT_STRIP];
    if (column_computed) {
        float centre_u, centre_v, below_centre_u, below_centre_v;
        float above_u = on_chip_row_sum(region_u, region_cols, first - 1, c, &centre_u);
        float above_v = on_chip_row_sum(region_v, region_cols, first - 1, c, &centre_v);
        float here_u = on_chip_row_sum(region_u, region_cols, first, c, &centre_u);
        float here_v = on_chip_row_sum(region_v, region_cols, first, c, &centre_v);
#pragma unroll
        for (int k = 0; k < PERSISTENT_STRIP; ++k) {
            const int r = first + k, row = top + r;
            if (r >= end) break;
            const float below_u = on_chip_row_sum(region_u, region_cols, r + 1, c, &below_centre_u);
            const float below_v = on_chip_row_sum(region_v, region_cols, r + 1, c, &below_centre_v);
            if (r >= ring && r < region_rows - ring && row >= 0 && row < rows) {
                const float in_grid = window_cells(row, col, rows, cols);
                gray_scott_update(centre_u, centre_v, above_u + here_u + below_u - in_grid * centre_u,
                                  above_v + here_v + below_v - in_grid * centre_v, du, dv, feed, kill, dt,
                                  &next_u[k], &next_v[k]);
            }
            above_u = here_u, here_u = below_u, centre_u = below_centre_u;
            above_v = here_v, here_v = below_v, centre_v = below_centre_v;
        }
    }
    __syncthreads();
    if (column_computed) {
#pragma unroll
        for (int k = 0; k < PERSISTENT_STRIP; ++k) {
            const int r = first + k, row = top + r;
            if (r >= end) break;
            if (r >= ring && r < region_rows - ring && row >= 0 && row < rows) {
                region_u[r * region_cols + c] = next_u[k];
                region_v[r * region_cols + c] = next_v[k];
            }
        }
    }
    __syncthreads();
}

// Launched on (blocks along columns, blocks along rows) blocks of PERSISTENT_THREADS or fewer
// threads (at least (tile_cols + 2 halo - 2) x ceil((tile_rows + 2 halo - 2) / PERSISTENT_STRIP)),
// every block resident at once (a cooperative launch), with 2 * (tile_rows + 2 halo) *
// (tile_cols + 2 halo) floats of dynamic shared memory: `steps` >= 1 steps from (u, v) to
// (u_next, v_next), an exchange of borders every `depth` (1 to halo) steps.
extern "C" __global__ void __launch_bounds__(PERSISTENT_THREADS, 1) gray_scott_persistent(
    float* u, float* v, float* u_next, float* v_next,
    int rows, int cols, float du, float dv, float feed, float kill, float dt,
    int steps, int tile_rows, int tile_cols, int halo, int depth)
{
    extern __shared__ float on_chip[];
    const int region_rows = tile_rows + 2 * halo, region_cols = tile_cols + 2 * halo;
    float* region_u = on_chip;
    float* region_v = on_chip + region_rows * region_cols;
    const int top = blockIdx.y * tile_rows - halo, left = blockIdx.x * tile_cols - halo;
    // The whole region from the launch's state; zero outside the grid, where nothing is written.
    for (int k = threadIdx.x; k < region_rows * region_cols; k += blockDim.x) {
        const int row = top + k / region_cols, col = left + k % region_cols;
        const bool inside = row >= 0 && row < rows && col >= 0 && col < cols;
        region_u[k] = inside ? u[row * cols + col] : 0.0f;
        region_v[k] = inside ? v[row * cols + col] : 0.0f;
    }
    __syncthreads();
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    int exchanges = 0;
    for (int done = 0;;) {
        const int phase = depth < steps - done ? depth : steps - done;
        for (int step = 1; step <= phase; ++step) {
            on_chip_step(region_u, region_v, region_rows, region_cols, halo - phase + step, top, left, rows, cols,
                         du, dv, feed, kill, dt);
        }
        done += phase;
        if (done == steps) break;
        float* border_u = exchanges % 2 ? u : u_next;
        float* border_v = exchanges % 2 ? v : v_next;
        for_band(tile_rows, tile_cols, halo, [&](int r, int c) {
            const int row = top + halo + r, col = left + halo + c, at = (halo + r) * region_cols + halo + c;
            if (row < rows && col < cols) {
                border_u[row * cols + col] = region_u[at];
                border_v[row * cols + col] = region_v[at];
            }
        });
        grid.sync();
        // The ring: the region's cells within `halo` of its edge, i.e. all but the tile.
        for_band(region_rows, region_cols, halo, [&](int r, int c) {
            const int row = top + r, col = left + c;
            if (row >= 0 && row < rows && col >= 0 && col < cols) {
                region_u[r * region_cols + c] = border_u[row * cols + col];
                region_v[r * region_cols + c] = border_v[row * cols + col];
            }
        });
        __syncthreads();
        ++exchanges;
    }
    // The last exchange went through (u_next, v_next): wait until every block has read it.
    if (exchanges % 2) grid.sync();
    for (int k = threadIdx.x; k < tile_rows * tile_cols; k += blockDim.x) {
        const int r = k / tile_cols, c = k % tile_cols, row = top + halo + r, col = left + halo + c;
        if (row < rows && col < cols) {
            u_next[row * cols + col] = region_u[(halo + r) * region_cols + halo + c];
            v_next[row * cols + col] = region_v[(halo + r) * region_cols + halo + c];
        }
    }
}
