//! The four streamlab kernels, written in Rust for `nvptx64-nvidia-cuda`.
//!
//! * `fill(matrix, rows, cols, value)`: every cell of a row-major matrix becomes `value`.
//! * `matmul(a, b, c, rows, cols, aligned)`: the naive product, one thread per output cell.
//! * `add_kernel(out, in, n, add_value, cycles)`: the CUDA Handbook's make-work kernel.
//! * `sincos(a, b, offset, n)`: `b[i] = a[i] + sqrt(sin(i)² + cos(i)²)`.
//!
//! The per-element math lives in [`element`], plain functions that compile for the host
//! too, so the host tests and the GPU run the same code. The `extern "gpu-kernel"` entry
//! points and the [`thread`] index helpers exist only when compiling for `nvptx64`; the
//! `ptx-builder` crate compiles this crate to one PTX module.
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_gpu_kernel, stdarch_nvptx, core_float_math, asm_experimental_arch)
)]

pub mod element;

#[cfg(target_arch = "nvptx64")]
pub mod thread;

#[cfg(target_arch = "nvptx64")]
mod entry;

/// The names of the kernel entry points, in the order the PTX declares them.
pub const KERNEL_NAMES: [&str; 4] = ["fill", "matmul", "add_kernel", "sincos"];

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; the host sees a launch failure.
    unsafe { core::arch::nvptx::trap() }
}
