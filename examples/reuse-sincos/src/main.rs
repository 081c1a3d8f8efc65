//! reuse-sincos: kernels-rs's `sincos` kernel, `b[j] = a[j] + sqrt(sin(i)² + cos(i)²)`
//! with `i = offset + j`, run by a host of its own on 2^20 floats, and every element
//! checked against the same math on the CPU (`kernels_rs::element::sincos_element`).
//! Prints one line; exits non-zero with one line on a wrong element or without a GPU.
use std::process::ExitCode;

use anyhow::bail;
use cudarc::driver::LaunchConfig;
use cudarc::nvrtc::Ptx;
use kernels_rs::{element, sincos};
use nvptx_kernel::cuda::{self, TypedFunction};

/// Elements in the arrays.
const N: usize = 1 << 20;
/// The index of the first element: the kernel's `offset`.
const OFFSET: u32 = 1000;
/// Threads per block.
const THREADS: u32 = 256;

/// kernels-rs compiled to PTX by `build.rs`.
static PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("reuse-sincos: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let a: Vec<f32> = (0..N).map(|j| j as f32 / N as f32).collect();

    // Open the first GPU; one stream orders all the work, so cudarc need not track the
    // buffers' uses with events.
    let ctx = cuda::open(0)?;
    // SAFETY: every buffer below is used on `stream` alone.
    unsafe { ctx.disable_event_tracking() };

    // Load kernels-rs's module and its `sincos` kernel, by the kernel's declaration.
    let module = ctx.load_module(Ptx::from_src(PTX))?;
    let kernel = TypedFunction::load(&module, sincos)?;

    // Make a stream, copy the input in and allocate the output.
    let stream = ctx.new_stream()?;
    let a_gpu = stream.clone_htod(&a)?;
    let mut b_gpu = stream.alloc_zeros::<f32>(N)?;

    // Launch one thread per element: `sincos(a: &[f32], b: &mut [f32], offset: u32)`.
    let config = LaunchConfig {
        grid_dim: ((N as u32).div_ceil(THREADS), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the grid covers `b`, `a` is as long as `b` (the kernel reads it unchecked),
    // and the buffers live until the copy below has waited for the kernel.
    unsafe {
        kernel.launch(
            &stream,
            config,
            (cuda::slice(&a_gpu), cuda::slice_mut(&mut b_gpu), OFFSET),
        )?;
    }

    // Copy the result back, which waits for the kernel, and check every element.
    let b = stream.clone_dtoh(&b_gpu)?;
    // Both sides run the same `libm` code with correctly rounded `sqrt` and `fma`, so they
    // agree bit for bit; a tolerance would pass a kernel that skipped the math, since
    // `sqrt(sin² + cos²)` is 1 within rounding.
    for (j, (&x, &got)) in a.iter().zip(&b).enumerate() {
        let want = element::sincos_element(x, OFFSET + j as u32);
        if got.to_bits() != want.to_bits() {
            bail!("element {j} is {got}, expected {want} (bit for bit)");
        }
    }
    println!("reuse-sincos: {N} elements, all identical, bit for bit, to kernels_rs::element");
    Ok(())
}
