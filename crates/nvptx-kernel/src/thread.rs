//! Where the running thread is in the launch: CUDA's `threadIdx`, `blockIdx`,
//! `blockDim` and `gridDim`, the global indices built from them, and the block barrier.
//!
//! Names follow Rust-CUDA's `cuda_std::thread` (`thread_idx_x()` is `threadIdx.x`,
//! `index_1d()` is `blockIdx.x * blockDim.x + threadIdx.x`); [`grid_stride_1d`] is an
//! addition. GPU only: each function reads a PTX special register.
//!
//! Arithmetic is on `u32` and wraps on overflow, as CUDA's `unsigned int` arithmetic
//! does: a launch can have more than `u32::MAX` threads along x (`gridDim.x` up to
//! 2³¹ − 1 blocks of up to 1024 threads), and for such launches the 1-D index and stride
//! must be computed in `u64` from the parts.
use core::arch::nvptx;

/// One function per special register: for each CUDA built-in, its x, y and z parts,
/// each documented with what it reads.
macro_rules! registers {
    ($($builtin:literal, $what:literal: $($axis:literal $name:ident => $intrinsic:ident),+;)*) => {$($(
        #[doc = concat!("`", $builtin, ".", $axis, "`: ", $what, " along ", $axis, ".")]
        #[inline(always)]
        pub fn $name() -> u32 {
            // SAFETY: reading a special register has no preconditions.
            unsafe { nvptx::$intrinsic() }
        }
    )+)*};
}

registers! {
    "threadIdx", "the thread's index within its block":
        "x" thread_idx_x => _thread_idx_x, "y" thread_idx_y => _thread_idx_y, "z" thread_idx_z => _thread_idx_z;
    "blockIdx", "the block's index within the grid":
        "x" block_idx_x => _block_idx_x, "y" block_idx_y => _block_idx_y, "z" block_idx_z => _block_idx_z;
    "blockDim", "threads per block":
        "x" block_dim_x => _block_dim_x, "y" block_dim_y => _block_dim_y, "z" block_dim_z => _block_dim_z;
    "gridDim", "blocks in the grid":
        "x" grid_dim_x => _grid_dim_x, "y" grid_dim_y => _grid_dim_y, "z" grid_dim_z => _grid_dim_z;
}

/// The thread's global x index, `blockIdx.x * blockDim.x + threadIdx.x`, wrapping on
/// overflow like CUDA's unsigned arithmetic (see the [module docs](self)).
#[inline(always)]
pub fn index_1d() -> u32 {
    block_idx_x()
        .wrapping_mul(block_dim_x())
        .wrapping_add(thread_idx_x())
}

/// The thread's global `(x, y)` index, each as [`index_1d`] computes x. `cuda_std`
/// returns a `UVec2`; this is a plain tuple.
#[inline(always)]
pub fn index_2d() -> (u32, u32) {
    let y = block_idx_y()
        .wrapping_mul(block_dim_y())
        .wrapping_add(thread_idx_y());
    (index_1d(), y)
}

/// The number of threads along x in the whole grid, `blockDim.x * gridDim.x` (wrapping):
/// the step of a grid-stride loop, `i = index_1d(); while i < n { …; i += stride }`.
#[inline(always)]
pub fn grid_stride_1d() -> u32 {
    block_dim_x().wrapping_mul(grid_dim_x())
}

/// `__syncthreads()` (`bar.sync 0`): wait until every thread of the block reaches this
/// point, and make their earlier shared and global memory writes visible to each other.
///
/// Every non-exited thread of the block must reach the same call: calling it where the
/// block's threads diverge hangs the block or gives unpredictable results.
#[inline(always)]
pub fn sync_threads() {
    // SAFETY: `bar.sync 0` touches no memory of its own; the convergence requirement
    // above is the caller's, as in cuda_std and CUDA C++.
    unsafe { nvptx::_syncthreads() }
}
