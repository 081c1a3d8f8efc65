//! Kernels of the shape `streamlab overlap` runs, `name(input: &[f32], output: &mut [f32],
//! …)`, one thread per element: a kernel of our own, and an adapter that gives
//! kernels-rs's sincos math that shape.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]

use nvptx_kernel::kernel;

/// `output[i] = input[i] * scale + offset`: SAXPY's shape, with the scalars after the
/// two slices (`streamlab overlap --arg SCALE --arg OFFSET`).
#[kernel]
pub unsafe fn scale_add(input: &[f32], output: &mut [f32], scale: f32, offset: f32) {
    let i = nvptx_kernel::thread::index_1d() as usize;
    if i < output.len() {
        output[i] = input[i] * scale + offset;
    }
}

/// `output[i] = input[i] + sqrt(sin(input[i])² + cos(input[i])²)`: kernels-rs's sincos
/// element with `x` taken from the input, since `streamlab overlap` passes each stream's
/// chunk as sub-slices with no offset.
#[kernel]
pub unsafe fn sincos_adapter(input: &[f32], output: &mut [f32]) {
    let i = nvptx_kernel::thread::index_1d() as usize;
    if i < output.len() {
        output[i] = kernels_rs::element::sincos_of(input[i], input[i]);
    }
}

/// The crate's kernels, for the builder's check of the PTX.
#[cfg(not(target_arch = "nvptx64"))]
pub const KERNELS: [nvptx_kernel::KernelSignature; 2] = {
    use nvptx_kernel::Kernel;
    [scale_add::SIGNATURE, sincos_adapter::SIGNATURE]
};
