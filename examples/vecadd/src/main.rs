//! vecadd: `c = a + b` over 2^20 floats on the GPU, with the kernel from `kernels/`,
//! built to PTX by `build.rs` and launched through nvptx-kernel's typed launcher.
//! Prints one line; exits non-zero with one line on a wrong element or without a GPU.
use std::process::ExitCode;

use anyhow::bail;
use cudarc::driver::LaunchConfig;
use cudarc::nvrtc::Ptx;
use nvptx_kernel::cuda::{self, TypedFunction};
use vecadd_kernels::vecadd;

/// How many numbers to add.
const N: usize = 1 << 20;
/// Threads per block.
const THREADS: u32 = 256;

/// The kernel crate, compiled to PTX by `build.rs`.
static PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("vecadd: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    // The inputs: small whole numbers, so every sum is exact.
    let a: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..N).map(|i| (2 * i) as f32).collect();

    // Open the first GPU. Its buffers are used on one stream only, which orders all the
    // work, so cudarc need not track their uses with events.
    let ctx = cuda::open(0)?;
    // SAFETY: every buffer below is used on `stream` alone.
    unsafe { ctx.disable_event_tracking() };

    // Load the module (the PTX that holds the kernel) and find the kernel in it by its
    // declaration.
    let module = ctx.load_module(Ptx::from_src(PTX))?;
    let add = TypedFunction::load(&module, vecadd)?;

    // Make a stream to queue the work on; it does not wait for other streams.
    let stream = ctx.new_stream()?;

    // Copy the inputs to the GPU and allocate the output there.
    let a_gpu = stream.clone_htod(&a)?;
    let b_gpu = stream.clone_htod(&b)?;
    let mut c_gpu = stream.alloc_zeros::<f32>(N)?;

    // Launch one thread per element. The launch is queued and returns at once; the
    // arguments must match `vecadd(a: &[f32], b: &[f32], c: &mut [f32])` to compile.
    let config = LaunchConfig {
        grid_dim: ((N as u32).div_ceil(THREADS), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the grid covers `c`, `a` and `b` are as long as `c`, and the buffers live
    // until the copy below has waited for the kernel.
    unsafe {
        add.launch(
            &stream,
            config,
            (
                cuda::slice(&a_gpu),
                cuda::slice(&b_gpu),
                cuda::slice_mut(&mut c_gpu),
            ),
        )?;
    }

    // Copy the result back; this waits for the stream, and so for the kernel.
    let c = stream.clone_dtoh(&c_gpu)?;

    // Check every element.
    for (i, ((&x, &y), &sum)) in a.iter().zip(&b).zip(&c).enumerate() {
        if sum != x + y {
            bail!("element {i} is {sum}, expected {x} + {y} = {}", x + y);
        }
    }
    println!("vecadd: {N} elements, all correct");
    Ok(())
}
