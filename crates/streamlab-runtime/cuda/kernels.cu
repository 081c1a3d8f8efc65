// The CUDA C++ twins of the Rust kernels in kernels-rs/, written statement for statement
// alike, with the same entry names and parameters: a Rust slice is a pointer and a
// length here. `*_plain` kernels are the write-ups' code; `*_safe` kernels check what
// their safe Rust twins check (a failed check traps, as a Rust panic does on the GPU);
// the others are tuned as their Rust twins are. Entries named `<kernel>_<form>_<how>`
// are other spellings of a form's algorithm (the same products or sums in the same
// order), as kernels-rs/src/spellings.rs holds Rust's: compare-kernels times every
// spelling of a form on each side and keeps the fastest, so each side's best meets the
// other's. streamlab compiles this file at run time with NVRTC (src/baseline.rs);
// NVRTC provides size_t and the math functions (sinf, cosf, sincosf, sqrtf, fmaf, __ldg)
// from NVIDIA's CUDA math library, without any #include.

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

// Plain c = a * b with int indices, as the wiki declares them: 32-bit index arithmetic,
// which the compiler may widen since a signed overflow cannot happen in a valid program
// (compare-kernels times it only where every index fits in an int).
extern "C" __global__ void matmul_plain_int(const float *a, size_t a_len, const float *b,
                                            size_t b_len, float *c, size_t c_len,
                                            unsigned rows, unsigned cols, unsigned aligned)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= (int)rows || col >= (int)cols)
        return;
    float sum = 0.0f;
    for (int k = 0; k < (int)aligned; k++)
        sum = fmaf(a[row * (int)aligned + k], b[k * (int)cols + col], sum);
    c[row * (int)cols + col] = sum;
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
// column, all loaded before they are multiplied; LDG loads each through __ldg (the
// read-only data cache).
struct Batch {
    float row[MATMUL_BATCH];
    float column[MATMUL_BATCH];
};

template <bool LDG>
__device__ __forceinline__ Batch load_batch(const float *a_k, const float *b_k, size_t cols)
{
    Batch batch;
    for (size_t u = 0; u < MATMUL_BATCH; u++) {
        batch.row[u] = LDG ? __ldg(a_k + u) : a_k[u];
        batch.column[u] = LDG ? __ldg(b_k + u * cols) : b_k[u * cols];
    }
    return batch;
}

__device__ __forceinline__ float add_batch(const Batch &batch, float sum)
{
    for (size_t u = 0; u < MATMUL_BATCH; u++)
        sum = fmaf(batch.row[u], batch.column[u], sum);
    return sum;
}

// The tuned matmul's cell, from a_k (the row's first product) and b_k (the column's):
// the products in batches of MATMUL_BATCH, each batch's loads issued before its
// multiply-adds; a step of the loop multiplies the batch loaded during the step before,
// loads and multiplies STEPS - 1 more, and loads the batch the next step starts with.
// Two pointers walk the row and the column, and every loop counts a 32-bit number of
// steps fixed before it starts. The aligned % MATMUL_BATCH products after the last batch
// are a counted loop, or (GUARDED_TAIL) one more batch with each product guarded by its
// index, as the Rust twin spells them: ptxas schedules the main loop differently
// depending on how this tail is spelled.
template <unsigned STEPS, bool GUARDED_TAIL, bool LDG>
__device__ __forceinline__ float matmul_cell(const float *a_k, const float *b_k,
                                             unsigned cols, unsigned aligned)
{
    float sum = 0.0f;
    unsigned batches = aligned / MATMUL_BATCH;
    if (batches > 0) {
        Batch ahead = load_batch<LDG>(a_k, b_k, cols);
        a_k += MATMUL_BATCH;
        b_k += MATMUL_BATCH * (size_t)cols;
        unsigned after_first = batches - 1;
        for (unsigned step = 0; step < after_first / STEPS; step++) {
            sum = add_batch(ahead, sum);
            for (unsigned next = 1; next < STEPS; next++) {
                sum = add_batch(load_batch<LDG>(a_k, b_k, cols), sum);
                a_k += MATMUL_BATCH;
                b_k += MATMUL_BATCH * (size_t)cols;
            }
            ahead = load_batch<LDG>(a_k, b_k, cols);
            a_k += MATMUL_BATCH;
            b_k += MATMUL_BATCH * (size_t)cols;
        }
        for (unsigned step = 0; step < after_first % STEPS; step++) {
            sum = add_batch(ahead, sum);
            ahead = load_batch<LDG>(a_k, b_k, cols);
            a_k += MATMUL_BATCH;
            b_k += MATMUL_BATCH * (size_t)cols;
        }
        sum = add_batch(ahead, sum);
    }
    if (GUARDED_TAIL) {
        unsigned left = aligned % MATMUL_BATCH;
#pragma unroll
        for (unsigned u = 0; u < MATMUL_BATCH; u++)
            if (u < left)
                sum = fmaf(a_k[u], b_k[(size_t)u * cols], sum);
    } else {
        for (unsigned step = 0; step < aligned % MATMUL_BATCH; step++) {
            sum = fmaf(*a_k, *b_k, sum);
            a_k += 1;
            b_k += cols;
        }
    }
    return sum;
}

