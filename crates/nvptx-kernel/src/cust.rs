//! Typed launches through Rust-CUDA's host crate [cust] (feature `cust`, host only), the
//! twin of [`crate::cuda`] for hosts written against cust: a kernel's declaration finds
//! its function in a loaded `cust::module::Module`, and each launch's arguments are
//! checked against the kernel's parameters when the host is compiled.
//!
//! 1. Initialise cust (`cust::quick_init()`) and load the PTX (`Module::from_ptx`). The
//!    build that made the PTX (nvptx-builder) checked every entry's parameters against
//!    its declaration.
//! 2. Load the kernel with [`TypedFunction::load`], given its declaration (a unit struct,
//!    so a `let` cannot reuse its name).
//! 3. Pass cust's device memory ([`DeviceBuffer`](::cust::memory::DeviceBuffer), or a
//!    [`DeviceSlice`](::cust::memory::DeviceSlice) of it such as `buffer.index(a..b)`) as
//!    [`slice()`] for `&[T]` and [`slice_mut()`] for `&mut [T]`, scalars as themselves.
//! 4. [`TypedFunction::launch`] queues the kernel on a `cust::stream::Stream`. A tuple of
//!    arguments that does not match the kernel's parameters (an `i32` buffer for
//!    `&[f32]`, a read-only view for `&mut [f32]`, a `u64` for a `u32`, one argument too
//!    few) does not compile, where cust's own `launch!` takes any `DeviceCopy` value.
//!
//! cust links `libcuda` when the host is built (its build script looks for a CUDA
//! installation), so a binary built with this feature starts only where the NVIDIA
//! driver is installed.
//!
//! ```no_run
//! use cust::memory::{CopyDestination, DeviceBuffer};
//! use cust::module::Module;
//! use cust::stream::{Stream, StreamFlags};
//! use nvptx_kernel::cust::{self as typed, TypedFunction};
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
//! let _context = cust::quick_init()?;
//! let module = Module::from_ptx(std::fs::read_to_string("kernels.ptx")?, &[])?;
//! let add = TypedFunction::load(&module, vecadd)?;
//! let stream = Stream::new(StreamFlags::DEFAULT, None)?;
//! let a = DeviceBuffer::from_slice(&[1.0f32; 4096])?;
//! let b = DeviceBuffer::from_slice(&[2.0f32; 4096])?;
//! let mut c = DeviceBuffer::from_slice(&[0.0f32; 4096])?;
//! // SAFETY: one thread per element; the buffers outlive the kernel, since the stream is
//! // synchronized before they are read or dropped.
//! unsafe {
//!     add.launch(&stream, 16, 256, 0, (typed::slice(&a), typed::slice(&b), typed::slice_mut(&mut c)))?;
//! }
//! stream.synchronize()?;
//! let mut host = [0.0f32; 4096];
//! c.copy_to(&mut host[..])?;
//! assert!(host.iter().all(|&x| x == 3.0));
//! # Ok(())
//! # }
//! ```
extern crate std;

use core::fmt;
use core::marker::PhantomData;

use ::cust::error::CudaError;
use ::cust::function::{BlockSize, Function, GridSize};
use ::cust::memory::{DeviceCopy, DeviceMemory, DeviceSlice as CustSlice};
use ::cust::module::Module;
use ::cust::stream::Stream;

use crate::Kernel;
use crate::launch::{Args, DeviceSlice, DeviceSliceMut};

/// A failure of [`TypedFunction::load`] or [`TypedFunction::launch`], as one line.
#[derive(Debug, thiserror::Error)]
pub enum CustError {
    #[error(
        "could not load kernel `{name}` from the module (is the PTX built from the crate that declares it?): {source}"
    )]
    Load {
        name: &'static str,
        source: CudaError,
    },
    #[error("could not launch kernel `{name}`: {source}")]
    Launch {
        name: &'static str,
        source: CudaError,
    },
}

/// Kernel `K`'s function in a loaded cust module: launches take exactly the arguments
/// `K::Args` describes.
pub struct TypedFunction<'m, K> {
    function: Function<'m>,
    kernel: PhantomData<fn() -> K>,
}

impl<'m, K: Kernel> TypedFunction<'m, K> {
    /// Kernel `K`'s function in `module`, found by the name in `K::SIGNATURE`; `_kernel`
    /// is the declaration `#[kernel]` wrote, e.g. `kernels_rs::sincos`.
    pub fn load(module: &'m Module, _kernel: K) -> Result<TypedFunction<'m, K>, CustError> {
        let name = K::SIGNATURE.name;
        let function = module
            .get_function(name)
            .map_err(|source| CustError::Load { name, source })?;
        Ok(TypedFunction {
            function,
            kernel: PhantomData,
        })
    }

    /// The cust function, for what cust offers beyond launching (occupancy queries,
    /// function attributes).
    pub fn function(&self) -> &Function<'m> {
        &self.function
    }

    /// Queue the kernel on `stream` with `grid` blocks of `block` threads and
    /// `shared_mem_bytes` of dynamic shared memory (as cust's `launch!` takes them); it
    /// returns at once. A fault inside the kernel is reported by the stream's next
    /// synchronizing call.
    ///
    /// # Safety
    /// The launch makes the promises of the kernel's `unsafe fn`: the grid covers what
    /// the body assumes, every buffer stays allocated until the kernel has finished, and
    /// no other work touches a `slice_mut` buffer while it runs (or a `slice` buffer
    /// writes to it). Ordering work on other streams is the caller's, with events or
    /// synchronization.
    pub unsafe fn launch(
        &self,
        stream: &Stream,
        grid: impl Into<GridSize>,
        block: impl Into<BlockSize>,
        shared_mem_bytes: u32,
        args: impl Args<K::Args>,
    ) -> Result<(), CustError> {
        let mut params = args.pack();
        let pointers = params.pointers();
        // SAFETY: the function belongs to a module the borrow keeps loaded, the
        // parameters match the kernel's (checked by `Args`), one pointer per PTX
        // parameter into `params`, which outlives the call; the caller keeps the promises
        // above. (`Stream::launch` is what cust's `launch!` calls.)
        unsafe { stream.launch(&self.function, grid, block, shared_mem_bytes, &pointers) }.map_err(
            |source| CustError::Launch {
                name: K::SIGNATURE.name,
                source,
            },
        )
    }
}

impl<K: Kernel> fmt::Debug for TypedFunction<'_, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TypedFunction({})", K::SIGNATURE)
    }
}

/// cust device memory (a `DeviceBuffer`, or a `DeviceSlice` of one) as a `&[T]` argument,
/// borrowing it for as long as the argument lives.
pub fn slice<T: DeviceCopy>(memory: &CustSlice<T>) -> DeviceSlice<'_, T> {
    // SAFETY: the address and length are those of live device memory of `T`, borrowed
    // for the view's lifetime.
    unsafe { DeviceSlice::from_raw(memory.as_raw_ptr(), memory.len()) }
}

/// cust device memory as a `&mut [T]` argument, borrowing it exclusively for as long as
/// the argument lives.
pub fn slice_mut<T: DeviceCopy>(memory: &mut CustSlice<T>) -> DeviceSliceMut<'_, T> {
    // SAFETY: as in `slice`, and the exclusive borrow keeps every other use of this view
    // out.
    unsafe { DeviceSliceMut::from_raw(memory.as_raw_ptr(), memory.len()) }
}
