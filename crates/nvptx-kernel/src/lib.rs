//! Rust-CUDA's kernel style on rustc's own NVPTX backend: the part `cuda_std` plays.
//!
//! * [`kernel`]: `#[kernel]` on a `pub unsafe fn` makes it a GPU entry point when the
//!   crate is compiled for `nvptx64-nvidia-cuda`, with `&[T]` and `&mut [T]` parameters
//!   passed as a pointer and a length, as Rust-CUDA passes them. Compiled for the host,
//!   the same item becomes a unit struct implementing [`Kernel`]: the kernel's signature,
//!   from which hosts get typed launches and builds check the PTX.
//! * `thread`: `threadIdx`, `blockIdx`, `blockDim`, `gridDim` and the global indices,
//!   named as in `cuda_std` (`thread::index_1d()`, `thread::thread_idx_x()`, …), and
//!   `clock`: the GPU's clocks. Both exist only on the GPU.
//! * [`view`]: safe kernel bodies at raw speed: a matrix's rows and strided columns, the
//!   thread's own output cell, pairs of equal length and the grid-stride loop, each
//!   checked once when made and unchecked inside. [`hint::opaque`]: a value hidden from
//!   the optimizer in a register.
//! * [`launch`] (host only): host values as kernel parameters, type-checked against the
//!   kernel's signature.
//! * `cuda` (host only, feature `cudarc`): typed launches through cudarc: a kernel's
//!   function loaded by its declaration, cudarc buffers as arguments, and a launch whose
//!   wrong arguments do not compile.
//! * `cust` (host only, feature `cust`): the same through Rust-CUDA's host crate cust,
//!   for hosts written against it.
//!
//! A kernel crate is `#![no_std]`, enables `abi_gpu_kernel` on the GPU, and is built to
//! PTX by `nvptx-builder`:
//!
//! ```
//! // In the kernel crate's lib.rs: #![no_std]
//! // and #![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]
//! use nvptx_kernel::kernel;
//!
//! /// `c[i] = a[i] + b[i]`
//! #[kernel]
//! pub unsafe fn vecadd(a: &[f32], b: &[f32], c: &mut [f32]) {
//!     let i = nvptx_kernel::thread::index_1d() as usize;
//!     if i < c.len() {
//!         c[i] = a[i] + b[i];
//!     }
//! }
//!
//! // On the host, `vecadd` is the kernel's declaration:
//! use nvptx_kernel::Kernel;
//! assert_eq!(vecadd::SIGNATURE.to_string(), "vecadd(a: &[f32], b: &[f32], c: &mut [f32])");
//! ```
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(stdarch_nvptx, asm_experimental_arch))]

pub mod hint;
pub mod signature;
pub mod view;

#[cfg(target_arch = "nvptx64")]
pub mod clock;
#[cfg(target_arch = "nvptx64")]
pub mod dependent;
#[cfg(target_arch = "nvptx64")]
pub mod thread;

#[cfg(all(feature = "cudarc", not(target_arch = "nvptx64")))]
pub mod cuda;
#[cfg(all(feature = "cust", not(target_arch = "nvptx64")))]
pub mod cust;
#[cfg(not(target_arch = "nvptx64"))]
pub mod launch;

pub use nvptx_kernel_macros::kernel;
pub use signature::{
    ConstPtr, Kernel, KernelSignature, MutPtr, Param, ParamKind, PtxPart, PtxType, Scalar, Slice,
    SliceMut,
};

/// A panic in a kernel traps: the launch fails and the host's next CUDA call reports it.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; nothing after it runs.
    unsafe { core::arch::nvptx::trap() }
}

/// The README's examples, compiled and run as this crate's doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
