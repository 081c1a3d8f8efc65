//! Every CUDA call streamlab makes lives here, over `cudarc`'s thin driver layer
//! (`cudarc::driver::result`); experiments use these types and never raw pointers.
//!
//! 1. [`Gpu::open`] finds the driver, picks the device, makes its primary context
//!    current and loads the embedded Rust PTX ([`kernels`]); [`baseline`] compiles the
//!    CUDA C++ twins with NVRTC.
//! 2. [`Gpu::ensure_fits`] checks free device memory before anything large is allocated;
//!    [`Gpu::alloc`], [`Gpu::pinned`] and [`Gpu::mapped`] allocate device, page-locked
//!    and mapped (zero-copy) host buffers.
//! 3. [`Stream`]s are non-blocking; copies and launches are asynchronous on a stream, and
//!    a launch takes host values type-checked against the kernel's declaration.
//! 4. [`Event`]s time the work between two records on the GPU's own clock; [`graph`]
//!    captures streams' work once and replays it; [`trace`] records when each copy and
//!    kernel really ran (CUPTI).
//!
//! 5. [`peer`] works with several GPUs at once: each [`Gpu`] makes its buffers, streams
//!    and events in its own context, and [`Gpu::bind`] makes that context current
//!    before its streams are used; peer access and copies between GPUs.
//!
//! No call that issues work waits for the GPU, so nothing inserts waits into the timed
//! regions (which is why the safe layer's automatic event tracking is unused). What
//! stays sound without it is in the types: a copy or kernel writes only a buffer
//! borrowed `&mut`; streams cannot outlive their [`Gpu`]; and the host reaches a pinned
//! or mapped buffer only through calls that first wait for whatever the GPU may still be
//! doing with it ([`PinnedBuffer::as_slice`] and the like, which return a `Result` for
//! that reason), as dropping any buffer or stream does. Replaying a [`graph`] is the one
//! `unsafe` call: the graph's buffers are not the graph's to keep.
//!
//! ```compile_fail
//! // A copy cannot write a buffer borrowed shared ...
//! use streamlab::runtime::{DeviceBuffer, PinnedBuffer, Stream};
//! fn copy(s: &Stream, dst: &DeviceBuffer<f32>, src: &PinnedBuffer<f32>) {
//!     let _ = s.htod(dst, 0, src, 0..1);
//! }
//! ```
//! ```no_run
//! // ... only one borrowed `&mut`.
//! use streamlab::runtime::{DeviceBuffer, PinnedBuffer, Stream};
//! fn copy(s: &Stream, dst: &mut DeviceBuffer<f32>, src: &PinnedBuffer<f32>) {
//!     let _ = s.htod(dst, 0, src, 0..1);
//! }
//! ```
//! ```compile_fail
//! // A stream cannot outlive its GPU ...
//! use streamlab::runtime::{Gpu, Stream};
//! fn streams(gpu: Gpu) -> Vec<Stream<'static>> {
//!     gpu.streams(1).unwrap()
//! }
//! ```
//! ```no_run
//! // ... it borrows it.
//! use streamlab::runtime::{Gpu, Stream};
//! fn streams(gpu: &Gpu) -> Vec<Stream<'_>> {
//!     gpu.streams(1).unwrap()
//! }
//! ```
pub mod baseline;
pub mod cpp_host;
mod device;
pub mod gate;
pub mod graph;
pub mod kernels;
pub mod peer;
mod pending;
mod region;
pub mod trace;

use std::cell::RefCell;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::{DriverError, result, sys};
use nvptx_kernel::launch::{Args, DeviceSlice, DeviceSliceMut};
use streamlab_results::saved::DeviceInfo;

/// The variable the driver reads at start for the number of hardware work queues (8 by
/// default: streams k and k + 8 then share one, and an event recorded on one stalls the
/// other).
pub const QUEUES_VARIABLE: &str = "CUDA_DEVICE_MAX_CONNECTIONS";

