//! Work on a GPU: a launch's shape ([`Shape`]), its streams ([`Stream`]: copies,
//! launches, records and waits, all asynchronous) and its timing events ([`Event`]).
use std::cell::RefCell;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::{DriverError, result, sys};

use crate::buffer::{DeviceBuffer, Element, PinnedBuffer};
use crate::contract::Contract;
use crate::gpu::Gpu;
use crate::kernels::{DynamicFunction, Function};
use crate::pending::{GpuWork, StreamWork};
use crate::{Context, RuntimeError, raw};

/// What a GPU makes for its work: streams, memory pools and events.
impl Gpu {
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

    /// A new timing event.
    pub fn event(&self) -> Result<Event, RuntimeError> {
        self.work.within(Event::new)
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
    pub(crate) raw: sys::CUstream,
    /// Ours to destroy (the default streams are the driver's).
    pub(crate) owned: bool,
    /// Its finished work, which the buffers it copies wait for.
    pub(crate) work: Arc<StreamWork>,
    pub(crate) _gpu: PhantomData<&'gpu Gpu>,
}

impl Stream<'_> {
    /// Copy host elements `src_range` of pageable (not pinned) `src` into `dst` starting
    /// at element `dst_start`: the driver stages the copy through a pinned buffer of its
    /// own before this returns.
    pub fn htod_pageable<T: Element>(
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
            raw::memcpy_htod_pageable_async(
                dst.addr(dst_start),
                host.as_ptr() as *const c_void,
                count * size_of::<T>(),
                self.raw,
            )
        }
        .doing("copying pageable host memory to the device")
    }

    /// The driver's handle (for CUPTI's stream ids).
    pub(crate) fn raw(&self) -> sys::CUstream {
        self.raw
    }

    /// Copy host elements `src_range` of `src` into `dst` starting at element `dst_start`.
    /// The host may not write or free `src` until the copy is waited for.
    pub fn htod<T: Element>(
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
    pub fn dtoh<T: Element>(
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
    pub fn dtod<T: Element>(
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
    /// declaration parameter by parameter, and have a [`Contract`] for it, or this does
    /// not compile; arguments that break the contract (a slice shorter than the kernel
    /// reaches) are refused with [`RuntimeError::Contract`], and nothing is launched.
    pub fn launch<P, A: Contract<P>>(
        &self,
        function: &Function<P>,
        shape: Shape,
        args: A,
    ) -> Result<(), RuntimeError> {
        let params = checked_params(function, args)?;
        // SAFETY: `Args` packs exactly the parameters the declaration makes, which the
        // PTX was checked against, and the kernel's contract holds for them.
        unsafe { self.launch_packed(function.raw, function.name, shape, params) }
    }

    /// Launch `function` as [`Stream::launch`] does, with programmatic stream
    /// serialization (`cuLaunchKernelEx`, Hopper and later): it may start before the
    /// kernel ahead of it on this stream has finished, its blocks running up to their
    /// `griddepcontrol.wait` (`nvptx_kernel::dependent::wait`).
    ///
    /// # Safety
    /// The kernel waits (`griddepcontrol.wait`) before it touches any memory the kernel
    /// ahead of it on this stream touches: until then the two run at once, and the
    /// borrows that keep stream-ordered launches apart do not keep these apart.
    ///
    /// ```compile_fail
    /// // Only the kernel can promise to wait: the call is unsafe.
    /// use streamlab_runtime::{DeviceBuffer, Function, Shape, Stream};
    /// use nvptx_kernel::SliceMut;
    /// fn launch(s: &Stream, f: &Function<(SliceMut<u64>, u64)>, out: &mut DeviceBuffer<u64>) {
    ///     let _ = s.launch_programmatic(f, Shape::linear(1, 1), (out.all_mut(), 3u64));
    /// }
    /// ```
    pub unsafe fn launch_programmatic<P, A: Contract<P>>(
        &self,
        function: &Function<P>,
        shape: Shape,
        args: A,
    ) -> Result<(), RuntimeError> {
        let mut params = checked_params(function, args)?;
        self.work.issue();
        let mut pointers = params.pointers();
        // SAFETY: as `launch`'s; the caller's promise for the overlap.
        unsafe {
            raw::launch_programmatic(
                function.raw,
                shape.grid,
                shape.block,
                self.raw,
                &mut pointers,
            )
        }
        .map_err(|source| RuntimeError::Kernel {
            kernel: function.name.to_owned(),
            source,
        })
    }

    /// Launch a kernel whose parameters are known only at run time, with `params`
    /// packed in its PTX order.
    ///
    /// # Safety
    /// `params` holds one value of each of the entry's parameters, in order, and the
    /// kernel reads and writes only memory those values give it (live allocations, within
    /// the lengths passed): nothing here can check a kernel it does not know.
    ///
    /// ```compile_fail
    /// // Any 8 bytes may pass for a pointer here: the call is unsafe.
    /// use streamlab_runtime::{Shape, Stream, kernels::DynamicFunction};
    /// fn launch(s: &Stream, f: &DynamicFunction) {
    ///     let mut params = nvptx_kernel::launch::ParamBuffer::new();
    ///     params.push_bytes(&0xdead_beef_u64.to_ne_bytes());
    ///     let _ = s.launch_dynamic(f, Shape::linear(1, 1), params);
    /// }
    /// ```
    pub unsafe fn launch_dynamic(
        &self,
        function: &DynamicFunction,
        shape: Shape,
        params: nvptx_kernel::launch::ParamBuffer,
    ) -> Result<(), RuntimeError> {
        assert_eq!(params.len(), function.ptx_params, "{}", function.name);
        // SAFETY: the caller's promise.
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
    pub fn poison<T: Element>(&self, buf: &mut DeviceBuffer<T>) -> Result<(), RuntimeError> {
        self.work.issue();
        // SAFETY: the range is the whole allocation.
        unsafe { result::memset_d8_async(buf.ptr, 0xFF, buf.len * size_of::<T>(), self.raw) }
            .doing("poisoning a buffer")
    }

    /// Set every 32-bit word of `buf` to `value`, in this stream's order
    /// (`cuMemsetD32Async`).
    pub fn memset_d32(&self, buf: &mut DeviceBuffer<u32>, value: u32) -> Result<(), RuntimeError> {
        self.work.issue();
        // SAFETY: the range is the whole allocation, borrowed `&mut`.
        unsafe { raw::memset_d32_async(buf.ptr, value, buf.len, self.raw) }
            .doing("setting GPU memory on a stream")
    }

    /// Allocate `bytes` bytes from `pool` and free them again, both in this stream's
    /// order (`cuMemAllocFromPoolAsync`, `cuMemFreeAsync`): the scratch memory of one
    /// step of a pipeline, which never waits for the GPU as `cuMemAlloc` and `cuMemFree`
    /// do.
    pub fn alloc_and_free(&self, pool: &MemPool, bytes: usize) -> Result<(), RuntimeError> {
        self.work.issue();
        // SAFETY: the pool and the stream are live and of the current context (a pool
        // cannot outlive its GPU), and the allocation is freed before anything uses it.
        unsafe { raw::alloc_and_free_async(pool.raw, bytes.max(1), self.raw) }
            .doing("allocating and freeing on a stream")
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

/// `args` packed for `function`, once they keep its kernel's contract (else nothing is
/// launched: [`RuntimeError::Contract`]); what every typed launch sends.
fn checked_params<P, A: Contract<P>>(
    function: &Function<P>,
    args: A,
) -> Result<nvptx_kernel::launch::ParamBuffer, RuntimeError> {
    if let Some(why) = args.broken(function.int_indices) {
        return Err(RuntimeError::Contract {
            kernel: function.name.to_owned(),
            why,
        });
    }
    let params = args.pack();
    debug_assert_eq!(params.len(), function.ptx_params, "{}", function.name);
    Ok(params)
}

/// The element count of a copy of `src_range` (of a buffer of `src_len`) to `dst_start`
/// (of a buffer of `dst_len`); a copy outside either buffer is a bug in the caller.
pub(crate) fn copy_len(
    dst_start: usize,
    dst_len: usize,
    src_range: &Range<usize>,
    src_len: usize,
) -> usize {
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

/// A stream-ordered memory pool of one [`Gpu`]'s memory ([`Stream::alloc_and_free`]),
/// which it cannot outlive.
pub struct MemPool<'gpu> {
    pub(crate) raw: sys::CUmemoryPool,
    pub(crate) work: Arc<GpuWork>,
    pub(crate) _gpu: PhantomData<&'gpu Gpu>,
}

impl Drop for MemPool<'_> {
    fn drop(&mut self) {
        // Allocations from it are freed in their streams' order: those finish first.
        let _ = self.work.synchronize();
        let raw = self.raw;
        // SAFETY: the pool is ours and every allocation from it is freed.
        let _ = (self.work)
            .within(|| unsafe { result::mem_pool::destroy(raw) }.doing("destroying a memory pool"));
    }
}

/// A timing event.
pub struct Event {
    pub(crate) raw: sys::CUevent,
    /// The stream it was last recorded on, and how far that stream's work had been issued.
    after: RefCell<Option<(Arc<StreamWork>, u64)>>,
}

impl Event {
    pub(crate) fn new() -> Result<Event, RuntimeError> {
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

    /// Whether the work before this event's record has finished, without waiting
    /// (`cuEventQuery`).
    pub fn query(&self) -> Result<bool, RuntimeError> {
        // SAFETY: the handle is live.
        match unsafe { result::event::query(self.raw) } {
            Ok(()) => {
                if let Some((stream, upto)) = &*self.after.borrow() {
                    stream.finished_up_to(*upto);
                }
                Ok(true)
            }
            Err(DriverError(sys::CUresult::CUDA_ERROR_NOT_READY)) => Ok(false),
            Err(err) => Err(err).doing("querying an event"),
        }
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
