//! The vecadd example's kernel: `c[i] = a[i] + b[i]`, one thread per element.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]

use nvptx_kernel::kernel;

/// `c[i] = a[i] + b[i]`
#[kernel]
pub unsafe fn vecadd(a: &[f32], b: &[f32], c: &mut [f32]) {
    let i = nvptx_kernel::thread::index_1d() as usize;
    if i < c.len() {
        c[i] = a[i] + b[i];
    }
}

/// The crate's kernels, for the builder's check of the PTX.
#[cfg(not(target_arch = "nvptx64"))]
pub const KERNELS: [nvptx_kernel::KernelSignature; 1] =
    [<vecadd as nvptx_kernel::Kernel>::SIGNATURE];