pub use kernels::{Function, Kernels};
use pending::{GpuWork, Pending, StreamWork};
pub use region::Region;

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
    #[error("the kernel module does not load on this GPU: {0}")]
    Module(String),
    #[error("CUPTI failed while {what}: error {code}")]
    Cupti { what: &'static str, code: u32 },
    #[error("the trace is incomplete: {0}")]
    Trace(String),
    #[error("the CUDA C++ host failed: CUDA error {code}")]
    CppHost { code: i32 },
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

/// One GPU with a current context and the Rust kernels loaded.
pub struct Gpu {
    info: DeviceInfo,
    kernels: Kernels,
    device: sys::CUdevice,
    /// Its primary context, where its buffers, streams, events and kernels live.
    ctx: sys::CUcontext,
    /// The context's issued and finished work, which its buffers wait for.
    work: Arc<GpuWork>,
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
        let ctx = unsafe {
            let ctx = result::primary_ctx::retain(device).doing("creating a context")?;
            result::ctx::set_current(ctx).doing("making the context current")?;
            ctx
        };
        let info = device::query_info(ordinal, device)?;
        let kernels = Kernels::load(kernels::RUST_PTX, streamlab_results::saved::KernelSet::Rust)?;
        Ok(Gpu {
            info,
            kernels,
            device,
            ctx,
            work: GpuWork::new(ctx),
        })
    }

    /// Make this GPU's context current on this thread: what is allocated, created,
    /// launched or waited for next is this GPU's.
    pub fn bind(&self) -> Result<(), RuntimeError> {
        // SAFETY: the primary context was retained in `open` and is never released.
        unsafe { result::ctx::set_current(self.ctx) }.doing("making a GPU's context current")
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The Rust kernels.
    pub fn kernels(&self) -> &Kernels {
        &self.kernels
    }

    /// Fail with [`RuntimeError::OutOfMemory`] unless `bytes` fit in free device memory.
    pub fn ensure_fits(&self, bytes: u64) -> Result<(), RuntimeError> {
        let (free, _total) = result::mem_get_info().doing("reading free GPU memory")?;
        if bytes > free as u64 {
            return Err(RuntimeError::OutOfMemory {
                needed: bytes,
                free: free as u64,
            });
        }
        Ok(())
    }

    /// An uninitialised device buffer of `len` elements.
    pub fn alloc<T: Copy>(&self, len: usize) -> Result<DeviceBuffer<T>, RuntimeError> {
        let bytes = len.max(1) * size_of::<T>();
        let ptr = self.work.within(|| {
            self.ensure_fits(bytes as u64)?;
            // SAFETY: a plain allocation; freed in Drop.
            unsafe { result::malloc_sync(bytes) }.doing("allocating GPU memory")
        })?;
        Ok(DeviceBuffer {
            ptr,
            len,
            gpu: self.work.clone(),
            made: pending::now(),
            _element: PhantomData,
        })
    }

    /// A page-locked host buffer of `len` elements, every element `fill`.
    pub fn pinned<T: Copy + Send + Sync>(
        &self,
        len: usize,
        fill: T,
    ) -> Result<PinnedBuffer<T>, RuntimeError> {
        self.work.within(|| PinnedBuffer::new(len, fill, 0))
    }

    /// A page-locked host buffer the GPU can read and write directly (zero-copy).
    pub fn mapped<T: Copy + Send + Sync>(
        &self,
        len: usize,
        fill: T,
    ) -> Result<MappedBuffer<T>, RuntimeError> {
        self.work.within(|| {
            let host = PinnedBuffer::new(len, fill, sys::CU_MEMHOSTALLOC_DEVICEMAP)?;
            let mut device: sys::CUdeviceptr = 0;
            // SAFETY: `host` is a live allocation made with DEVICEMAP; flags must be 0.
            unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host.ptr as *mut c_void, 0) }
                .result()
                .doing("mapping pinned memory into the GPU's address space")?;
            Ok(MappedBuffer {
                host,
                device,
                gpu: self.work.clone(),
            })
        })
    }

    /// `count` new non-blocking streams.
    pub fn streams(&self, count: usize) -> Result<Vec<Stream<'_>>, RuntimeError> {
        (0..count)
            .map(|_| self.stream(result::stream::StreamKind::NonBlocking))
            .collect()
    }

    /// `count` new blocking streams: the legacy NULL stream waits for them and holds
    /// them back (concurrency-breaks shows what that costs).
    pub fn blocking_streams(&self, count: usize) -> Result<Vec<Stream<'_>>, RuntimeError> {
        (0..count)
            .map(|_| self.stream(result::stream::StreamKind::Default))
            .collect()
    }

    fn stream(&self, kind: result::stream::StreamKind) -> Result<Stream<'_>, RuntimeError> {
        let raw = self
            .work
            .within(|| result::stream::create(kind).doing("creating a stream"))?;
        Ok(Stream {
            raw,
            owned: true,
            work: StreamWork::new(self.work.clone(), Some(raw)),
            _gpu: PhantomData,
        })
    }

    /// The legacy NULL stream (`CU_STREAM_LEGACY`): work on it waits for every blocking
    /// stream's earlier work, and their later work waits for it.
    pub fn legacy_null_stream(&self) -> Stream<'_> {
        self.default_stream(0x1 as sys::CUstream)
    }

    /// The calling thread's per-thread default stream (`CU_STREAM_PER_THREAD`): an
    /// ordinary stream that only the legacy NULL stream joins.
    pub fn per_thread_stream(&self) -> Stream<'_> {
        self.default_stream(0x2 as sys::CUstream)
    }

    /// One of the driver's default streams, which waiting for the whole GPU settles.
    fn default_stream(&self, raw: sys::CUstream) -> Stream<'_> {
        Stream {
            raw,
            owned: false,
            work: StreamWork::new(self.work.clone(), None),
            _gpu: PhantomData,
        }
    }

    /// Set every 32-bit word of `buf` to `value` with `cuMemsetD32`, a call that takes no
    /// stream: it runs on the legacy NULL stream.
    pub fn memset_without_stream(
        &self,
        buf: &mut DeviceBuffer<u32>,
        value: u32,
    ) -> Result<(), RuntimeError> {
        self.work.issue();
        // SAFETY: the whole range lies in a live allocation of `len` words.
        unsafe { sys::cuMemsetD32_v2(buf.ptr, value, buf.len) }
            .result()
            .doing("setting GPU memory without a stream")
    }

    /// A new timing event.
    pub fn event(&self) -> Result<Event, RuntimeError> {
        self.work.within(Event::new)
    }

    /// Wait until all work on the GPU has finished.
    pub fn synchronize(&self) -> Result<(), RuntimeError> {
        self.work.synchronize()
    }
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

    /// A 1-D launch with one thread per element of `len`, `threads` per block.
    pub fn cover(len: usize, threads: u32) -> Shape {
        Shape::linear(len.div_ceil(threads as usize).max(1) as u32, threads)
    }
}