// Tuned c = a * b: the same products in the same order as the plain loop, batched with one
// batch loaded a step ahead (matmul_cell), MATMUL_STEP_BATCHES batches a step, the tail a
// counted loop.
extern "C" __global__ void matmul(const float *a, size_t a_len, const float *b, size_t b_len,
                                  float *c, size_t c_len, unsigned rows, unsigned cols,
                                  unsigned aligned)
{
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols)
        return;
    c[(size_t)row * cols + col] = matmul_cell<MATMUL_STEP_BATCHES, false, false>(
        a + (size_t)row * aligned, b + col, cols, aligned);
}

// Tuned c = a * b, the tail a guarded batch (as the Rust `matmul` spells it).
extern "C" __global__ void matmul_tuned_guarded_tail(const float *a, size_t a_len,
                                                     const float *b, size_t b_len, float *c,
                                                     size_t c_len, unsigned rows,
                                                     unsigned cols, unsigned aligned)
{
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols)
        return;
    c[(size_t)row * cols + col] = matmul_cell<MATMUL_STEP_BATCHES, true, false>(
        a + (size_t)row * aligned, b + col, cols, aligned);
}

// Tuned c = a * b, two batches a step.
extern "C" __global__ void matmul_tuned_two_step(const float *a, size_t a_len, const float *b,
                                                 size_t b_len, float *c, size_t c_len,
                                                 unsigned rows, unsigned cols,
                                                 unsigned aligned)
{
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols)
        return;
    c[(size_t)row * cols + col] =
        matmul_cell<2, false, false>(a + (size_t)row * aligned, b + col, cols, aligned);
}

// Tuned c = a * b, every load through __ldg (the read-only data cache; Rust has no such
// load in safe or stable code).
extern "C" __global__ void matmul_tuned_ldg(const float *a, size_t a_len, const float *b,
                                            size_t b_len, float *c, size_t c_len,
                                            unsigned rows, unsigned cols, unsigned aligned)
{
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols)
        return;
    c[(size_t)row * cols + col] = matmul_cell<MATMUL_STEP_BATCHES, false, true>(
        a + (size_t)row * aligned, b + col, cols, aligned);
}

// c = a * b with two pointers walking the row and the column, one product a turn.
extern "C" __global__ void matmul_tuned_walk(const float *a, size_t a_len, const float *b,
                                             size_t b_len, float *c, size_t c_len,
                                             unsigned rows, unsigned cols, unsigned aligned)
{
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols)
        return;
    const float *a_k = a + (size_t)row * aligned;
    const float *b_k = b + col;
    float sum = 0.0f;
    for (unsigned k = 0; k < aligned; k++, a_k++, b_k += cols)
        sum = fmaf(*a_k, *b_k, sum);
    c[(size_t)row * cols + col] = sum;
}

// Safe c = a * b with its loads ahead: the checks of matmul_safe, then the tuned cell in the
// Rust matmul_safe's batches (fold_ahead), with the guarded tail: each side keeps its faster
// tail (the Rust fold_ahead takes the products left over one at a time, which ran faster in
// Rust and slower in C++).
extern "C" __global__ void matmul_safe_ahead(const float *a, size_t a_len, const float *b,
                                             size_t b_len, float *c, size_t c_len,
                                             unsigned rows, unsigned cols, unsigned aligned)
{
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols)
        return;
    if ((size_t)(row + 1) * aligned > a_len || (size_t)aligned * cols > b_len)
        __trap();
    float sum = matmul_cell<MATMUL_STEP_BATCHES, true, false>(a + (size_t)row * aligned,
                                                              b + col, cols, aligned);
    size_t cell = (size_t)row * cols + col;
    if (cell >= c_len)
        __trap();
    c[cell] = sum;
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

// The sums of add_repeatedly_by and add_repeatedly_in_pairs after their full steps:
// straight-line, by the bits of cycles below STEP, each behind the barrier.
template <int STEP>
__device__ __forceinline__ int add_rest_by_bits(int value, int add_value, int cycles)
{
#pragma unroll
    for (int bit = STEP / 2; bit > 0; bit /= 2) {
        if (cycles & bit) {
#pragma unroll
            for (int u = 0; u < bit; u++) {
                value += add_value;
                asm volatile("" : "+r"(value));
            }
        }
    }
    return value;
}

