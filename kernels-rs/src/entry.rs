//! The GPU entry points. Each reads like its CUDA C++ original: compute the thread's
//! index, check bounds, do one element's work from [`crate::element`].
use crate::element::{add_repeatedly, cell, matmul_cell, sincos_element};
use crate::thread::{grid_stride_x, index_x, index_y};

/// Fill a `rows × cols` row-major matrix with `value`; 2-D grid, x = column, y = row.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn fill(matrix: *mut f32, rows: i32, cols: i32, value: f32) {
    let (row, col) = (index_y() as i32, index_x() as i32);
    if row >= rows || col >= cols {
        return;
    }
    // SAFETY: (row, col) is inside the matrix the host allocated.
    unsafe { *matrix.add(cell(row as usize, col as usize, cols as usize)) = value };
}

/// `c = a · b` with `a: rows × aligned`, `b: aligned × cols`, `c: rows × cols`; one
/// thread per output cell, 2-D grid, x = column, y = row.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn matmul(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    rows: i32,
    cols: i32,
    aligned: i32,
) {
    let (row, col) = (index_y() as i32, index_x() as i32);
    if row >= rows || col >= cols {
        return;
    }
    let (row, col, cols) = (row as usize, col as usize, cols as usize);
    // SAFETY: the host allocated a, b and c with these shapes.
    unsafe { *c.add(cell(row, col, cols)) = matmul_cell(a, b, row, col, cols, aligned as usize) };
}

/// The Handbook's AddKernel: a grid-stride loop over `n` ints, each becoming
/// `in[i] + add_value·cycles` by `cycles` separate additions.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn add_kernel(
    out: *mut i32,
    input: *const i32,
    n: usize,
    add_value: i32,
    cycles: i32,
) {
    let mut i = index_x() as usize;
    let stride = grid_stride_x() as usize;
    while i < n {
        // SAFETY: i < n, the length of both buffers.
        unsafe { *out.add(i) = add_repeatedly(*input.add(i), add_value, cycles) };
        i += stride;
    }
}

/// `b[i] = a[i] + sqrt(sin(i)² + cos(i)²)` for `i = offset + thread index`, `i < n`.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn sincos(a: *const f32, b: *mut f32, offset: u32, n: u32) {
    let i = offset + index_x();
    if i >= n {
        return;
    }
    let i_usize = i as usize;
    // SAFETY: i < n, the length of both buffers.
    unsafe { *b.add(i_usize) = sincos_element(*a.add(i_usize), i) };
}
