// The CUDA C++ twins of the four Rust kernels in kernels-rs/: the same algorithms, the
// same signatures and the same launch shapes, so the two can be timed against each other.
// streamlab compiles this file at run time with NVRTC (src/baseline.rs); NVRTC provides
// size_t and the math functions (sinf, cosf, sqrtf, fmaf) without any #include.

// Fill a rows x cols row-major matrix with `value`.
// 2-D grid: x runs along the columns, y along the rows.
extern "C" __global__ void fill(float *matrix, int rows, int cols, float value)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows || col >= cols)
        return;
    matrix[(size_t)row * cols + col] = value;
}

// c = a * b, with a: rows x aligned, b: aligned x cols, c: rows x cols.
// One thread per cell of c; the dot product is summed in order with fused multiply-adds.
extern "C" __global__ void matmul(const float *a, const float *b, float *c,
                                  int rows, int cols, int aligned)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows || col >= cols)
        return;
    const float *a_row = a + (size_t)row * aligned;
    float sum = 0.0f;
    for (int k = 0; k < aligned; k++)
        sum = fmaf(a_row[k], b[(size_t)k * cols + col], sum);
    c[(size_t)row * cols + col] = sum;
}

// The CUDA Handbook's AddKernel: a grid-stride loop over n ints, each becoming
// in[i] + add_value * cycles by `cycles` separate additions. `volatile` keeps the
// compiler from folding the loop into one multiply, so the run time grows with cycles.
extern "C" __global__ void add_kernel(int *out, const int *in, size_t n,
                                      int add_value, int cycles)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)blockDim.x * gridDim.x) {
        volatile int value = in[i];
        for (int j = 0; j < cycles; j++)
            value += add_value;
        out[i] = value;
    }
}

// b[i] = a[i] + sqrt(sin(i)^2 + cos(i)^2) for i = offset + thread index, i < n.
// The CUDA math library already gives the C name `sincos` to sincos(double, double*,
// double*), so this kernel is `sincos_kernel` here and streamlab renames its PTX entry
// to `sincos`, the name the Rust kernel has.
extern "C" __global__ void sincos_kernel(const float *a, float *b, unsigned offset,
                                         unsigned n)
{
    unsigned i = offset + blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = (float)i;
    float s = sinf(x);
    float c = cosf(x);
    b[i] = a[i] + sqrtf(fmaf(s, s, c * c));
}
