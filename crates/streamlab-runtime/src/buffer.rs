//! Memory the GPU reaches: device buffers ([`DeviceBuffer`]), page-locked host buffers
//! ([`PinnedBuffer`]) and mapped host buffers ([`MappedBuffer`]), of `Pod` elements only
//! (any bytes the GPU leaves are a value of them). The host reaches a host buffer only
//! through calls that first wait for the GPU's work on it.
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::{result, sys};
use nvptx_kernel::launch::{DeviceSlice, DeviceSliceMut};

use crate::pending::{GpuWork, Pending};
use crate::{Context, RuntimeError, raw};

/// What may cross to the device and back: any bytes are a value of it (bytemuck's
/// `Pod`: no padding, no invalid bit patterns), so whatever a copy or a kernel leaves in a
/// buffer reads back as one; and it may be filled from several threads.
///
/// ```compile_fail
/// // A `bool` holding 0xFF is no bool: it cannot cross ...
/// fn alloc(gpu: &streamlab_runtime::Gpu) {
///     let _ = gpu.alloc::<bool>(4);
/// }
/// ```
/// ```no_run
/// // ... a `u8` can.
/// fn alloc(gpu: &streamlab_runtime::Gpu) {
///     let _ = gpu.alloc::<u8>(4);
/// }
/// ```
pub trait Element: bytemuck::Pod + Send + Sync {}

impl<T: bytemuck::Pod + Send + Sync> Element for T {}

/// A buffer of `T` in device memory. Copies and kernels write it only through `&mut`.
pub struct DeviceBuffer<T> {
    pub(crate) ptr: sys::CUdeviceptr,
    pub(crate) len: usize,
    /// The GPU it lives on.
    pub(crate) gpu: Arc<GpuWork>,
    /// The count of work issued when it was made: earlier work cannot touch it.
    pub(crate) made: u64,
    pub(crate) _element: PhantomData<T>,
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

    /// Elements `range` as a kernel argument that reads their bits as `U`, an element
    /// of the same size (any bytes are a value of either).
    pub fn bits<U: Element>(&self, range: Range<usize>) -> DeviceSlice<'_, U> {
        assert_eq!(size_of::<T>(), size_of::<U>(), "bits of another size");
        let (start, len) = (range.start, range.len());
        let _in_bounds = self.slice(range);
        // SAFETY: the same bytes as that view, borrowed as it is; `U` is as large as `T`
        // and any bytes are a value of it.
        unsafe { DeviceSlice::from_raw(self.addr(start), len) }
    }

    /// Elements `range` as a kernel argument that writes their bits as `U`, an element
    /// of the same size.
    pub fn bits_mut<U: Element>(&mut self, range: Range<usize>) -> DeviceSliceMut<'_, U> {
        assert_eq!(size_of::<T>(), size_of::<U>(), "bits of another size");
        let (start, len) = (range.start, range.len());
        let _in_bounds = self.slice(range);
        // SAFETY: as in `bits`, borrowed exclusively.
        unsafe { DeviceSliceMut::from_raw(self.addr(start), len) }
    }

    pub(crate) fn addr(&self, index: usize) -> sys::CUdeviceptr {
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
    pub(crate) ptr: *mut T,
    pub(crate) len: usize,
    /// The copies issued on it not yet known finished.
    pub(crate) pending: Pending,
    /// The user's memory it pins, where it was registered with the driver rather than
    /// allocated by it ([`crate::Gpu::register`]): unregistered on drop, then freed as
    /// the `Vec` it was, in the context that registered it.
    registered: Option<(Vec<T>, Arc<GpuWork>)>,
}

impl<T: Element> PinnedBuffer<T> {
    pub(crate) fn new(len: usize, fill: T, flags: u32) -> Result<PinnedBuffer<T>, RuntimeError> {
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
            registered: None,
        };
        // SAFETY: a new allocation of `len` elements no copy has touched yet.
        let contents = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
        crate::parallel::for_each_chunk_mut(contents, |_, chunk| chunk.fill(fill));
        Ok(buffer)
    }
}

impl<T: Element> PinnedBuffer<T> {
    /// `host` page-locked where it lies (`cuMemHostRegister`), in the context `gpu`
    /// makes current.
    pub(crate) fn register(
        mut host: Vec<T>,
        gpu: &Arc<GpuWork>,
    ) -> Result<PinnedBuffer<T>, RuntimeError> {
        // Registering takes at least one byte: an empty Vec gets room for one element.
        host.reserve_exact(1);
        let (ptr, bytes) = (host.as_mut_ptr(), host.capacity() * size_of::<T>());
        // SAFETY: the Vec's whole allocation, which the buffer keeps (unmoved: the Vec is
        // never grown) until it is unregistered on drop.
        gpu.within(|| {
            unsafe { raw::host_register(ptr as *mut c_void, bytes) }
                .doing("registering host memory")
        })?;
        Ok(PinnedBuffer {
            ptr,
            len: host.len(),
            pending: Pending::default(),
            registered: Some((host, gpu.clone())),
        })
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
        match self.registered.take() {
            // SAFETY: the range this buffer registered, which no copy uses; the Vec is
            // freed after it is unregistered.
            Some((host, gpu)) => {
                let _ = gpu.within(|| {
                    unsafe { raw::host_unregister(self.ptr as *mut c_void) }
                        .doing("unregistering host memory")
                });
                drop(host);
            }
            // SAFETY: the allocation is ours and no copy uses it.
            None => {
                let _ = unsafe { result::free_host(self.ptr as *mut c_void) };
            }
        }
    }
}

/// Pinned host memory mapped into the GPU's address space: kernels read and write it
/// directly over PCIe, with no copy. Once a kernel has been handed it, the host reaches
/// it again only after waiting for the whole GPU (the launch is not seen here).
pub struct MappedBuffer<T> {
    pub(crate) host: PinnedBuffer<T>,
    pub(crate) device: sys::CUdeviceptr,
    pub(crate) gpu: Arc<GpuWork>,
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
