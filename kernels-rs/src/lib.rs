//! streamlab's GPU kernels in Rust, written with `#[kernel]` in Rust-CUDA's style and
//! compiled to PTX by rustc's own NVPTX backend (`nvptx-builder`).
//!
//! | kernel | parameters | what it does |
//! | --- | --- | --- |
//! | [`fill`] | `matrix: *mut f32, rows: u32, cols: u32, value: f32` | every cell becomes `value` |
//! | [`fill_safe`] | `matrix: &mut [f32], rows: u32, cols: u32, value: f32` | the same through a slice |
//! | [`matmul_plain`], [`matmul_safe`], [`matmul`] | `a: &[f32], b: &[f32], c: &mut [f32], rows: u32, cols: u32, aligned: u32` | the naive product, one thread per cell of `c` |
//! | [`add_kernel_plain`], [`add_kernel_safe`], [`add_kernel`] | `out: &mut [i32], input: &[i32], add_value: i32, cycles: i32` | the CUDA Handbook's make-work kernel |
//! | [`sincos_plain`], [`sincos_safe`], [`sincos`] | `a: &[f32], b: &mut [f32], offset: u32` | `b[j] = a[j] + sqrt(sin(i)² + cos(i)²)`, `i = offset + j` |
//! | [`math_sinf`], [`math_cosf`] | `out: &mut [f32], offset: u32` | `out[j] = sinf(offset + j)` (or `cosf`) from the `libm` crate |
//! | [`math_sincosf`] | `sines: &mut [f32], cosines: &mut [f32], offset: u32` | both at once, from `libm`'s `sincosf` |
//! | [`copy_u32`] | `src: &[u32], dst: &mut [u32]` | `dst[i] = src[i]`, grid-stride |
//! | [`empty`] | none | nothing: the cost of a launch |
//! | [`spin`] | `elapsed: &mut [u64], ns: u64` | spins `ns` nanoseconds of the GPU clock |
//!
//! Compiled for the host, each kernel is a unit struct implementing
//! [`nvptx_kernel::Kernel`]: its signature, from which a host gets typed launches, and
//! which [`KERNELS`] lists for the builder to check against the PTX. The per-element
//! math is in [`element`], plain functions that compile for the host too, so tests run
//! the kernels' arithmetic on the CPU. A kernel crate that reuses only that math depends
//! on this crate with `default-features = false` (no `entries`), so its PTX holds none
//! of these entry points.
//!
//! ```
//! use nvptx_kernel::Kernel;
//! assert_eq!(kernels_rs::sincos::SIGNATURE.to_string(), "sincos(a: &[f32], b: &mut [f32], offset: u32)");
//! assert_eq!(kernels_rs::element::add_repeatedly(1, 2, 3), 7);
//! ```
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_gpu_kernel, core_float_math, asm_experimental_arch)
)]

pub mod element;
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
pub mod kernels;
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
pub mod spellings;

#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
pub use kernels::*;

/// Every kernel's declaration, for the builder's check of the PTX and for hosts that
/// load them by name.
#[cfg(not(target_arch = "nvptx64"))]
pub const KERNELS: [nvptx_kernel::KernelSignature; 18] = {
    use nvptx_kernel::Kernel;
    [
        fill::SIGNATURE,
        fill_safe::SIGNATURE,
        matmul_plain::SIGNATURE,
        matmul_safe::SIGNATURE,
        matmul::SIGNATURE,
        add_kernel_plain::SIGNATURE,
        add_kernel_safe::SIGNATURE,
        add_kernel::SIGNATURE,
        sincos_plain::SIGNATURE,
        sincos_safe::SIGNATURE,
        sincos::SIGNATURE,
        math_sinf::SIGNATURE,
        math_cosf::SIGNATURE,
        math_sincosf::SIGNATURE,
        copy_u32::SIGNATURE,
        empty::SIGNATURE,
        spin::SIGNATURE,
        chain_step::SIGNATURE,
    ]
};

/// The declarations of [`spellings`]' kernels: other spellings of the kernels' algorithms,
/// built into the same PTX and checked with [`KERNELS`].
#[cfg(not(target_arch = "nvptx64"))]
pub const SPELLINGS: [nvptx_kernel::KernelSignature; 9] = {
    use nvptx_kernel::Kernel;
    use spellings as s;
    [
        s::matmul_tuned_loop_tail::SIGNATURE,
        s::matmul_tuned_two_step::SIGNATURE,
        s::matmul_tuned_ldg::SIGNATURE,
        s::matmul_tuned_walk::SIGNATURE,
        s::matmul_safe_zip::SIGNATURE,
        s::add_kernel_tuned_ahead::SIGNATURE,
        s::add_kernel_tuned_by32::SIGNATURE,
        s::add_kernel_safe_loop::SIGNATURE,
        s::add_kernel_safe_by8::SIGNATURE,
    ]
};

/// The README's examples, compiled and run as this crate's doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
