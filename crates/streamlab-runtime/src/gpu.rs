//! One GPU ([`Gpu`]): its context, its Rust kernels, and the buffers it makes: device,
//! pinned and mapped (zeroed or filled: never uninitialised). Its streams, events and
//! memory pools are made in [`crate::stream`].
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{result, sys};
use streamlab_record::DeviceInfo;

use crate::buffer::{DeviceBuffer, Element, MappedBuffer, PinnedBuffer};
use crate::kernels::{self, CheckedPtx, Kernels};
use crate::pending::{self, GpuWork};
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
        let kernels = Kernels::load(&ptx, streamlab_record::KernelSet::Rust)?;
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

    /// `host` page-locked where it lies (`cuMemHostRegister`): copies from and to it
    /// run asynchronously, as from a buffer [`Gpu::pinned`] allocates, with no copy of the
    /// data into one. Unregistered when the buffer is dropped.
    pub fn register<T: Element>(&self, host: Vec<T>) -> Result<PinnedBuffer<T>, RuntimeError> {
        PinnedBuffer::register(host, &self.work)
    }

    /// Wait until all work on the GPU has finished.
    pub fn synchronize(&self) -> Result<(), RuntimeError> {
        self.work.synchronize()
    }
}
