// The CUDA C++ twins of the Rust kernels in kernels-rs/, written statement for statement
// alike, with the same entry names and parameters: a Rust slice is a pointer and a
// length here. `*_plain` kernels are the write-ups' code; `*_safe` kernels check what
// their safe Rust twins check (a failed check traps, as a Rust panic does on the GPU);
// the others are tuned exactly as their Rust twins are, but for the one statement matmul's
// comment names and the spellings add_kernel's comment names. streamlab compiles this
// file at run time with NVRTC (src/runtime/baseline.rs); NVRTC provides size_t and the
// math functions (sinf, cosf, sincosf, sqrtf, fmaf) from NVIDIA's CUDA math library,
// without any #include.

#define MATMUL_BATCH 8u
#define MATMUL_STEP_BATCHES 4u

// Fill a rows x cols row-major matrix with `value`; 2-D grid, x = column, y = row.
extern "C" __global__ void fill(float *matrix, unsigned rows, unsigned cols, float value)
{
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols)
        return;
    size_t cell = (size_t)row * cols + col;
    matrix[cell] = value;
}

// Safe fill: the same store, the cell's index checked against the matrix's length.
extern "C" __global__ void fill_safe(float *matrix, size_t matrix_len, unsigned rows,
                                     unsigned cols, float value)
{
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols)
        return;
    size_t cell = (size_t)row * cols + col;
    if (cell < matrix_len)
        matrix[cell] = value;
}

// Plain c = a * b (a: rows x aligned, b: aligned x cols, c: rows x cols), one thread per
// cell of c, the wiki's loop.
extern "C" __global__ void matmul_plain(const float *a, size_t a_len, const float *b,
                                        size_t b_len, float *c, size_t c_len, unsigned rows,
                                        unsigned cols, unsigned aligned)
{
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols)
        return;
    float sum = 0.0f;
    for (size_t k = 0; k < aligned; k++)
        sum = fmaf(a[(size_t)row * aligned + k], b[k * cols + col], sum);
    c[(size_t)row * cols + col] = sum;
}

// Safe c = a * b: the wiki's loop, with the checks of the safe Rust twin's slicing (row
// `row` of a and the whole of b once, before the loop; the cell of c).
extern "C" __global__ void matmul_safe(const float *a, size_t a_len, const float *b,
                                       size_t b_len, float *c, size_t c_len, unsigned rows,
                                       unsigned cols, unsigned aligned)
{
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols)
        return;
    if ((size_t)(row + 1) * aligned > a_len || (size_t)aligned * cols > b_len)
        __trap();
    float sum = 0.0f;
    for (size_t k = 0; k < aligned; k++)
        sum = fmaf(a[(size_t)row * aligned + k], b[k * cols + col], sum);
    size_t cell = (size_t)row * cols + col;
    if (cell >= c_len)
        __trap();
    c[cell] = sum;
}

// One batch of the tuned matmul's products: MATMUL_BATCH elements of the row and of the
// column, all loaded before they are multiplied.
struct Batch {
    float row[MATMUL_BATCH];
    float column[MATMUL_BATCH];
};

__device__ __forceinline__ Batch load_batch(const float *a_k, const float *b_k, size_t cols)
{
    Batch batch;
    for (size_t u = 0; u < MATMUL_BATCH; u++) {
        batch.row[u] = a_k[u];
        batch.column[u] = b_k[u * cols];
    }
    return batch;
}

__device__ __forceinline__ float add_batch(const Batch &batch, float sum)
{
    for (size_t u = 0; u < MATMUL_BATCH; u++)
        sum = fmaf(batch.row[u], batch.column[u], sum);
    return sum;
}