// `cycles` additions of add_value to value, each behind an empty assembly barrier (the
// register barrier nvptx_kernel::hint::opaque is in Rust), so the loop is not folded into
// one multiply: STEP a step and the rest straight-line, by the bits of cycles below STEP,
// as kernels_rs::element::add_repeatedly_by spells them.
template <int STEP>
__device__ __forceinline__ int add_repeatedly_by(int value, int add_value, int cycles)
{
    if (cycles > 0) {
        for (int steps = cycles / STEP; steps != 0; steps--) {
#pragma unroll
            for (int u = 0; u < STEP; u++) {
                value += add_value;
                asm volatile("" : "+r"(value));
            }
        }
        value = add_rest_by_bits<STEP>(value, add_value, cycles);
    }
    return value;
}

// add_repeatedly_by's sums, STEP a step and two steps a turn (an odd step first, each
// loop kept as written), then the rest straight-line by the bits of cycles below STEP, as
// kernels_rs::element::add_repeatedly_in_pairs spells them. A turn of 256 sums is where
// ptxas splits the sums' fused pairs evenly between its two integer pipes (IMAD and LEA).
template <int STEP>
__device__ __forceinline__ int add_repeatedly_in_pairs(int value, int add_value, int cycles)
{
    if (cycles > 0) {
        int steps = cycles / STEP;
#pragma unroll 1
        for (int odd = steps % 2; odd != 0; odd--) {
#pragma unroll
            for (int u = 0; u < STEP; u++) {
                value += add_value;
                asm volatile("" : "+r"(value));
            }
        }
#pragma unroll 1
        for (int pairs = steps / 2; pairs != 0; pairs--) {
#pragma unroll
            for (int u = 0; u < 2 * STEP; u++) {
                value += add_value;
                asm volatile("" : "+r"(value));
            }
        }
        value = add_rest_by_bits<STEP>(value, add_value, cycles);
    }
    return value;
}

// The Handbook's sums, one a turn, the running sum behind an empty assembly barrier (NVVM
// unrolls the loop by itself).
__device__ __forceinline__ int add_repeatedly_loop(int value, int add_value, int cycles)
{
    for (int j = 0; j < cycles; j++) {
        value += add_value;
        asm volatile("" : "+r"(value));
    }
    return value;
}

// The Handbook's grid-stride loop over the first n ints, out[i] = sums(in[i]): the loop the
// AddKernel spellings below share, each with its own spelling of the sums.
template <typename Sums>
__device__ __forceinline__ void add_over_grid(int *out, const int *in, size_t n, Sums sums)
{
    size_t stride = (size_t)(blockDim.x * gridDim.x);
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = sums(in[i]);
}

// Tuned AddKernel: the sums 128 a step, two steps a turn, the rest by bits
// (add_repeatedly_in_pairs), over the Handbook's grid-stride loop, as the Rust twin spells
// it. add_kernel_tuned_loop keeps the Handbook's loop of one sum a turn, _by8, _by16 and
// _by32 unroll eight, sixteen and thirty-two a step (NVVM unrolls the steps' loop too),
// and _ahead spells the Rust twin's add_kernel_tuned_ahead (a copy loop at 0 cycles, the
// next index and the loop's test right after the load, the sums eight a step).
extern "C" __global__ void add_kernel(int *out, size_t out_len, const int *in, size_t in_len,
                                      int add_value, int cycles)
{
    add_over_grid(out, in, out_len, [=](int value) {
        return add_repeatedly_in_pairs<128>(value, add_value, cycles);
    });
}

// Tuned AddKernel, the sums sixteen a step.
extern "C" __global__ void add_kernel_tuned_by16(int *out, size_t out_len, const int *in,
                                                 size_t in_len, int add_value, int cycles)
{
    add_over_grid(out, in, out_len, [=](int value) {
        return add_repeatedly_by<16>(value, add_value, cycles);
    });
}

// Tuned AddKernel, the Handbook's loop: the running sum kept in a register behind an empty
// assembly barrier, one sum a turn (NVVM unrolls it by itself).
extern "C" __global__ void add_kernel_tuned_loop(int *out, size_t out_len, const int *in,
                                                 size_t in_len, int add_value, int cycles)
{
    add_over_grid(out, in, out_len, [=](int value) {
        return add_repeatedly_loop(value, add_value, cycles);
    });
}

