//! Typed launches through [cudarc] (feature `cudarc`, host only): a kernel's declaration
//! finds its function in a loaded module, and each launch's arguments are checked against
//! the kernel's parameters when the host is compiled.
//!
//! 1. [`open`] a GPU: a missing driver is one clear error, not a panic. Then turn off
//!    cudarc's event tracking: a typed launch cannot report its buffers' uses to cudarc,
//!    so streams order the work, as in CUDA C++.
//! 2. Load the PTX with cudarc, and the kernel with [`TypedFunction::load`], given its
//!    declaration (a unit struct, so a `let` cannot reuse its name).
//! 3. Pass cudarc buffers as [`slice()`] (for `&[T]`) and [`slice_mut()`] (for `&mut [T]`),
//!    scalars as themselves.
//! 4. [`TypedFunction::launch`] queues the kernel on a stream. A tuple of arguments that
//!    does not match the kernel's parameters (an `i32` buffer for `&[f32]`, a read-only
//!    view for `&mut [f32]`, a `u64` for a `u32`, one argument too few) does not compile.
//!
//! ```no_run
//! use cudarc::driver::LaunchConfig;
//! use cudarc::nvrtc::Ptx;
//! use nvptx_kernel::cuda::{self, TypedFunction};
//!
//! // In the kernel crate; on the host `#[kernel]` makes it the declaration `vecadd`.
//! /// `c[i] = a[i] + b[i]`
//! #[nvptx_kernel::kernel]
//! pub unsafe fn vecadd(a: &[f32], b: &[f32], c: &mut [f32]) {
//!     let i = nvptx_kernel::thread::index_1d() as usize;
//!     if i < c.len() {
//!         c[i] = a[i] + b[i];
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let ctx = cuda::open(0)?;
//! // SAFETY: all the work below is on one stream, which orders it.
//! unsafe { ctx.disable_event_tracking() };
//! let module = ctx.load_module(Ptx::from_src(std::fs::read_to_string("kernels.ptx")?))?;
//! let add = TypedFunction::load(&module, vecadd)?;
//! let stream = ctx.new_stream()?;
//! let a = stream.clone_htod(&vec![1.0f32; 4096])?;
//! let b = stream.clone_htod(&vec![2.0f32; 4096])?;
//! let mut c = stream.alloc_zeros::<f32>(4096)?;
//! let config = LaunchConfig::for_num_elems(4096);
//! // SAFETY: one thread per element; the buffers outlive the kernel, since the copy
//! // below waits for it.
//! unsafe {
//!     add.launch(&stream, config, (cuda::slice(&a), cuda::slice(&b), cuda::slice_mut(&mut c)))?;
//! }
//! assert!(stream.clone_dtoh(&c)?.iter().all(|&x| x == 3.0));
//! # Ok(())
//! # }
//! ```
extern crate std;

use core::fmt;
use core::marker::PhantomData;
use std::format;
use std::string::String;
use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaStream, DevicePtr, DevicePtrMut, DriverError,
    LaunchConfig, result, sys,
};

use crate::Kernel;
use crate::launch::{Args, DeviceSlice, DeviceSliceMut};

/// A failure of [`open`], [`TypedFunction::load`] or [`TypedFunction::launch`], as one
/// line.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    #[error(
        "no NVIDIA driver found (libcuda could not be loaded): run this on a machine with an NVIDIA GPU and its driver installed"
    )]
    NoDriver,
    #[error("could not open GPU {ordinal}: {}", describe(source))]
    Open { ordinal: usize, source: DriverError },
    #[error(
        "could not load kernel `{name}` from the module (is the PTX built from the crate that declares it?): {}",
        describe(source)
    )]
    Load {
        name: &'static str,
        source: DriverError,
    },
    #[error(
        "cudarc's event tracking is on: call `ctx.disable_event_tracking()` before allocating the buffers of a typed launch"
    )]
    EventTracking,
    #[error("could not launch kernel `{name}`: {}", describe(source))]
    Launch {
        name: &'static str,
        source: DriverError,
    },
}

/// A driver error as its name and the driver's description.
fn describe(err: &DriverError) -> String {
    match err.error_string() {
        Ok(text) => format!("{:?} ({})", err.0, text.to_string_lossy()),
        Err(_) => format!("{:?}", err.0),
    }
}