// Tuned c = a * b: the same products in the same order, in batches of MATMUL_BATCH
// products, each batch's loads issued before its multiply-adds; a step of the loop
// multiplies the batch loaded during the step before, loads and multiplies
// MATMUL_STEP_BATCHES - 1 more, and loads the batch the next step starts with. Two
// pointers walk the row and the column, and every loop counts a 32-bit number of steps
// fixed before it starts. The one statement that differs from the Rust twin is the last
// loop, over the aligned % MATMUL_BATCH products after the last batch. ptxas schedules
// the main loop differently depending on how this tail is spelled: Rust spells it as one
// more batch with each product guarded, since its kernel runs slower with the tail as a
// loop; here a loop is what NVVM's code runs fastest with, and the guarded batch makes it
// slower. Each side keeps its faster spelling.
extern "C" __global__ void matmul(const float *a, size_t a_len, const float *b, size_t b_len,
                                  float *c, size_t c_len, unsigned rows, unsigned cols,
                                  unsigned aligned)
{
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols)
        return;
    const float *a_k = a + (size_t)row * aligned;
    const float *b_k = b + col;
    float sum = 0.0f;
    unsigned batches = aligned / MATMUL_BATCH;
    if (batches > 0) {
        Batch ahead = load_batch(a_k, b_k, cols);
        a_k += MATMUL_BATCH;
        b_k += MATMUL_BATCH * (size_t)cols;
        unsigned after_first = batches - 1;
        for (unsigned step = 0; step < after_first / MATMUL_STEP_BATCHES; step++) {
            sum = add_batch(ahead, sum);
            for (unsigned next = 1; next < MATMUL_STEP_BATCHES; next++) {
                sum = add_batch(load_batch(a_k, b_k, cols), sum);
                a_k += MATMUL_BATCH;
                b_k += MATMUL_BATCH * (size_t)cols;
            }
            ahead = load_batch(a_k, b_k, cols);
            a_k += MATMUL_BATCH;
            b_k += MATMUL_BATCH * (size_t)cols;
        }
        for (unsigned step = 0; step < after_first % MATMUL_STEP_BATCHES; step++) {
            sum = add_batch(ahead, sum);
            ahead = load_batch(a_k, b_k, cols);
            a_k += MATMUL_BATCH;
            b_k += MATMUL_BATCH * (size_t)cols;
        }
        sum = add_batch(ahead, sum);
    }
    for (unsigned step = 0; step < aligned % MATMUL_BATCH; step++) {
        sum = fmaf(*a_k, *b_k, sum);
        a_k += 1;
        b_k += cols;
    }
    c[(size_t)row * cols + col] = sum;
}

// Plain AddKernel, the CUDA Handbook's: a grid-stride loop over n ints, each becoming
// in[i] + add_value * cycles by `cycles` additions to a `volatile` local.
extern "C" __global__ void add_kernel_plain(int *out, size_t out_len, const int *in,
                                            size_t in_len, int add_value, int cycles)
{
    size_t stride = (size_t)(blockDim.x * gridDim.x);
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < out_len; i += stride) {
        volatile int value = in[i];
        for (int j = 0; j < cycles; j++)
            value += add_value;
        out[i] = value;
    }
}

// Tuned AddKernel: the running sum kept in a register behind an empty assembly barrier,
// so the loop is not folded into one multiply. The Rust twin runs the same sums but
// spells three things out that NVVM's code for this loop gets by itself, since LLVM's
// code for the loop as written here ran slower: a loop of its own for cycles <= 0 (NVVM's
// code streams as fast as a copy loop there), the next index and the loop's test right
// after the load (ptxas overlaps them with it here), and the sums eight a step with the
// rest straight-line (NVVM leaves the rest after its unrolled steps straight-line; LLVM
// left it to a loop of one sum a turn). Written into this kernel, the first two changed
// nothing or made it slower; the third changes NVVM's unrolling (faster at large counts,
// slower at some small ones), so this kernel keeps the Handbook's loop as the reference.
extern "C" __global__ void add_kernel(int *out, size_t out_len, const int *in, size_t in_len,
                                      int add_value, int cycles)
{
    size_t stride = (size_t)(blockDim.x * gridDim.x);
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < out_len; i += stride) {
        int value = in[i];
        for (int j = 0; j < cycles; j++) {
            value += add_value;
            asm volatile("" : "+r"(value));
        }
        out[i] = value;
    }
}