/// A stream of one [`Gpu`], which it cannot outlive: one of ours (non-blocking unless
/// made with [`Gpu::blocking_streams`]), or one of the driver's default streams.
pub struct Stream<'gpu> {
    raw: sys::CUstream,
    /// Ours to destroy (the default streams are the driver's).
    owned: bool,
    /// Its finished work, which the buffers it copies wait for.
    work: Arc<StreamWork>,
    _gpu: PhantomData<&'gpu Gpu>,
}

impl Stream<'_> {
    /// Copy host elements `src_range` of pageable (not pinned) `src` into `dst` starting
    /// at element `dst_start`: the driver stages the copy through a pinned buffer of its
    /// own before this returns.
    pub fn htod_pageable<T: Copy>(
        &self,
        dst: &mut DeviceBuffer<T>,
        dst_start: usize,
        src: &[T],
        src_range: Range<usize>,
    ) -> Result<(), RuntimeError> {
        let count = copy_len(dst_start, dst.len, &src_range, src.len());
        self.work.issue();
        let host = &src[src_range];
        // SAFETY: both ranges are in bounds; the driver has copied pageable memory into
        // its staging buffer when the call returns.
        unsafe {
            sys::cuMemcpyHtoDAsync_v2(
                dst.addr(dst_start),
                host.as_ptr() as *const c_void,
                count * size_of::<T>(),
                self.raw,
            )
        }
        .result()
        .doing("copying pageable host memory to the device")
    }

    /// The driver's handle (for CUPTI's stream ids).
    pub(crate) fn raw(&self) -> sys::CUstream {
        self.raw
    }

    /// Copy host elements `src_range` of `src` into `dst` starting at element `dst_start`.
    /// The host may not write or free `src` until the copy is waited for.
    pub fn htod<T: Copy>(
        &self,
        dst: &mut DeviceBuffer<T>,
        dst_start: usize,
        src: &PinnedBuffer<T>,
        src_range: Range<usize>,
    ) -> Result<(), RuntimeError> {
        let count = copy_len(dst_start, dst.len, &src_range, src.len);
        src.pending.copy(&self.work, false);
        // SAFETY: both ranges are in bounds; the host buffer is pinned, and its pending
        // copy keeps the host from writing or freeing it before the copy is waited for.
        let host = unsafe { std::slice::from_raw_parts(src.ptr.add(src_range.start), count) };
        unsafe { result::memcpy_htod_async(dst.addr(dst_start), host, self.raw) }
            .doing("copying host to device")
    }

    /// Copy `src_range` of device buffer `src` into host `dst` starting at element
    /// `dst_start`. The host may not read, write or free `dst` until the copy is waited for.
    pub fn dtoh<T: Copy>(
        &self,
        dst: &mut PinnedBuffer<T>,
        dst_start: usize,
        src: &DeviceBuffer<T>,
        src_range: Range<usize>,
    ) -> Result<(), RuntimeError> {
        let count = copy_len(dst_start, dst.len, &src_range, src.len);
        dst.pending.copy(&self.work, true);
        // SAFETY: as in `htod`: the pending copy keeps the host from touching `dst`.
        let host = unsafe { std::slice::from_raw_parts_mut(dst.ptr.add(dst_start), count) };
        unsafe { result::memcpy_dtoh_async(host, src.addr(src_range.start), self.raw) }
            .doing("copying device to host")
    }

    /// Copy `src_range` of device buffer `src` into `dst` starting at element `dst_start`.
    pub fn dtod<T: Copy>(
        &self,
        dst: &mut DeviceBuffer<T>,
        dst_start: usize,
        src: &DeviceBuffer<T>,
        src_range: Range<usize>,
    ) -> Result<(), RuntimeError> {
        let count = copy_len(dst_start, dst.len, &src_range, src.len);
        self.work.issue();
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

    /// Launch `function` with `shape` on this stream. `args` must match the kernel's
    /// declaration parameter by parameter, or this does not compile.
    pub fn launch<P, A: Args<P>>(
        &self,
        function: &Function<P>,
        shape: Shape,
        args: A,
    ) -> Result<(), RuntimeError> {
        let params = args.pack();
        debug_assert_eq!(params.len(), function.ptx_params, "{}", function.name);
        // SAFETY: `Args` packs exactly the parameters the declaration makes, which the
        // build checked against the entry.
        unsafe { self.launch_packed(function.raw, function.name, shape, params) }
    }

    /// Launch a kernel whose parameters are known only at run time, with `params`
    /// packed in its PTX order.
    pub fn launch_dynamic(
        &self,
        function: &kernels::DynamicFunction,
        shape: Shape,
        params: nvptx_kernel::launch::ParamBuffer,
    ) -> Result<(), RuntimeError> {
        assert_eq!(params.len(), function.ptx_params, "{}", function.name);
        // SAFETY: the entry was checked to take these parameters, in this order.
        unsafe { self.launch_packed(function.raw, &function.name, shape, params) }
    }

    /// # Safety
    /// `params` holds, in order, a value of each PTX parameter of `raw`'s entry.
    unsafe fn launch_packed(
        &self,
        raw: sys::CUfunction,
        name: &str,
        shape: Shape,
        mut params: nvptx_kernel::launch::ParamBuffer,
    ) -> Result<(), RuntimeError> {
        self.work.issue();
        let mut pointers = params.pointers();
        // SAFETY: each pointer points at a value of its parameter's size (a 4-byte one at
        // the start of an 8-byte slot); the driver copies them during the call.
        unsafe {
            result::launch_kernel(
                raw,
                (shape.grid.0, shape.grid.1, 1),
                (shape.block.0, shape.block.1, 1),
                0,
                self.raw,
                &mut pointers,
            )
        }
        .map_err(|source| RuntimeError::Kernel {
            kernel: name.to_owned(),
            source,
        })
    }

    /// Overwrite every byte of `buf` with 0xFF (NaN for floats, -1 for ints), so that an
    /// element a kernel fails to write cannot pass for a right answer.
    pub fn poison<T>(&self, buf: &mut DeviceBuffer<T>) -> Result<(), RuntimeError> {
        self.work.issue();
        // SAFETY: the range is the whole allocation.
        unsafe { result::memset_d8_async(buf.ptr, 0xFF, buf.len * size_of::<T>(), self.raw) }
            .doing("poisoning a buffer")
    }

    /// Record `event` after the work issued so far on this stream.
    pub fn record(&self, event: &Event) -> Result<(), RuntimeError> {
        *event.after.borrow_mut() = Some((self.work.clone(), self.work.mark()));
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
        self.work.synchronize()
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

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        if self.owned {
            // Its work finishes first, so that every buffer it copied is known free.
            let _ = self.work.retire();
            // SAFETY: the stream is ours and idle.
            let _ = unsafe { result::stream::destroy(self.raw) };
        }
    }
}

