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
