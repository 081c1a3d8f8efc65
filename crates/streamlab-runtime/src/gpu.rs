//! One GPU ([`Gpu`]): its context, its Rust kernels, and what it makes: device, pinned
//! and mapped buffers (zeroed or filled: never uninitialised), streams and events.
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{result, sys};
use streamlab_results::saved::DeviceInfo;

use crate::buffer::{DeviceBuffer, Element, MappedBuffer, PinnedBuffer};
use crate::kernels::{self, CheckedPtx, Kernels};
use crate::pending::{self, GpuWork, StreamWork};
use crate::stream::{Event, MemPool, Stream};
use crate::{Context, RuntimeError, device, driver_present, raw};

/// One GPU with a current context and the Rust kernels loaded.
pub struct Gpu {
    info: DeviceInfo,
    kernels: Kernels,
    pub(crate) device: sys::CUdevice,
    /// Its primary context, where its buffers, streams, events and kernels live.
    pub(crate) ctx: sys::CUcontext,
    /// The context's issued and finished work, which its buffers wait for.
    pub(crate) work: Arc<GpuWork>,
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
        let ptx = CheckedPtx::declared(kernels::RUST_PTX)?;
        let kernels = Kernels::load(&ptx, streamlab_results::saved::KernelSet::Rust)?;
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

    /// A device buffer of `len` elements, every byte zero (a `Pod` element: any bytes
    /// read back are a value of it).
    pub fn alloc<T: Element>(&self, len: usize) -> Result<DeviceBuffer<T>, RuntimeError> {
        let bytes = len.max(1) * size_of::<T>();
        let ptr = self.work.within(|| {
            self.ensure_fits(bytes as u64)?;
            // SAFETY: a plain allocation; freed in Drop.
            let ptr = unsafe { result::malloc_sync(bytes) }.doing("allocating GPU memory")?;
            // SAFETY: the whole of the new allocation, which no work uses yet.
            unsafe { result::memset_d8_sync(ptr, 0, bytes) }.doing("zeroing GPU memory")?;
            Ok(ptr)
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
    pub fn pinned<T: Element>(&self, len: usize, fill: T) -> Result<PinnedBuffer<T>, RuntimeError> {
        self.work.within(|| PinnedBuffer::new(len, fill, 0))
    }

    /// A page-locked host buffer the GPU can read and write directly (zero-copy).
    pub fn mapped<T: Element>(&self, len: usize, fill: T) -> Result<MappedBuffer<T>, RuntimeError> {
        self.work.within(|| {
            let host = PinnedBuffer::new(len, fill, sys::CU_MEMHOSTALLOC_DEVICEMAP)?;
            // SAFETY: `host` is a live allocation made with DEVICEMAP.
            let device = unsafe { raw::mapped_device_pointer(host.ptr as *mut c_void) }
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

    /// The stream priorities this GPU's context offers, `(least, greatest)`: the
    /// driver numbers them downwards, so the greatest priority is the lowest number
    /// (`cuCtxGetStreamPriorityRange`).
    pub fn stream_priorities(&self) -> Result<(i32, i32), RuntimeError> {
        self.work.within(|| {
            result::stream::get_priority_range().doing("reading the stream priority range")
        })
    }

    /// `count` new non-blocking streams of `priority` (within
    /// [`Gpu::stream_priorities`]; the driver clamps one outside it): a block of a
    /// higher-priority stream's kernel waiting for room starts before any waiting block
    /// of a lower one.
    pub fn streams_at(&self, count: usize, priority: i32) -> Result<Vec<Stream<'_>>, RuntimeError> {
        (0..count)
            .map(|_| self.stream_with(result::stream::StreamKind::NonBlocking, priority))
            .collect()
    }

    fn stream(&self, kind: result::stream::StreamKind) -> Result<Stream<'_>, RuntimeError> {
        self.stream_with(kind, 0)
    }

    /// A new stream of `kind` at `priority` (0, the default, for the others).
    fn stream_with(
        &self,
        kind: result::stream::StreamKind,
        priority: i32,
    ) -> Result<Stream<'_>, RuntimeError> {
        let raw = self.work.within(|| {
            result::stream::create_with_priority(kind, priority).doing("creating a stream")
        })?;
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
        // SAFETY: the whole range lies in a live allocation of `len` words, borrowed `&mut`.
        unsafe { raw::memset_d32_legacy(buf.ptr, value, buf.len) }
            .doing("setting GPU memory without a stream")
    }

    /// A stream-ordered memory pool on this GPU ([`Stream::alloc_and_free`]): `keep`
    /// false hands freed memory back to the driver at the next synchronization (the
    /// release threshold of the device's default pool, 0); true keeps it for the pool's
    /// next allocations.
    pub fn mem_pool(&self, keep: bool) -> Result<MemPool<'_>, RuntimeError> {
        let threshold = if keep { u64::MAX } else { 0 };
        let raw = self.work.within(|| {
            raw::mem_pool_create(self.device, threshold).doing("creating a memory pool")
        })?;
        Ok(MemPool {
            raw,
            work: self.work.clone(),
            _gpu: PhantomData,
        })
    }

    /// `host` page-locked where it lies (`cuMemHostRegister`): copies from and to it
    /// run asynchronously, as from a buffer [`Gpu::pinned`] allocates, with no copy of the
    /// data into one. Unregistered when the buffer is dropped.
    pub fn register<T: Element>(&self, host: Vec<T>) -> Result<PinnedBuffer<T>, RuntimeError> {
        PinnedBuffer::register(host, &self.work)
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
