//! Every CUDA call streamlab makes lives here, over `cudarc`'s thin driver layer
//! (`cudarc::driver::result`); experiments use these types and never raw pointers.
//!
//! 1. [`Gpu::open`] finds the driver, picks the device, makes its primary context
//!    current and loads the embedded Rust PTX ([`Gpu::kernels`]).
//! 2. [`Gpu::ensure_fits`] checks free device memory before anything large is allocated;
//!    [`Gpu::alloc`] and [`Gpu::pinned`] allocate device and page-locked host buffers.
//! 3. [`Stream`]s are non-blocking; copies and launches are asynchronous on a stream.
//! 4. [`Event`]s time the work between two records on the GPU's own clock.
//!
//! No call here synchronises unless its name says so, so nothing inserts waits into
//! the timed regions (which is why the safe layer's automatic event tracking is unused).
mod device;

use std::ffi::{CString, c_void};
use std::marker::PhantomData;
use std::ops::Range;

use cudarc::driver::{DriverError, result, sys};

pub use device::query_info;

use crate::results::DeviceInfo;

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
    OutOfMemory { needed: usize, free: usize },
    #[error(
        "could not allocate {:.2} GiB of pinned host memory ({source}): use smaller sizes (or --quick), or free host memory",
        gib(*bytes)
    )]
    Pinned { bytes: usize, source: DriverError },
    #[error("CUDA error while {what}: {source}")]
    Driver {
        what: &'static str,
        source: DriverError,
    },
    #[error("the kernel module does not load on this GPU: {0}")]
    Module(String),
}

fn gib(bytes: usize) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
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

/// One GPU with a current context and the Rust kernels loaded.
pub struct Gpu {
    info: DeviceInfo,
    kernels: Kernels,
}

impl Gpu {
    /// Open GPU `ordinal`: load the driver, make its primary context current on this
    /// thread and load the embedded Rust PTX.
    pub fn open(ordinal: usize) -> Result<Gpu, RuntimeError> {
        if !driver_present() {
            return Err(RuntimeError::NoDriver);
        }
        result::init().doing("initialising the driver")?;
        let count = result::device::get_count().doing("counting GPUs")? as usize;
        if count == 0 {
            return Err(RuntimeError::NoGpus);
        }
        if ordinal >= count {
            return Err(RuntimeError::NoDevice { ordinal, count });
        }
        let device = result::device::get(ordinal as i32).doing("opening the GPU")?;
        // SAFETY: `device` is valid; the primary context lives until the process ends.
        unsafe {
            let ctx = result::primary_ctx::retain(device).doing("creating a context")?;
            result::ctx::set_current(ctx).doing("making the context current")?;
        }
        let info = query_info(ordinal, device)?;
        let kernels = Kernels::load(crate::kernels::RUST_PTX, crate::kernels::KernelSet::Rust)?;
        Ok(Gpu { info, kernels })
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The Rust kernels.
    pub fn kernels(&self) -> &Kernels {
        &self.kernels
    }

    /// Fail with [`RuntimeError::OutOfMemory`] unless `bytes` fit in free device memory.
    pub fn ensure_fits(&self, bytes: usize) -> Result<(), RuntimeError> {
        let (free, _total) = result::mem_get_info().doing("reading free GPU memory")?;
        if bytes > free {
            return Err(RuntimeError::OutOfMemory {
                needed: bytes,
                free,
            });
        }
        Ok(())
    }

    /// An uninitialised device buffer of `len` elements.
    pub fn alloc<T: Copy>(&self, len: usize) -> Result<DeviceBuffer<T>, RuntimeError> {
        let bytes = len.max(1) * size_of::<T>();
        self.ensure_fits(bytes)?;
        // SAFETY: a plain allocation; freed in Drop.
        let ptr = unsafe { result::malloc_sync(bytes) }.doing("allocating GPU memory")?;
        Ok(DeviceBuffer {
            ptr,
            len,
            _element: PhantomData,
        })
    }

    /// A page-locked host buffer of `len` elements, every element `fill`.
    pub fn pinned<T: Copy>(&self, len: usize, fill: T) -> Result<PinnedBuffer<T>, RuntimeError> {
        let bytes = len.max(1) * size_of::<T>();
        // SAFETY: flags 0 asks for ordinary (cached, not write-combined) pinned memory.
        let ptr = unsafe { result::malloc_host(bytes, 0) }
            .map_err(|source| RuntimeError::Pinned { bytes, source })? as *mut T;
        // SAFETY: the allocation holds `len` elements of T.
        unsafe { std::slice::from_raw_parts_mut(ptr, len) }.fill(fill);
        Ok(PinnedBuffer { ptr, len })
    }

    /// `count` new non-blocking streams.
    pub fn streams(&self, count: usize) -> Result<Vec<Stream>, RuntimeError> {
        (0..count).map(|_| Stream::new()).collect()
    }

    /// A new timing event.
    pub fn event(&self) -> Result<Event, RuntimeError> {
        Event::new()
    }

    /// Wait until all work on the GPU has finished.
    pub fn synchronize(&self) -> Result<(), RuntimeError> {
        result::ctx::synchronize().doing("waiting for the GPU")
    }
}

/// A loaded kernel entry point.
#[derive(Debug, Clone, Copy)]
pub struct Kernel {
    raw: sys::CUfunction,
    name: &'static str,
}

impl Kernel {
    pub fn name(&self) -> &'static str {
        self.name
    }
}

