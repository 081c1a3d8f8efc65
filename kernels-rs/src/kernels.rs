//! The GPU entry points, each a `#[kernel]` in Rust-CUDA's style: the thread's index,
//! a bounds check, one element's work from [`crate::element`]. Compiled for the host,
//! each is the kernel's declaration instead (see `nvptx_kernel::Kernel`).
//!
//! Each kernel comes in up to three forms: `*_plain`, the write-ups' algorithms ported as
//! they read, with Rust's checked indexing; `*_safe`, with no `unsafe` in the body: slices,
//! `get`/`get_mut`, and `nvptx_kernel::view`'s types, which check a shape once and then
//! iterate unchecked (a matrix's row and column, the grid-stride loop), with
//! `nvptx_kernel::hint::opaque` as AddKernel's register barrier; and the tuned form (no
//! suffix: raw pointers, unchecked indexing, batched loads). Each has a CUDA C++
//! twin written statement for statement alike (`crates/streamlab-runtime/cuda/kernels.cu`), and
//! [`crate::spellings`] holds other spellings of the same algorithms, which streamlab's
//! compare-kernels times beside these.
use nvptx_kernel::kernel;

/// Fill a `rows × cols` row-major matrix with `value`; 2-D grid, x = column, y = row.
/// One store per thread: its plain and tuned forms are the same. The output is a raw
/// pointer, as in Rust-CUDA's examples: the kernel needs no length.
#[kernel]
pub unsafe fn fill(matrix: *mut f32, rows: u32, cols: u32, value: f32) {
    let (col, row) = nvptx_kernel::thread::index_2d();
    if row >= rows || col >= cols {
        return;
    }
    let cell = row as usize * cols as usize + col as usize;
    // SAFETY: the host passes a matrix of rows × cols elements.
    unsafe { *matrix.add(cell) = value };
}

/// Safe fill: the same store through a slice, the cell's index checked against the
/// matrix's length.
#[kernel]
pub unsafe fn fill_safe(matrix: &mut [f32], rows: u32, cols: u32, value: f32) {
    let (col, row) = nvptx_kernel::thread::index_2d();
    if row >= rows || col >= cols {
        return;
    }
    if let Some(cell) = matrix.get_mut(row as usize * cols as usize + col as usize) {
        *cell = value;
    }
}

/// Plain `c = a · b` (`a: rows × aligned`, `b: aligned × cols`, `c: rows × cols`): one
/// thread per output cell, the wiki's loop, checked indexing; 2-D grid.
#[kernel]
pub unsafe fn matmul_plain(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    rows: u32,
    cols: u32,
    aligned: u32,
) {
    let (col, row) = nvptx_kernel::thread::index_2d();
    if row >= rows || col >= cols {
        return;
    }
    let (row, col, cols) = (row as usize, col as usize, cols as usize);
    c[row * cols + col] = crate::element::matmul_cell_plain(a, b, row, col, cols, aligned as usize);
}

/// Safe `c = a · b`: the plain form's products in the same order, with no `unsafe`. `a`
/// and `b` become `nvptx_kernel::view::Matrix` views (their lengths checked once), the
/// thread's row of `a` is zipped with its column of `b` (equal lengths, checked once) and
/// folded with its loads issued ahead, in the tuned form's batches
/// ([`crate::element::matmul_cell_safe`]), and the cell of `c` is the thread's own
/// (`MatrixMut::cell_mut`). A check that fails is a panic, which traps.
#[kernel]
pub unsafe fn matmul_safe(a: &[f32], b: &[f32], c: &mut [f32], rows: u32, cols: u32, aligned: u32) {
    safe_matmul(
        a,
        b,
        c,
        (rows, cols, aligned),
        crate::element::matmul_cell_safe,
    );
}

/// The safe `c = a · b` of [`matmul_safe`] and its spellings: the thread's cell of `c`
/// from `cell` over the thread's row of `a` zipped with its column of `b`, every shape
/// checked through the views (a check that fails is a panic, which traps).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) fn safe_matmul(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    (rows, cols, aligned): (u32, u32, u32),
    cell: impl Fn(nvptx_kernel::view::ZipExact<'_, '_, f32, f32>) -> f32,
) {
    use nvptx_kernel::view::{Matrix, MatrixMut, zip_exact};
    let (col, row) = nvptx_kernel::thread::index_2d();
    if row >= rows || col >= cols {
        return;
    }
    let (row, col) = (row as usize, col as usize);
    let (rows, cols, aligned) = (rows as usize, cols as usize, aligned as usize);
    let a = Matrix::new(a, rows, aligned).expect("a holds rows × aligned");
    let b = Matrix::new(b, aligned, cols).expect("b holds aligned × cols");
    let (a_row, b_col) = (
        a.row(row).expect("row < rows"),
        b.column(col).expect("col < cols"),
    );
    let pairs = zip_exact(a_row, b_col).expect("a's rows are as long as b's columns");
    let mut c = MatrixMut::new(c, rows, cols).expect("c holds rows × cols");
    *c.cell_mut(row, col).expect("the cell is in c") = cell(pairs);
}