/// The context of GPU `ordinal`, or [`CudaError::NoDriver`] where this machine has no
/// NVIDIA driver library to load.
pub fn open(ordinal: usize) -> Result<Arc<CudaContext>, CudaError> {
    // SAFETY: probing for the library has no preconditions.
    if !unsafe { sys::is_culib_present() } {
        return Err(CudaError::NoDriver);
    }
    CudaContext::new(ordinal).map_err(|source| CudaError::Open { ordinal, source })
}

/// Kernel `K`'s function in a loaded module: launches take exactly the arguments
/// `K::Args` describes.
pub struct TypedFunction<K> {
    function: CudaFunction,
    kernel: PhantomData<fn() -> K>,
}

impl<K: Kernel> TypedFunction<K> {
    /// Kernel `K`'s function in `module`, found by the name in `K::SIGNATURE`; `_kernel`
    /// is the declaration `#[kernel]` wrote, e.g. `kernels_rs::sincos`.
    pub fn load(module: &Arc<CudaModule>, _kernel: K) -> Result<TypedFunction<K>, CudaError> {
        let name = K::SIGNATURE.name;
        let function = module
            .load_function(name)
            .map_err(|source| CudaError::Load { name, source })?;
        Ok(TypedFunction {
            function,
            kernel: PhantomData,
        })
    }

    /// The cudarc function, for what cudarc offers beyond launching (occupancy queries,
    /// function attributes).
    pub fn function(&self) -> &CudaFunction {
        &self.function
    }

    /// Queue the kernel on `stream` with `config`'s grid, block and dynamic shared
    /// memory; it returns at once. A fault inside the kernel is reported by the stream's
    /// next synchronizing call.
    ///
    /// # Safety
    /// The launch makes the promises of the kernel's `unsafe fn`: the grid covers what
    /// the body assumes, every buffer stays allocated until the kernel has finished, and
    /// no other work touches a `slice_mut` buffer while it runs (or a `slice` buffer
    /// writes to it). With event tracking off, ordering work on other streams is the
    /// caller's, with events or synchronization.
    pub unsafe fn launch(
        &self,
        stream: &CudaStream,
        config: LaunchConfig,
        args: impl Args<K::Args>,
    ) -> Result<(), CudaError> {
        let name = K::SIGNATURE.name;
        let failed = |source| CudaError::Launch { name, source };
        let ctx = stream.context();
        if ctx.is_event_tracking() {
            return Err(CudaError::EventTracking);
        }
        ctx.bind_to_thread().map_err(failed)?;
        let mut params = args.pack();
        let mut pointers = params.pointers();
        // SAFETY: the function comes from a module the `CudaFunction` keeps loaded, the
        // parameters match the kernel's (checked by `Args`), and the caller keeps the
        // promises above.
        unsafe {
            result::launch_kernel(
                self.function.cu_function(),
                config.grid_dim,
                config.block_dim,
                config.shared_mem_bytes,
                stream.cu_stream(),
                &mut pointers,
            )
        }
        .map_err(failed)
    }
}

impl<K: Kernel> fmt::Debug for TypedFunction<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TypedFunction({})", K::SIGNATURE)
    }
}

/// A cudarc buffer ([`CudaSlice`](cudarc::driver::CudaSlice) or a view of one) as a
/// `&[T]` argument, borrowing it for as long as the argument lives.
pub fn slice<T, B: DevicePtr<T>>(buffer: &B) -> DeviceSlice<'_, T> {
    // Event tracking is off (`launch` checks), so the guard records nothing.
    let (addr, _record) = buffer.device_ptr(buffer.stream());
    // SAFETY: the address and length are those of a live allocation of `T`, borrowed
    // for the view's lifetime.
    unsafe { DeviceSlice::from_raw(addr, buffer.len()) }
}

/// A cudarc buffer as a `&mut [T]` argument, borrowing it exclusively for as long as
/// the argument lives.
pub fn slice_mut<T, B: DevicePtrMut<T>>(buffer: &mut B) -> DeviceSliceMut<'_, T> {
    let len = buffer.len();
    let stream = buffer.stream().clone();
    let (addr, _record) = buffer.device_ptr_mut(&stream);
    // SAFETY: as in `slice`, and the exclusive borrow keeps every other use out.
    unsafe { DeviceSliceMut::from_raw(addr, len) }
}