/// The four kernels from one PTX module (the Rust set, or the CUDA C++ twins).
#[derive(Debug, Clone, Copy)]
pub struct Kernels {
    pub set: crate::kernels::KernelSet,
    pub fill: Kernel,
    pub matmul: Kernel,
    pub add_kernel: Kernel,
    pub sincos: Kernel,
}

impl Kernels {
    /// Load a PTX module holding the four entry points.
    pub fn load(ptx: &str, set: crate::kernels::KernelSet) -> Result<Kernels, RuntimeError> {
        let image = CString::new(ptx)
            .map_err(|_| RuntimeError::Module("PTX contains a NUL byte".into()))?;
        // SAFETY: `image` is a NUL-terminated PTX text; the module lives for the process.
        let module = unsafe { result::module::load_data(image.as_ptr() as *const c_void) }
            .map_err(|err| RuntimeError::Module(err.to_string()))?;
        let get = |name: &'static str| -> Result<Kernel, RuntimeError> {
            let cname = CString::new(name).expect("kernel names have no NUL");
            // SAFETY: `module` is loaded.
            let raw = unsafe { result::module::get_function(module, cname) }
                .map_err(|err| RuntimeError::Module(format!("{name}: {err}")))?;
            Ok(Kernel { raw, name })
        };
        Ok(Kernels {
            set,
            fill: get("fill")?,
            matmul: get("matmul")?,
            add_kernel: get("add_kernel")?,
            sincos: get("sincos")?,
        })
    }
}

/// A kernel argument, passed by value.
#[derive(Debug, Clone, Copy)]
pub enum Arg {
    /// A device address (a buffer's start or an element inside it).
    Ptr(u64),
    I32(i32),
    U32(u32),
    U64(u64),
    F32(f32),
}

/// Grid and block dimensions of a launch (x, y).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub grid: (u32, u32),
    pub block: (u32, u32),
}

impl Shape {
    /// A 1-D launch.
    pub fn linear(blocks: u32, threads: u32) -> Shape {
        Shape {
            grid: (blocks, 1),
            block: (threads, 1),
        }
    }
}

/// A non-blocking stream.
pub struct Stream {
    raw: sys::CUstream,
}

impl Stream {
    fn new() -> Result<Stream, RuntimeError> {
        let raw = result::stream::create(result::stream::StreamKind::NonBlocking)
            .doing("creating a stream")?;
        Ok(Stream { raw })
    }

    /// Copy host elements `src` into `dst` starting at element `dst_start`.
    pub fn htod<T: Copy>(
        &self,
        dst: &DeviceBuffer<T>,
        dst_start: usize,
        src: &PinnedBuffer<T>,
        src_range: Range<usize>,
    ) -> Result<(), RuntimeError> {
        let count = copy_len(dst_start, dst.len, &src_range, src.len);
        // SAFETY: both ranges are in bounds; the host buffer is pinned and outlives the copy
        // because callers synchronise before dropping or reading it.
        let host = unsafe { std::slice::from_raw_parts(src.ptr.add(src_range.start), count) };
        unsafe { result::memcpy_htod_async(dst.addr(dst_start), host, self.raw) }
            .doing("copying host to device")
    }

    /// Copy `src_range` of device buffer `src` into host `dst` starting at element `dst_start`.
    pub fn dtoh<T: Copy>(
        &self,
        dst: &mut PinnedBuffer<T>,
        dst_start: usize,
        src: &DeviceBuffer<T>,
        src_range: Range<usize>,
    ) -> Result<(), RuntimeError> {
        let count = copy_len(dst_start, dst.len, &src_range, src.len);
        // SAFETY: as in `htod`.
        let host = unsafe { std::slice::from_raw_parts_mut(dst.ptr.add(dst_start), count) };
        unsafe { result::memcpy_dtoh_async(host, src.addr(src_range.start), self.raw) }
            .doing("copying device to host")
    }

    /// Copy `src_range` of device buffer `src` into `dst` starting at element `dst_start`.
    pub fn dtod<T: Copy>(
        &self,
        dst: &DeviceBuffer<T>,
        dst_start: usize,
        src: &DeviceBuffer<T>,
        src_range: Range<usize>,
    ) -> Result<(), RuntimeError> {
        let count = copy_len(dst_start, dst.len, &src_range, src.len);
        // SAFETY: both ranges are in bounds of live device allocations.
        unsafe {
            result::memcpy_dtod_async(
                dst.addr(dst_start),
                src.addr(src_range.start),
                count * size_of::<T>(),
                self.raw,
            )
        }
        .doing("copying device to device")
    }