/// Tuned `c = a · b`: the same products in the same order, loads batched
/// ([`crate::element::matmul_cell`]).
#[kernel]
pub unsafe fn matmul(a: &[f32], b: &[f32], c: &mut [f32], rows: u32, cols: u32, aligned: u32) {
    // SAFETY: the host passes a, b and c with these shapes (and a launch's inputs are not
    // written while it runs).
    unsafe {
        tuned_matmul::<{ crate::element::MATMUL_STEP_BATCHES }, true, false>(
            a, b, c, rows, cols, aligned,
        )
    }
}

/// The body of [`matmul`] and its tuned spellings ([`crate::spellings`]): the thread's cell
/// of `c`, computed by [`crate::element::matmul_cell_spelled`] with `STEPS`, `GUARDED_TAIL`
/// and `LDG`.
///
/// # Safety
/// `a`, `b` and `c` have the shapes `rows`, `cols` and `aligned` say, and nothing writes
/// `a` or `b` while the kernel runs.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn tuned_matmul<const STEPS: u32, const GUARDED_TAIL: bool, const LDG: bool>(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    rows: u32,
    cols: u32,
    aligned: u32,
) {
    let (col, row) = nvptx_kernel::thread::index_2d();
    if row >= rows || col >= cols {
        return;
    }
    let (row, col, cols) = (row as usize, col as usize, cols as usize);
    // SAFETY: the caller's shapes.
    unsafe {
        *c.get_unchecked_mut(row * cols + col) = crate::element::matmul_cell_spelled::<
            STEPS,
            GUARDED_TAIL,
            LDG,
        >(
            a.as_ptr(), b.as_ptr(), row, col, cols, aligned
        );
    }
}

/// Plain AddKernel: a grid-stride loop over `out`, each element becoming
/// `input[i] + add_value·cycles` by `cycles` additions to a volatile local.
#[kernel]
pub unsafe fn add_kernel_plain(out: &mut [i32], input: &[i32], add_value: i32, cycles: i32) {
    let stride = nvptx_kernel::thread::grid_stride_1d() as usize;
    let mut i = nvptx_kernel::thread::index_1d() as usize;
    while i < out.len() {
        out[i] = crate::element::add_repeatedly_volatile(input[i], add_value, cycles);
        i += stride;
    }
}

/// Safe AddKernel: the grid-stride loop as `nvptx_kernel::view::GridStride` (the thread's
/// pairs of `out` and `input`, unchecked inside, run by `for_each` as a plain loop), each
/// sum behind `nvptx_kernel::hint::opaque`, the safe register barrier, 128 a step, two
/// steps a turn, and the rest straight-line ([`crate::element::add_repeatedly_in_pairs`]).
#[kernel]
pub unsafe fn add_kernel_safe(out: &mut [i32], input: &[i32], add_value: i32, cycles: i32) {
    nvptx_kernel::view::GridStride::this_thread(out, input).for_each(|(out, input)| {
        *out = crate::element::add_repeatedly_in_pairs::<128>(*input, add_value, cycles);
    });
}

/// Tuned AddKernel: the same sums over an unchecked grid-stride loop, 128 a step, two steps
/// a turn, and the rest straight-line ([`crate::element::add_repeatedly_in_pairs`]).
/// [`crate::spellings`] holds its other spellings (thirty-two a step, one step a turn; a
/// copy loop at 0 cycles with the next index loaded ahead of the sums), which
/// compare-kernels times beside it.
#[kernel]
pub unsafe fn add_kernel(out: &mut [i32], input: &[i32], add_value: i32, cycles: i32) {
    let stride = nvptx_kernel::thread::grid_stride_1d() as usize;
    let mut i = nvptx_kernel::thread::index_1d() as usize;
    let n = out.len();
    while i < n {
        // SAFETY: i < out.len() == input.len() (the host passes equal lengths).
        unsafe {
            *out.get_unchecked_mut(i) = crate::element::add_repeatedly_in_pairs::<128>(
                *input.get_unchecked(i),
                add_value,
                cycles,
            );
        }
        i += stride;
    }
}

/// Plain sincos: `b[j] = a[j] + sqrt(sin(i)² + cos(i)²)` for the global index
/// `i = offset + j` (`a` and `b` are one chunk of the arrays), sine and cosine apart.
#[kernel]
pub unsafe fn sincos_plain(a: &[f32], b: &mut [f32], offset: u32) {
    let j = nvptx_kernel::thread::index_1d();
    if j as usize >= b.len() {
        return;
    }
    b[j as usize] = crate::element::sincos_element_plain(a[j as usize], offset + j);
}