/// A timing event.
pub struct Event {
    raw: sys::CUevent,
    /// The stream it was last recorded on, and how far that stream's work had been issued.
    after: RefCell<Option<(Arc<StreamWork>, u64)>>,
}

impl Event {
    fn new() -> Result<Event, RuntimeError> {
        let raw = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
            .doing("creating an event")?;
        Ok(Event {
            raw,
            after: RefCell::new(None),
        })
    }

    /// Milliseconds from `self` to `end`; waits for `end`.
    pub fn elapsed_ms(&self, end: &Event) -> Result<f64, RuntimeError> {
        end.synchronize()?;
        // SAFETY: both handles are live.
        unsafe { result::event::elapsed(self.raw, end.raw) }
            .map(f64::from)
            .doing("reading event times")
    }

    /// Wait until the work before this event's record has finished.
    pub fn synchronize(&self) -> Result<(), RuntimeError> {
        // SAFETY: the handle is live.
        unsafe { result::event::synchronize(self.raw) }.doing("waiting for an event")?;
        if let Some((stream, upto)) = &*self.after.borrow() {
            stream.finished_up_to(*upto);
        }
        Ok(())
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: the event is ours.
        let _ = unsafe { result::event::destroy(self.raw) };
    }
}

/// A buffer of `T` in device memory. Copies and kernels write it only through `&mut`.
pub struct DeviceBuffer<T> {
    ptr: sys::CUdeviceptr,
    len: usize,
    /// The GPU it lives on.
    gpu: Arc<GpuWork>,
    /// The count of work issued when it was made: earlier work cannot touch it.
    made: u64,
    _element: PhantomData<T>,
}

