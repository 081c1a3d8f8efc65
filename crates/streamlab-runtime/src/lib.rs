//! Every call streamlab makes to the GPU lives here, over `cudarc`'s thin driver layer
//! (`cudarc::driver::result`); experiments use these types and never raw pointers.
//!
//! 1. [`Gpu::open`] finds the driver, picks the device, makes its primary context
//!    current and loads the embedded Rust PTX ([`kernels`]); [`baseline`] compiles the
//!    CUDA C++ twins with NVRTC.
//! 2. [`Gpu::ensure_fits`] checks free device memory before anything large is allocated;
//!    [`Gpu::alloc`], [`Gpu::pinned`] and [`Gpu::mapped`] allocate device, page-locked
//!    and mapped (zero-copy) host buffers; [`Gpu::register`] page-locks a user's `Vec`
//!    where it lies, and [`Gpu::mem_pool`] makes a pool for stream-ordered allocation
//!    ([`Stream::alloc_and_free`]).
//! 3. [`Stream`]s are non-blocking; copies and launches are asynchronous on a stream, and
//!    a launch takes host values type-checked against the kernel's declaration.
//! 4. [`Event`]s time the work between two records on the GPU's own clock; [`graph`]
//!    captures streams' work once and replays it; [`trace`] records when each copy and
//!    kernel really ran (CUPTI).
//!
//! 5. [`peer`] works with several GPUs at once: each [`Gpu`] makes its buffers, streams
//!    and events in its own context, and [`Gpu::bind`] makes that context current
//!    before its streams are used; peer access and copies between GPUs.
//! 6. [`clocks`] reads the GPU's clocks and why it holds them down, and [`links`] how
//!    the GPUs are joined (NVLink or PCIe), through NVML; [`nccl`] finds NCCL, loads it
//!    and runs its all-reduce over several GPUs (the two libraries here outside CUDA's
//!    driver API).
//!
//! Every safe function here is sound for every input, by its types:
//!
//! * a copy or kernel writes only a buffer borrowed `&mut`, and streams cannot outlive
//!   their [`Gpu`];
//! * a launch takes host values type-checked against the kernel's declaration, and only
//!   with a [`contract::Contract`] for them, which it checks before launching (a slice
//!   shorter than the kernel reaches is refused, [`RuntimeError::Contract`]);
//! * a [`kernels::Module`] loads only PTX checked against the declarations
//!   ([`kernels::CheckedPtx`]), and types a function only by a declaration so checked;
//! * buffers hold [`Element`]s only (any bytes are a value of them), and a new device
//!   buffer is zeroed;
//! * no call that issues work waits for the GPU, so nothing inserts waits into the timed
//!   regions (which is why cudarc's safe layer, with its automatic event tracking, is
//!   unused); instead the host reaches a pinned or mapped buffer only through calls that
//!   first wait for whatever the GPU may still be doing with it
//!   ([`PinnedBuffer::as_slice`] and the like, which return a `Result` for that reason),
//!   as dropping any buffer or stream does.
//!
//! Three calls are `unsafe`, each with its `# Safety`: replaying a [`graph`] (the graph's
//! buffers are not the graph's to keep), [`Stream::launch_dynamic`] (a user's kernel, whose
//! reach no check here can know) and [`Stream::launch_programmatic`] (the kernel may run
//! beside the one ahead of it until it waits, which only the kernel can promise). Under the
//! safe types, the driver is reached only through cudarc's thin layer
//! (`cudarc::driver::result`) and the `raw` module, which holds the calls that layer lacks.
//!
//! ```compile_fail
//! // A copy cannot write a buffer borrowed shared ...
//! use streamlab_runtime::{DeviceBuffer, PinnedBuffer, Stream};
//! fn copy(s: &Stream, dst: &DeviceBuffer<f32>, src: &PinnedBuffer<f32>) {
//!     let _ = s.htod(dst, 0, src, 0..1);
//! }
//! ```
//! ```no_run
//! // ... only one borrowed `&mut`.
//! use streamlab_runtime::{DeviceBuffer, PinnedBuffer, Stream};
//! fn copy(s: &Stream, dst: &mut DeviceBuffer<f32>, src: &PinnedBuffer<f32>) {
//!     let _ = s.htod(dst, 0, src, 0..1);
//! }
//! ```
//! ```compile_fail
//! // A stream cannot outlive its GPU ...
//! use streamlab_runtime::{Gpu, Stream};
//! fn streams(gpu: Gpu) -> Vec<Stream<'static>> {
//!     gpu.streams(1).unwrap()
//! }
//! ```
//! ```no_run
//! // ... it borrows it.
//! use streamlab_runtime::{Gpu, Stream};
//! fn streams(gpu: &Gpu) -> Vec<Stream<'_>> {
//!     gpu.streams(1).unwrap()
//! }
//! ```
pub mod baseline;
mod buffer;
pub mod clocks;
pub mod contract;
pub mod cpp_host;
mod device;
pub mod gate;
mod gpu;
pub mod graph;
pub mod kernels;
pub mod links;
pub mod nccl;
pub mod news;
pub mod parallel;
pub mod peer;
mod pending;
mod raw;
mod region;
pub mod spellings;
mod stream;
pub mod trace;