// Tuned AddKernel, the sums eight a step.
extern "C" __global__ void add_kernel_tuned_by8(int *out, size_t out_len, const int *in,
                                                size_t in_len, int add_value, int cycles)
{
    add_over_grid(out, in, out_len, [=](int value) {
        return add_repeatedly_by<8>(value, add_value, cycles);
    });
}

// Tuned AddKernel, the sums thirty-two a step.
extern "C" __global__ void add_kernel_tuned_by32(int *out, size_t out_len, const int *in,
                                                 size_t in_len, int add_value, int cycles)
{
    add_over_grid(out, in, out_len, [=](int value) {
        return add_repeatedly_by<32>(value, add_value, cycles);
    });
}

// Tuned AddKernel as the Rust twin's add_kernel_tuned_ahead: a copy loop when there are no
// sums, the next index and the loop's test right after the load (each behind a barrier),
// the sums eight a step.
extern "C" __global__ void add_kernel_tuned_ahead(int *out, size_t out_len, const int *in,
                                                  size_t in_len, int add_value, int cycles)
{
    size_t stride = (size_t)(blockDim.x * gridDim.x);
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (cycles <= 0) {
        for (; i < out_len; i += stride)
            out[i] = in[i];
        return;
    }
    if (i >= out_len)
        return;
    for (;;) {
        size_t at = i;
        int value = in[at];
        i += stride;
        asm volatile("" : "+l"(i));
        unsigned more = i < out_len;
        asm volatile("" : "+r"(more));
        out[at] = add_repeatedly_by<8>(value, add_value, cycles);
        if (!more)
            break;
    }
}

// Safe AddKernel: the Handbook's loop over the pairs both arrays have, as the safe Rust
// twin's grid-stride view stops at the shorter length.
extern "C" __global__ void add_kernel_safe(int *out, size_t out_len, const int *in,
                                           size_t in_len, int add_value, int cycles)
{
    size_t n = out_len < in_len ? out_len : in_len;
    add_over_grid(out, in, n, [=](int value) {
        return add_repeatedly_loop(value, add_value, cycles);
    });
}

// Safe AddKernel, the sums eight a step.
extern "C" __global__ void add_kernel_safe_by8(int *out, size_t out_len, const int *in,
                                               size_t in_len, int add_value, int cycles)
{
    size_t n = out_len < in_len ? out_len : in_len;
    add_over_grid(out, in, n, [=](int value) {
        return add_repeatedly_by<8>(value, add_value, cycles);
    });
}

// Safe AddKernel, the sums thirty-two a step.
extern "C" __global__ void add_kernel_safe_by32(int *out, size_t out_len, const int *in,
                                                size_t in_len, int add_value, int cycles)
{
    size_t n = out_len < in_len ? out_len : in_len;
    add_over_grid(out, in, n, [=](int value) {
        return add_repeatedly_by<32>(value, add_value, cycles);
    });
}

// Safe AddKernel, the sums sixteen a step.
extern "C" __global__ void add_kernel_safe_by16(int *out, size_t out_len, const int *in,
                                                size_t in_len, int add_value, int cycles)
{
    size_t n = out_len < in_len ? out_len : in_len;
    add_over_grid(out, in, n, [=](int value) {
        return add_repeatedly_by<16>(value, add_value, cycles);
    });
}

// Safe AddKernel, the sums 128 a step, two steps a turn (as the safe Rust twin spells them).
extern "C" __global__ void add_kernel_safe_pairs(int *out, size_t out_len, const int *in,
                                                 size_t in_len, int add_value, int cycles)
{
    size_t n = out_len < in_len ? out_len : in_len;
    add_over_grid(out, in, n, [=](int value) {
        return add_repeatedly_in_pairs<128>(value, add_value, cycles);
    });
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

// One step of a chain of dependent kernels, as the Rust twin: let the next kernel start,
// wait for the one ahead to finish, then (thread 0 of each block) spin ns, add one to
// counts[block], and (block 0) stamp the global timer before and after into
// stamps[2 step] and stamps[2 step + 1].
extern "C" __global__ void chain_step(unsigned long long *stamps, size_t stamps_len,
                                      unsigned *counts, size_t counts_len,
                                      unsigned long long ns, unsigned step)
{
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
    if (threadIdx.x != 0)
        return;
    size_t block = blockIdx.x;
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    unsigned long long now = start;
    while (now - start < ns)
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (block < counts_len)
        counts[block] += 1;
    size_t at = 2 * (size_t)step;
    if (block == 0 && at + 2 <= stamps_len) {
        stamps[at] = start;
        unsigned long long ended;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ended));
        stamps[at + 1] = ended;
    }
}