impl<T> DeviceBuffer<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Elements `range` as a kernel argument it may read.
    pub fn slice(&self, range: Range<usize>) -> DeviceSlice<'_, T> {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "slice out of bounds"
        );
        // SAFETY: the range lies in this live allocation, borrowed for the view's life.
        unsafe { DeviceSlice::from_raw(self.addr(range.start), range.len()) }
    }

    /// Elements `range` as a kernel argument it may write.
    pub fn slice_mut(&mut self, range: Range<usize>) -> DeviceSliceMut<'_, T> {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "slice out of bounds"
        );
        // SAFETY: as above, borrowed exclusively.
        unsafe { DeviceSliceMut::from_raw(self.addr(range.start), range.len()) }
    }

    /// The whole buffer, to read.
    pub fn all(&self) -> DeviceSlice<'_, T> {
        self.slice(0..self.len)
    }

    /// The whole buffer, to write.
    pub fn all_mut(&mut self) -> DeviceSliceMut<'_, T> {
        let len = self.len;
        self.slice_mut(0..len)
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
        // Whatever issued since it was made may still use it finishes first.
        let _ = self.gpu.settle_since(self.made);
        // SAFETY: the allocation is ours, in this GPU's context, and idle.
        let _ = (self.gpu).within(|| unsafe { result::free_sync(self.ptr) }.doing("freeing"));
    }
}

/// A page-locked host buffer: copies to and from it run asynchronously at full speed.
/// The host reaches its contents only through calls that first wait for the copies
/// issued on it.
pub struct PinnedBuffer<T> {
    ptr: *mut T,
    len: usize,
    /// The copies issued on it not yet known finished.
    pending: Pending,
}