use cudarc::driver::{DriverError, sys};

/// The variable the driver reads at start for the number of hardware work queues (8 by
/// default: streams k and k + 8 then share one, and an event recorded on one stalls the
/// other).
pub const QUEUES_VARIABLE: &str = "CUDA_DEVICE_MAX_CONNECTIONS";

pub use buffer::{DeviceBuffer, Element, MappedBuffer, PinnedBuffer};
pub use gpu::Gpu;
pub use kernels::{Function, Kernels};
pub use region::Region;
pub use stream::{Event, MemPool, Shape, Stream};

/// A failure talking to the GPU.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(
        "no NVIDIA driver found (libcuda could not be loaded): run streamlab on a machine with an NVIDIA GPU and its driver installed"
    )]
    NoDriver,
    #[error("there is no GPU {ordinal}: this machine has {count}; choose --device 0..={}", count.saturating_sub(1))]
    NoDevice { ordinal: usize, count: usize },
    #[error("this machine's driver reports no CUDA GPU: check `nvidia-smi`")]
    NoGpus,
    #[error(
        "the buffers need {:.2} GiB of GPU memory but only {:.2} GiB is free: use smaller sizes (or --quick)",
        gib(*needed), gib(*free)
    )]
    OutOfMemory { needed: u64, free: u64 },
    #[error(
        "could not allocate {:.2} GiB of pinned host memory ({}): use smaller sizes (or --quick), or free host memory",
        gib(*bytes), describe(source)
    )]
    Pinned { bytes: u64, source: DriverError },
    #[error("CUDA error while {what}: {}", describe(source))]
    Driver {
        what: &'static str,
        source: DriverError,
    },
    #[error("kernel `{kernel}` failed on the GPU: {}", describe(source))]
    Kernel { kernel: String, source: DriverError },
    #[error("kernel `{kernel}` was not launched: {why}")]
    Contract { kernel: String, why: String },
    #[error("the kernel module does not load on this GPU: {0}")]
    Module(String),
    #[error("CUPTI failed while {what}: error {code}")]
    Cupti { what: &'static str, code: u32 },
    #[error("the trace is incomplete: {0}")]
    Trace(String),
    #[error("the CUDA C++ host failed: CUDA error {code}")]
    CppHost { code: i32 },
    #[error(
        "peer access from GPU {from} to GPU {to} is still on after it was turned off (a second cuCtxDisablePeerAccess did not answer CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)"
    )]
    PeerAccessStillOn { from: usize, to: usize },
    #[error("a gate refused: {0}")]
    Gate(String),
    #[error("NCCL: {0}")]
    Nccl(String),
}

impl RuntimeError {
    /// This error as a fault of kernel `name` where it is one a kernel causes (an illegal
    /// address or instruction, a trap, a failed assertion, …), which the driver reports at
    /// the next call that waits.
    pub fn blamed_on(self, name: &str) -> RuntimeError {
        use sys::CUresult as R;
        const FAULTS: [R; 7] = [
            R::CUDA_ERROR_ILLEGAL_ADDRESS,
            R::CUDA_ERROR_LAUNCH_FAILED,
            R::CUDA_ERROR_ILLEGAL_INSTRUCTION,
            R::CUDA_ERROR_MISALIGNED_ADDRESS,
            R::CUDA_ERROR_INVALID_PC,
            R::CUDA_ERROR_HARDWARE_STACK_ERROR,
            R::CUDA_ERROR_ASSERT,
        ];
        match self {
            RuntimeError::Driver { source, .. } if FAULTS.contains(&source.0) => {
                RuntimeError::Kernel {
                    kernel: name.to_owned(),
                    source,
                }
            }
            other => other,
        }
    }
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

/// A driver error as one line: its name and the driver's description.
fn describe(err: &DriverError) -> String {
    match err.error_string() {
        Ok(text) => format!("{:?} ({})", err.0, text.to_string_lossy()),
        Err(_) => format!("{:?}", err.0),
    }
}

/// Attach context to a driver result.
trait Context<T> {
    fn doing(self, what: &'static str) -> Result<T, RuntimeError>;
}

impl<T> Context<T> for Result<T, DriverError> {
    fn doing(self, what: &'static str) -> Result<T, RuntimeError> {
        self.map_err(|source| RuntimeError::Driver { what, source })
    }
}

/// Whether this machine has an NVIDIA driver library (libcuda) to load.
pub fn driver_present() -> bool {
    // SAFETY: probing for the library has no preconditions.
    unsafe { sys::is_culib_present() }
}