/// Safe sincos: one `sincosf` as in the tuned form, the element reached through
/// `get_mut` and `get` instead of unchecked indexing.
#[kernel]
pub unsafe fn sincos_safe(a: &[f32], b: &mut [f32], offset: u32) {
    let j = nvptx_kernel::thread::index_1d();
    if let (Some(out), Some(&a)) = (b.get_mut(j as usize), a.get(j as usize)) {
        *out = crate::element::sincos_element(a, offset + j);
    }
}

/// Tuned sincos: the same with one `sincosf`.
#[kernel]
pub unsafe fn sincos(a: &[f32], b: &mut [f32], offset: u32) {
    let j = nvptx_kernel::thread::index_1d();
    if j as usize >= b.len() {
        return;
    }
    // SAFETY: j < b.len() == a.len() (the host passes equal lengths).
    unsafe {
        *b.get_unchecked_mut(j as usize) =
            crate::element::sincos_element(*a.get_unchecked(j as usize), offset + j);
    }
}

/// `out[j] = sinf(offset + j)` from the `libm` crate: the library's sine alone, for
/// timing it and measuring its error (compare-kernels' "whose math").
#[kernel]
pub unsafe fn math_sinf(out: &mut [f32], offset: u32) {
    let j = nvptx_kernel::thread::index_1d();
    if let Some(out) = out.get_mut(j as usize) {
        *out = libm::sinf((offset + j) as f32);
    }
}

/// `out[j] = cosf(offset + j)` from the `libm` crate.
#[kernel]
pub unsafe fn math_cosf(out: &mut [f32], offset: u32) {
    let j = nvptx_kernel::thread::index_1d();
    if let Some(out) = out.get_mut(j as usize) {
        *out = libm::cosf((offset + j) as f32);
    }
}

/// `(sines[j], cosines[j]) = sincosf(offset + j)` from the `libm` crate.
#[kernel]
pub unsafe fn math_sincosf(sines: &mut [f32], cosines: &mut [f32], offset: u32) {
    let j = nvptx_kernel::thread::index_1d();
    if let (Some(s), Some(c)) = (sines.get_mut(j as usize), cosines.get_mut(j as usize)) {
        (*s, *c) = libm::sincosf((offset + j) as f32);
    }
}

/// Copy `src` into `dst` (equal lengths) with a grid-stride loop: one load and one store
/// per element, wherever the two buffers live (peer-copy launches it on one GPU with the
/// other GPU's memory on one side).
#[kernel]
pub unsafe fn copy_u32(src: &[u32], dst: &mut [u32]) {
    let stride = nvptx_kernel::thread::grid_stride_1d() as usize;
    let mut i = nvptx_kernel::thread::index_1d() as usize;
    while i < dst.len() {
        // SAFETY: i < dst.len() == src.len() (the host passes equal lengths).
        unsafe { *dst.get_unchecked_mut(i) = *src.get_unchecked(i) };
        i += stride;
    }
}

/// An empty kernel: what a launch costs on its own.
#[kernel]
pub unsafe fn empty() {}

/// Spin for `ns` nanoseconds of the GPU's global timer, then (thread 0 of the block)
/// write the nanoseconds it spun to `elapsed[block]`: work of a fixed duration.
#[kernel]
pub unsafe fn spin(elapsed: &mut [u64], ns: u64) {
    let start = nvptx_kernel::clock::globaltimer();
    let mut now = start;
    while now.wrapping_sub(start) < ns {
        now = nvptx_kernel::clock::globaltimer();
    }
    let block = nvptx_kernel::thread::block_idx_x() as usize;
    if nvptx_kernel::thread::thread_idx_x() == 0 && block < elapsed.len() {
        elapsed[block] = now.wrapping_sub(start);
    }
}

/// One step of a chain of dependent kernels: let the next kernel on the stream start
/// (`nvptx_kernel::dependent::launch_dependents`), wait for the kernel ahead to finish
/// (`nvptx_kernel::dependent::wait`), then (thread 0 of each block) stamp the GPU's
/// global timer into `stamps[2 step]`, spin `ns` nanoseconds, add one to `counts[block]`
/// and stamp `stamps[2 step + 1]`. Block 0 stamps; a count that misses a step shows a
/// kernel that ran before the one ahead of it finished.
#[kernel]
pub unsafe fn chain_step(stamps: &mut [u64], counts: &mut [u32], ns: u64, step: u32) {
    nvptx_kernel::dependent::launch_dependents();
    nvptx_kernel::dependent::wait();
    if nvptx_kernel::thread::thread_idx_x() != 0 {
        return;
    }
    let block = nvptx_kernel::thread::block_idx_x() as usize;
    let start = nvptx_kernel::clock::globaltimer();
    let mut now = start;
    while now.wrapping_sub(start) < ns {
        now = nvptx_kernel::clock::globaltimer();
    }
    if let Some(count) = counts.get_mut(block) {
        *count = count.wrapping_add(1);
    }
    if block == 0 {
        let at = 2 * step as usize;
        if let Some([began, ended]) = stamps.get_mut(at..at + 2) {
            *began = start;
            *ended = nvptx_kernel::clock::globaltimer();
        }
    }
}