impl<T: Copy + Send + Sync> PinnedBuffer<T> {
    fn new(len: usize, fill: T, flags: u32) -> Result<PinnedBuffer<T>, RuntimeError> {
        let bytes = len.max(1) * size_of::<T>();
        // SAFETY: flags 0 asks for ordinary (cached, not write-combined) pinned memory;
        // DEVICEMAP also maps it into the GPU's address space.
        let ptr =
            unsafe { result::malloc_host(bytes, flags) }.map_err(|source| RuntimeError::Pinned {
                bytes: bytes as u64,
                source,
            })? as *mut T;
        let buffer = PinnedBuffer {
            ptr,
            len,
            pending: Pending::default(),
        };
        // SAFETY: a new allocation of `len` elements no copy has touched yet.
        let contents = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
        crate::parallel::for_each_chunk_mut(contents, |_, chunk| chunk.fill(fill));
        Ok(buffer)
    }
}

impl<T> PinnedBuffer<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The contents, once the copies that may still write them have finished (waiting
    /// for them where that is not known).
    pub fn as_slice(&self) -> Result<&[T], RuntimeError> {
        self.pending.settle(false)?;
        // SAFETY: the allocation holds `len` initialised elements that no copy writes now.
        Ok(unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
    }

    /// The contents to write, once every copy issued on them has finished.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T], RuntimeError> {
        self.pending.settle(true)?;
        // SAFETY: as above, no copy reads them either, and `&mut self` makes this the
        // only view.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }
}

impl<T> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        // Copies still reading or writing it finish first.
        let _ = self.pending.settle(true);
        // SAFETY: the allocation is ours and no copy uses it.
        let _ = unsafe { result::free_host(self.ptr as *mut c_void) };
    }
}

/// Pinned host memory mapped into the GPU's address space: kernels read and write it
/// directly over PCIe, with no copy. Once a kernel has been handed it, the host reaches
/// it again only after waiting for the whole GPU (the launch is not seen here).
pub struct MappedBuffer<T> {
    host: PinnedBuffer<T>,
    device: sys::CUdeviceptr,
    gpu: Arc<GpuWork>,
}

impl<T> MappedBuffer<T> {
    pub fn len(&self) -> usize {
        self.host.len
    }

    pub fn is_empty(&self) -> bool {
        self.host.len == 0
    }

    /// The host's view, once the kernels that may write it have finished.
    pub fn as_slice(&self) -> Result<&[T], RuntimeError> {
        self.host.as_slice()
    }

    /// The host's view to write, once the kernels handed it have finished.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T], RuntimeError> {
        self.host.as_mut_slice()
    }

    /// The GPU's address of the first element.
    pub(crate) fn device_addr(&self) -> sys::CUdeviceptr {
        self.device
    }

    /// The host's address of the first element, for a value the host and the GPU share
    /// by design (a gate's flag) and the host writes volatile.
    pub(crate) fn host_ptr(&self) -> *mut T {
        self.host.ptr
    }

    /// Its GPU's work, which a gate waits for before the flag goes.
    pub(crate) fn gpu(&self) -> &GpuWork {
        &self.gpu
    }

    /// Elements `range` as a kernel argument it may read.
    pub fn slice(&self, range: Range<usize>) -> DeviceSlice<'_, T> {
        assert!(range.end <= self.len(), "slice out of bounds");
        self.host.pending.kernel(&self.gpu, false);
        let addr = self.device + (range.start * size_of::<T>()) as u64;
        // SAFETY: the range lies in the mapped allocation, borrowed for the view's life.
        unsafe { DeviceSlice::from_raw(addr, range.len()) }
    }

    /// Elements `range` as a kernel argument it may write.
    pub fn slice_mut(&mut self, range: Range<usize>) -> DeviceSliceMut<'_, T> {
        assert!(range.end <= self.len(), "slice out of bounds");
        self.host.pending.kernel(&self.gpu, true);
        let addr = self.device + (range.start * size_of::<T>()) as u64;
        // SAFETY: as above, borrowed exclusively.
        unsafe { DeviceSliceMut::from_raw(addr, range.len()) }
    }
}

// SAFETY: the buffers are plain memory owned by one value; the raw pointer is only a
// handle, and every access goes through `&self`/`&mut self`.
unsafe impl<T: Send> Send for PinnedBuffer<T> {}
unsafe impl<T: Sync> Sync for PinnedBuffer<T> {}
