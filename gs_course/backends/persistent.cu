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

// Rows of a strip a thread computes between two of its block's barriers (a compile-time constant,
// so that the loop over them unrolls and their new values stay in registers; see on_chip_step).
#ifndef PERSISTENT_CHUNK
#define PERSISTENT_CHUNK 8
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

// Cells a thread moves at once in an exchange: their loads are issued together, then their stores,
// so that the latencies of global memory (which the barrier after them waits for) overlap.
#define BAND_BATCH 3

// The cells of a rows x cols rectangle within `width` of its edge, shared by a block's threads
// BAND_BATCH at a time: gather(j, r, c) for each cell j of a batch (r and c relative to the
// rectangle: it loads), then scatter(j) for each (it stores).
template <class Gather, class Scatter>
__device__ __forceinline__ void for_band(int rows, int cols, int width, Gather gather, Scatter scatter)
{
    const int caps = 2 * width < rows ? 2 * width : rows;   // rows of the top and bottom bands
    const int sides = 2 * width < cols ? 2 * width : cols;  // columns of the sides between them
    const int cells = caps * cols + (rows - caps) * sides;
    for (int base = threadIdx.x; base < cells; base += BAND_BATCH * blockDim.x) {
#pragma unroll
        for (int j = 0; j < BAND_BATCH; ++j) {
            const int k = base + j * (int) blockDim.x, side = k - caps * cols;
            if (k < caps * cols) {
                gather(j, near_edge(k / cols, rows, width), k % cols);
            } else if (k < cells) {
                gather(j, width + side / sides, near_edge(side % sides, cols, width));
            }
        }
#pragma unroll
        for (int j = 0; j < BAND_BATCH; ++j) {
            if (base + j * (int) blockDim.x < cells) scatter(j);
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

// Whether a step on the region's rows [ring, region_rows - ring) computes its row r: in them and
// in the grid.
__device__ __forceinline__ bool row_computed(int r, int region_rows, int ring, int top, int rows)
{
    return r >= ring && r < region_rows - ring && top + r >= 0 && top + r < rows;
}

// Writes a new value of the region's row r, column c, where the step computes it.
__device__ __forceinline__ void store_computed(float* region, int region_rows, int region_cols, int ring, int top,
                                               int rows, int r, int c, float value)
{
    if (row_computed(r, region_rows, ring, top, rows)) region[r * region_cols + c] = value;
}

// One step on the region's rows and columns [ring, size - ring) (the rest left as it is), IN PLACE:
// the region has one copy in shared memory (two would not fit on chip for the course grid). Each
// thread walks down a strip of `strip` rows of one column, row sums in registers, in chunks of
// PERSISTENT_CHUNK rows with a barrier of the block after each chunk. A row's old value is read
// last by the threads of its strip while they compute the row above it (or, for a strip's first
// row, by the strip above in its last chunk): so the first row of a chunk is written at once, its
// other rows after the chunk's barrier, and the strip's first row after the last barrier.
__device__ __forceinline__ void on_chip_step(
    float* region_u, float* region_v, int region_rows, int region_cols, int strip, int ring, int top, int left,
    int rows, int cols, float du, float dv, float feed, float kill, float dt)
{
    // Strips cover the region but its outermost ring (whose neighbours are not on chip).
    const int strip_cols = region_cols - 2;
    const int c = 1 + (int) threadIdx.x % strip_cols;
    const int first = 1 + (int) threadIdx.x / strip_cols * strip;
    const int end = first + strip < region_rows - 1 ? first + strip : region_rows - 1;
    const int col = left + c;
    const bool column_computed = c >= ring && c < region_cols - ring && col >= 0 && col < cols && first < end;
    float centre_u = 0.0f, centre_v = 0.0f, above_u = 0.0f, above_v = 0.0f, here_u = 0.0f, here_v = 0.0f;
    if (column_computed) {
        above_u = on_chip_row_sum(region_u, region_cols, first - 1, c, &centre_u);
        above_v = on_chip_row_sum(region_v, region_cols, first - 1, c, &centre_v);
        here_u = on_chip_row_sum(region_u, region_cols, first, c, &centre_u);
        here_v = on_chip_row_sum(region_v, region_cols, first, c, &centre_v);
    }
    float next_u[PERSISTENT_CHUNK], next_v[PERSISTENT_CHUNK], first_u = 0.0f, first_v = 0.0f;
    const int chunks = (strip + PERSISTENT_CHUNK - 1) / PERSISTENT_CHUNK;  // the same for every thread
    for (int chunk = 0; chunk < chunks; ++chunk) {
        const int chunk_first = first + chunk * PERSISTENT_CHUNK;
        if (column_computed) {
#pragma unroll
            for (int k = 0; k < PERSISTENT_CHUNK; ++k) {
                const int r = chunk_first + k, row = top + r;
                if (r >= end) break;
                float below_centre_u, below_centre_v;
                const float below_u = on_chip_row_sum(region_u, region_cols, r + 1, c, &below_centre_u);
                const float below_v = on_chip_row_sum(region_v, region_cols, r + 1, c, &below_centre_v);
                if (row_computed(r, region_rows, ring, top, rows)) {  // the rows above are still read
                    const float in_grid = window_cells(row, col, rows, cols);
                    gray_scott_update(centre_u, centre_v, above_u + here_u + below_u - in_grid * centre_u,
                                      above_v + here_v + below_v - in_grid * centre_v, du, dv, feed, kill, dt,
                                      &next_u[k], &next_v[k]);
                }
                above_u = here_u, here_u = below_u, centre_u = below_centre_u;
                above_v = here_v, here_v = below_v, centre_v = below_centre_v;
            }
            if (chunk == 0) {
                first_u = next_u[0], first_v = next_v[0];
            } else {
                store_computed(region_u, region_rows, region_cols, ring, top, rows, chunk_first, c, next_u[0]);
                store_computed(region_v, region_rows, region_cols, ring, top, rows, chunk_first, c, next_v[0]);
            }
        }
        __syncthreads();
        if (column_computed) {
#pragma unroll
            for (int k = 1; k < PERSISTENT_CHUNK; ++k) {
                if (chunk_first + k >= end) break;
                store_computed(region_u, region_rows, region_cols, ring, top, rows, chunk_first + k, c, next_u[k]);
                store_computed(region_v, region_rows, region_cols, ring, top, rows, chunk_first + k, c, next_v[k]);
            }
        }
    }
    if (column_computed) {
        store_computed(region_u, region_rows, region_cols, ring, top, rows, first, c, first_u);
        store_computed(region_v, region_rows, region_cols, ring, top, rows, first, c, first_v);
    }
    __syncthreads();
}

// Launched on (blocks along columns, blocks along rows) blocks of PERSISTENT_THREADS or fewer
// threads (at least (tile_cols + 2 halo - 2) x ceil((tile_rows + 2 halo - 2) / strip)),
// every block resident at once (a cooperative launch), with 2 * (tile_rows + 2 halo) *
// (tile_cols + 2 halo) floats of dynamic shared memory: `steps` >= 1 steps from (u, v) to
// (u_next, v_next), an exchange of borders every `depth` (1 to halo) steps.
extern "C" __global__ void __launch_bounds__(PERSISTENT_THREADS, 1) gray_scott_persistent(
    float* u, float* v, float* u_next, float* v_next,
    int rows, int cols, float du, float dv, float feed, float kill, float dt,
    int steps, int tile_rows, int tile_cols, int halo, int depth, int strip)
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
            on_chip_step(region_u, region_v, region_rows, region_cols, strip, halo - phase + step, top, left, rows, cols,
                         du, dv, feed, kill, dt);
        }
        done += phase;
        if (done == steps) break;
        float* border_u = exchanges % 2 ? u : u_next;
        float* border_v = exchanges % 2 ? v : v_next;
        float moved_u[BAND_BATCH], moved_v[BAND_BATCH];
        int to[BAND_BATCH];  // where cell j of a batch goes, -1 outside the grid
        for_band(tile_rows, tile_cols, halo, [&](int j, int r, int c) {
            const int row = top + halo + r, col = left + halo + c, at = (halo + r) * region_cols + halo + c;
            to[j] = row < rows && col < cols ? row * cols + col : -1;
            moved_u[j] = region_u[at], moved_v[j] = region_v[at];
        }, [&](int j) {
            if (to[j] >= 0) border_u[to[j]] = moved_u[j], border_v[to[j]] = moved_v[j];
        });
        grid.sync();
        // The ring: the region's cells within `halo` of its edge, i.e. all but the tile.
        for_band(region_rows, region_cols, halo, [&](int j, int r, int c) {
            const int row = top + r, col = left + c;
            to[j] = row >= 0 && row < rows && col >= 0 && col < cols ? r * region_cols + c : -1;
            if (to[j] >= 0) moved_u[j] = border_u[row * cols + col], moved_v[j] = border_v[row * cols + col];
        }, [&](int j) {
            if (to[j] >= 0) region_u[to[j]] = moved_u[j], region_v[to[j]] = moved_v[j];
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
