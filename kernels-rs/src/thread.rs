//! Thread and block coordinates for kernels, named as in CUDA C++ (`threadIdx.x` is
//! [`thread_idx_x`]), plus the global indices the kernels use.
use core::arch::nvptx;

/// `threadIdx.x`
#[inline(always)]
pub fn thread_idx_x() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_thread_idx_x() as u32 }
}

/// `threadIdx.y`
#[inline(always)]
pub fn thread_idx_y() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_thread_idx_y() as u32 }
}

/// `blockIdx.x`
#[inline(always)]
pub fn block_idx_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_idx_x() as u32 }
}

/// `blockIdx.y`
#[inline(always)]
pub fn block_idx_y() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_idx_y() as u32 }
}

/// `blockDim.x`
#[inline(always)]
pub fn block_dim_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_dim_x() as u32 }
}

/// `blockDim.y`
#[inline(always)]
pub fn block_dim_y() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_dim_y() as u32 }
}

/// `gridDim.x`
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_grid_dim_x() as u32 }
}

/// `blockIdx.x * blockDim.x + threadIdx.x`: this thread's index along x.
#[inline(always)]
pub fn index_x() -> u32 {
    block_idx_x() * block_dim_x() + thread_idx_x()
}

/// `blockIdx.y * blockDim.y + threadIdx.y`: this thread's index along y.
#[inline(always)]
pub fn index_y() -> u32 {
    block_idx_y() * block_dim_y() + thread_idx_y()
}

/// `blockDim.x * gridDim.x`: the stride of a grid-stride loop.
#[inline(always)]
pub fn grid_stride_x() -> u32 {
    block_dim_x() * grid_dim_x()
}