    /// Launch `kernel` with `shape` and `args` on this stream.
    pub fn launch(&self, kernel: &Kernel, shape: Shape, args: &[Arg]) -> Result<(), RuntimeError> {
        let mut values: Vec<[u8; 8]> = args
            .iter()
            .map(|arg| match *arg {
                Arg::Ptr(v) | Arg::U64(v) => v.to_ne_bytes(),
                Arg::I32(v) => widen(v.to_ne_bytes()),
                Arg::U32(v) => widen(v.to_ne_bytes()),
                Arg::F32(v) => widen(v.to_ne_bytes()),
            })
            .collect();
        let mut params: Vec<*mut c_void> = values
            .iter_mut()
            .map(|v| v.as_mut_ptr() as *mut c_void)
            .collect();
        // SAFETY: each parameter points at a value of the kernel's parameter size (the
        // 4-byte ones at the start of an 8-byte slot); the driver copies them at launch.
        unsafe {
            result::launch_kernel(
                kernel.raw,
                (shape.grid.0, shape.grid.1, 1),
                (shape.block.0, shape.block.1, 1),
                0,
                self.raw,
                &mut params,
            )
        }
        .doing("launching a kernel")
    }

    /// Overwrite every byte of `buf` with 0xFF (NaN for floats, -1 for ints), so that an
    /// element a kernel fails to write cannot pass for a right answer.
    pub fn poison<T>(&self, buf: &DeviceBuffer<T>) -> Result<(), RuntimeError> {
        // SAFETY: the range is the whole allocation.
        unsafe { result::memset_d8_async(buf.ptr, 0xFF, buf.len * size_of::<T>(), self.raw) }
            .doing("poisoning a buffer")
    }

    /// Record `event` after the work issued so far on this stream.
    pub fn record(&self, event: &Event) -> Result<(), RuntimeError> {
        // SAFETY: both handles are live.
        unsafe { result::event::record(event.raw, self.raw) }.doing("recording an event")
    }

    /// Make later work on this stream wait for `event`.
    pub fn wait(&self, event: &Event) -> Result<(), RuntimeError> {
        // SAFETY: both handles are live.
        unsafe {
            result::stream::wait_event(
                self.raw,
                event.raw,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        }
        .doing("making a stream wait")
    }

    /// Block until everything issued on this stream has finished.
    pub fn synchronize(&self) -> Result<(), RuntimeError> {
        // SAFETY: the handle is live.
        unsafe { result::stream::synchronize(self.raw) }.doing("waiting for a stream")
    }
}

/// The element count of a copy of `src_range` (of a buffer of `src_len`) to `dst_start`
/// (of a buffer of `dst_len`); a copy outside either buffer is a bug in the caller.
fn copy_len(dst_start: usize, dst_len: usize, src_range: &Range<usize>, src_len: usize) -> usize {
    let count = src_range.len();
    assert!(
        dst_start + count <= dst_len && src_range.end <= src_len,
        "copy out of bounds"
    );
    count
}

fn widen(bytes: [u8; 4]) -> [u8; 8] {
    let mut wide = [0u8; 8];
    wide[..4].copy_from_slice(&bytes);
    wide
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: the stream is ours; destroying it lets queued work finish first.
        let _ = unsafe { result::stream::destroy(self.raw) };
    }
}

/// A timing event.
pub struct Event {
    raw: sys::CUevent,
}

impl Event {
    fn new() -> Result<Event, RuntimeError> {
        let raw = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
            .doing("creating an event")?;
        Ok(Event { raw })
    }

    /// Milliseconds from `self` to `end`; both must have completed.
    pub fn elapsed_ms(&self, end: &Event) -> Result<f64, RuntimeError> {
        // SAFETY: both handles are live.
        unsafe {
            result::event::synchronize(end.raw).doing("waiting for an event")?;
            result::event::elapsed(self.raw, end.raw)
                .map(f64::from)
                .doing("reading event times")
        }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: the event is ours.
        let _ = unsafe { result::event::destroy(self.raw) };
    }
}

/// A buffer of `T` in device memory.
pub struct DeviceBuffer<T> {
    ptr: sys::CUdeviceptr,
    len: usize,
    _element: PhantomData<T>,
}

impl<T> DeviceBuffer<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address of element `index` (kernel argument).
    pub fn at(&self, index: usize) -> Arg {
        Arg::Ptr(self.addr(index))
    }

    fn addr(&self, index: usize) -> sys::CUdeviceptr {
        assert!(
            index <= self.len,
            "element {index} outside a buffer of {}",
            self.len
        );
        self.ptr + (index * size_of::<T>()) as u64
    }
}

impl<T> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: the allocation is ours; callers synchronise before buffers go out of scope.
        let _ = unsafe { result::free_sync(self.ptr) };
    }
}

/// A page-locked host buffer: copies to and from it run asynchronously at full speed.
pub struct PinnedBuffer<T> {
    ptr: *mut T,
    len: usize,
}

impl<T> PinnedBuffer<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The contents. Read only after the copies that write them have been waited for.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the allocation holds `len` initialised elements.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The contents, for writing inputs before copies are issued.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as above, and `&mut self` makes this the only view.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: the allocation is ours.
        let _ = unsafe { result::free_host(self.ptr as *mut c_void) };
    }
}
