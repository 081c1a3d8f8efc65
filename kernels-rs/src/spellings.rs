//! Other spellings of the kernels' algorithms: the same products or sums in the same order,
//! written another way for the GPU compilers (another loop shape, another batching). Each
//! computes what its kernel in [`crate::kernels`] computes, bit for bit; streamlab's
//! compare-kernels times every spelling of a form beside the kernel itself and keeps the
//! fastest, on each side, so that a Rust/C++ ratio compares the best of each.
//!
//! Compiled for the host, each is its declaration, listed in [`crate::SPELLINGS`].
use nvptx_kernel::kernel;

/// Tuned `c = a · b` ([`crate::matmul`]) with the products after the last batch a counted
/// loop of single products instead of a guarded batch.
#[kernel]
pub unsafe fn matmul_tuned_loop_tail(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    rows: u32,
    cols: u32,
    aligned: u32,
) {
    // SAFETY: the host passes a, b and c with these shapes (and a launch's inputs are not
    // written while it runs).
    unsafe {
        crate::kernels::tuned_matmul::<{ crate::element::MATMUL_STEP_BATCHES }, false, false>(
            a, b, c, rows, cols, aligned,
        )
    }
}

/// Tuned `c = a · b` ([`crate::matmul`]) with the products after the last batch a counted
/// loop and every load through the read-only data cache (`ld.global.nc`, what the CUDA C++
/// twin's `__ldg` emits): the C++ `matmul_tuned_ldg`'s transformation.
#[kernel]
pub unsafe fn matmul_tuned_ldg(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    rows: u32,
    cols: u32,
    aligned: u32,
) {
    // SAFETY: the host passes a, b and c with these shapes (and a launch's inputs are not
    // written while it runs).
    unsafe {
        crate::kernels::tuned_matmul::<{ crate::element::MATMUL_STEP_BATCHES }, false, true>(
            a, b, c, rows, cols, aligned,
        )
    }
}

/// Tuned `c = a · b` ([`crate::matmul`]) with two batches a step instead of
/// [`crate::element::MATMUL_STEP_BATCHES`].
#[kernel]
pub unsafe fn matmul_tuned_two_step(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    rows: u32,
    cols: u32,
    aligned: u32,
) {
    // SAFETY: the host passes a, b and c with these shapes (and a launch's inputs are not
    // written while it runs).
    unsafe { crate::kernels::tuned_matmul::<2, true, false>(a, b, c, rows, cols, aligned) }
}

/// `c = a · b` with two pointers walking the row and the column, one product a turn
/// ([`crate::element::matmul_cell_walk`]): unchecked, with no batching.
#[kernel]
pub unsafe fn matmul_tuned_walk(
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
    // SAFETY: the host passes a, b and c with these shapes.
    unsafe {
        *c.get_unchecked_mut(row * cols + col) =
            crate::element::matmul_cell_walk(a.as_ptr(), b.as_ptr(), row, col, cols, aligned);
    }
}

/// Safe `c = a · b` ([`crate::matmul_safe`]) folding the zipped row and column one pair a
/// turn ([`crate::element::matmul_cell_safe_zip`]) instead of with loads ahead.
#[kernel]
pub unsafe fn matmul_safe_zip(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    rows: u32,
    cols: u32,
    aligned: u32,
) {
    crate::kernels::safe_matmul(
        a,
        b,
        c,
        (rows, cols, aligned),
        crate::element::matmul_cell_safe_zip,
    );
}

/// Tuned AddKernel ([`crate::add_kernel`]) with the next index and the loop's test right
/// after the load, each behind `nvptx_kernel::hint::opaque`, so that LLVM does not move
/// them after the sums and ptxas overlaps them with the load.
#[kernel]
pub unsafe fn add_kernel_tuned_ahead(out: &mut [i32], input: &[i32], add_value: i32, cycles: i32) {
    use nvptx_kernel::hint::opaque;
    let stride = nvptx_kernel::thread::grid_stride_1d() as usize;
    let mut i = nvptx_kernel::thread::index_1d() as usize;
    let n = out.len();
    if cycles <= 0 {
        while i < n {
            // SAFETY: i < out.len() == input.len() (the host passes equal lengths).
            unsafe { *out.get_unchecked_mut(i) = *input.get_unchecked(i) };
            i += stride;
        }
        return;
    }
    if i >= n {
        return;
    }
    loop {
        let at = i;
        // SAFETY: at < n (checked before the loop, then by `more`), and n == input.len().
        let value = unsafe { *input.get_unchecked(at) };
        i = opaque(i as u64 + stride as u64) as usize;
        let more = opaque(u32::from(i < n));
        let sum = crate::element::add_repeatedly_unrolled(value, add_value, cycles);
        // SAFETY: as above, n == out.len().
        unsafe { *out.get_unchecked_mut(at) = sum };
        if more == 0 {
            break;
        }
    }
}

/// Tuned AddKernel as a plain grid-stride loop, the sums thirty-two a step, one step a
/// turn ([`crate::element::add_repeatedly_by`]).
#[kernel]
pub unsafe fn add_kernel_tuned_by32(out: &mut [i32], input: &[i32], add_value: i32, cycles: i32) {
    let stride = nvptx_kernel::thread::grid_stride_1d() as usize;
    let mut i = nvptx_kernel::thread::index_1d() as usize;
    let n = out.len();
    while i < n {
        // SAFETY: i < out.len() == input.len() (the host passes equal lengths).
        unsafe {
            *out.get_unchecked_mut(i) =
                crate::element::add_repeatedly_by::<32>(*input.get_unchecked(i), add_value, cycles);
        }
        i += stride;
    }
}

/// Safe AddKernel ([`crate::add_kernel_safe`]) with the sums one a turn
/// ([`crate::element::add_repeatedly`], whose loop LLVM unrolls by itself).
#[kernel]
pub unsafe fn add_kernel_safe_loop(out: &mut [i32], input: &[i32], add_value: i32, cycles: i32) {
    nvptx_kernel::view::GridStride::this_thread(out, input).for_each(|(out, input)| {
        *out = crate::element::add_repeatedly(*input, add_value, cycles);
    });
}

/// Safe AddKernel with the sums eight a step ([`crate::element::add_repeatedly_unrolled`]).
#[kernel]
pub unsafe fn add_kernel_safe_by8(out: &mut [i32], input: &[i32], add_value: i32, cycles: i32) {
    nvptx_kernel::view::GridStride::this_thread(out, input).for_each(|(out, input)| {
        *out = crate::element::add_repeatedly_unrolled(*input, add_value, cycles);
    });
}