// Safe AddKernel: the tuned kernel over the pairs both arrays have, as the safe Rust
// twin's grid-stride view stops at the shorter length; the register barrier is the same
// (nvptx_kernel::hint::opaque in Rust).
extern "C" __global__ void add_kernel_safe(int *out, size_t out_len, const int *in,
                                           size_t in_len, int add_value, int cycles)
{
    size_t n = out_len < in_len ? out_len : in_len;
    size_t stride = (size_t)(blockDim.x * gridDim.x);
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        int value = in[i];
        for (int j = 0; j < cycles; j++) {
            value += add_value;
            asm volatile("" : "+r"(value));
        }
        out[i] = value;
    }
}

// Plain sincos, the blog's: b[j] = a[j] + sqrt(sin(i)^2 + cos(i)^2) for the global index
// i = offset + j (a and b are one chunk of the arrays), sine and cosine apart.
extern "C" __global__ void sincos_plain(const float *a, size_t a_len, float *b, size_t b_len,
                                        unsigned offset)
{
    unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= b_len)
        return;
    float x = (float)(offset + j);
    float s = sinf(x);
    float c = cosf(x);
    b[j] = a[j] + sqrtf(fmaf(s, s, c * c));
}

// Tuned sincos: the same with one sincosf. The CUDA math library already gives the C name
// `sincos` to sincos(double, double*, double*), so this entry is `sincos_kernel` here and
// streamlab renames it to `sincos` in the PTX, the name the Rust kernel has.
extern "C" __global__ void sincos_kernel(const float *a, size_t a_len, float *b, size_t b_len,
                                         unsigned offset)
{
    unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= b_len)
        return;
    float x = (float)(offset + j);
    float s;
    float c;
    sincosf(x, &s, &c);
    b[j] = a[j] + sqrtf(fmaf(s, s, c * c));
}

// Safe sincos: the tuned kernel, the element checked against both lengths.
extern "C" __global__ void sincos_safe(const float *a, size_t a_len, float *b, size_t b_len,
                                       unsigned offset)
{
    unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= b_len || j >= a_len)
        return;
    float x = (float)(offset + j);
    float s;
    float c;
    sincosf(x, &s, &c);
    b[j] = a[j] + sqrtf(fmaf(s, s, c * c));
}

// out[j] = sinf(offset + j) from CUDA's math library: the library's sine alone.
extern "C" __global__ void math_sinf(float *out, size_t out_len, unsigned offset)
{
    unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < out_len)
        out[j] = sinf((float)(offset + j));
}

// out[j] = cosf(offset + j) from CUDA's math library.
extern "C" __global__ void math_cosf(float *out, size_t out_len, unsigned offset)
{
    unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < out_len)
        out[j] = cosf((float)(offset + j));
}

// (sines[j], cosines[j]) = sincosf(offset + j) from CUDA's math library.
extern "C" __global__ void math_sincosf(float *sines, size_t sines_len, float *cosines,
                                        size_t cosines_len, unsigned offset)
{
    unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < sines_len && j < cosines_len)
        sincosf((float)(offset + j), &sines[j], &cosines[j]);
}

// Copy src into dst (equal lengths) with a grid-stride loop.
extern "C" __global__ void copy_u32(const unsigned *src, size_t src_len, unsigned *dst,
                                    size_t dst_len)
{
    size_t stride = (size_t)(blockDim.x * gridDim.x);
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < dst_len; i += stride)
        dst[i] = src[i];
}

// An empty kernel: what a launch costs on its own.
extern "C" __global__ void empty()
{
}

// Spin for `ns` nanoseconds of the GPU's global timer, then (thread 0 of the block) write
// the nanoseconds spun to elapsed[block].
extern "C" __global__ void spin(unsigned long long *elapsed, size_t elapsed_len,
                                unsigned long long ns)
{
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    unsigned long long now = start;
    while (now - start < ns)
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    size_t block = blockIdx.x;
    if (threadIdx.x == 0 && block < elapsed_len)
        elapsed[block] = now - start;
}
