//! The driver calls cudarc's `driver::result` does not wrap, each as thin as
//! `driver::result` is: one call, its out-parameters returned, the driver's status as a
//! `Result`. With `driver::result` this is the one layer under the safe types: nothing
//! else calls the driver's functions (`cudarc::driver::sys`) directly. A call whose
//! arguments the driver trusts is an `unsafe fn` saying what it needs.
use std::ffi::c_void;
use std::mem::MaybeUninit;

use cudarc::driver::{DriverError, sys};

/// `cuDriverGetVersion`: the CUDA version the driver supports, e.g. 13000.
pub fn driver_version() -> Result<i32, DriverError> {
    let mut version = 0i32;
    // SAFETY: writes one int.
    unsafe { sys::cuDriverGetVersion(&mut version) }.result()?;
    Ok(version)
}

/// `cuCtxGetDevice`: the device of the current context.
pub fn current_device() -> Result<sys::CUdevice, DriverError> {
    let mut device = MaybeUninit::uninit();
    // SAFETY: writes one device handle, which is then initialised.
    unsafe {
        sys::cuCtxGetDevice(device.as_mut_ptr()).result()?;
        Ok(device.assume_init())
    }
}

/// `cuCtxPushCurrent`: make `ctx` current on this thread, above the one that was.
///
/// # Safety
/// `ctx` is a live context.
pub unsafe fn push_context(ctx: sys::CUcontext) -> Result<(), DriverError> {
    // SAFETY: the caller keeps `ctx` live.
    unsafe { sys::cuCtxPushCurrent_v2(ctx) }.result()
}

/// `cuCtxPopCurrent`: make the context below the current one current again.
pub fn pop_context() -> Result<(), DriverError> {
    let mut popped = std::ptr::null_mut();
    // SAFETY: writes one context handle; popping an empty stack is an error, not a fault.
    unsafe { sys::cuCtxPopCurrent_v2(&mut popped) }.result()
}

/// `cuMemHostGetDevicePointer`: where mapped host memory `host` lies in the current
/// context's address space.
///
/// # Safety
/// `host` is a live allocation made by `cuMemHostAlloc` with `CU_MEMHOSTALLOC_DEVICEMAP`.
pub unsafe fn mapped_device_pointer(host: *mut c_void) -> Result<sys::CUdeviceptr, DriverError> {
    let mut device: sys::CUdeviceptr = 0;
    // SAFETY: the caller's allocation; flags must be 0.
    unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0) }.result()?;
    Ok(device)
}

/// `cuMemsetD32`: set `count` 32-bit words from `dst` to `value`, on the legacy NULL
/// stream (the call takes no stream).
///
/// # Safety
/// The `count` words from `dst` lie in a live device allocation no other work writes.
pub unsafe fn memset_d32_legacy(
    dst: sys::CUdeviceptr,
    value: u32,
    count: usize,
) -> Result<(), DriverError> {
    // SAFETY: the caller's range.
    unsafe { sys::cuMemsetD32_v2(dst, value, count) }.result()
}

/// `cuMemcpyHtoDAsync` from pageable host memory: the driver has staged the bytes by the
/// time the call returns.
///
/// # Safety
/// `bytes` bytes from `src` are readable host memory, the same from `dst` a live device
/// allocation, and `stream` is live.
pub unsafe fn memcpy_htod_pageable_async(
    dst: sys::CUdeviceptr,
    src: *const c_void,
    bytes: usize,
    stream: sys::CUstream,
) -> Result<(), DriverError> {
    // SAFETY: the caller's ranges and stream.
    unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src, bytes, stream) }.result()
}

/// `cuStreamWaitValue32` with `CU_STREAM_WAIT_VALUE_GEQ`: later work on `stream` waits
/// until the 32-bit word at `addr` is at least `value`.
///
/// # Safety
/// `stream` is live, and `addr` stays a live word the GPU can read until the wait ends.
pub unsafe fn wait_value_at_least(
    stream: sys::CUstream,
    addr: sys::CUdeviceptr,
    value: u32,
) -> Result<(), DriverError> {
    let flags = sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ as u32;
    // SAFETY: the caller's stream and word.
    unsafe { sys::cuStreamWaitValue32_v2(stream, addr, value, flags) }.result()
}

/// `cuDeviceCanAccessPeer`: whether `device` can reach `peer`'s memory directly.
pub fn can_access_peer(device: sys::CUdevice, peer: sys::CUdevice) -> Result<bool, DriverError> {
    let mut can = 0i32;
    // SAFETY: writes one int; invalid handles are an error, not a fault.
    unsafe { sys::cuDeviceCanAccessPeer(&mut can, device, peer) }.result()?;
    Ok(can != 0)
}

/// `cuCtxEnablePeerAccess`: let the current context reach `peer`'s memory; whether it
/// already could (the driver answers `CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED`).
///
/// # Safety
/// `peer` is a live context.
pub unsafe fn enable_peer_access(peer: sys::CUcontext) -> Result<bool, DriverError> {
    // SAFETY: the caller's context; flags must be 0.
    match unsafe { sys::cuCtxEnablePeerAccess(peer, 0) } {
        sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => Ok(true),
        code => code.result().map(|()| false),
    }
}

/// `cuCtxDisablePeerAccess`: the current context no longer reaches `peer`'s memory;
/// whether it could until now (`false`: the driver answers
/// `CUDA_ERROR_PEER_ACCESS_NOT_ENABLED`, access was already off).
///
/// # Safety
/// `peer` is a live context.
pub unsafe fn disable_peer_access(peer: sys::CUcontext) -> Result<bool, DriverError> {
    // SAFETY: the caller's context.
    match unsafe { sys::cuCtxDisablePeerAccess(peer) } {
        sys::CUresult::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED => Ok(false),
        code => code.result().map(|()| true),
    }
}

/// `cuMemcpyPeerAsync`: copy `bytes` bytes from `src` (in `src_ctx`) to `dst` (in
/// `dst_ctx`) on `stream`.
///
/// # Safety
/// Both ranges lie in live allocations of their contexts, and `stream` is live.
pub unsafe fn memcpy_peer_async(
    (dst, dst_ctx): (sys::CUdeviceptr, sys::CUcontext),
    (src, src_ctx): (sys::CUdeviceptr, sys::CUcontext),
    bytes: usize,
    stream: sys::CUstream,
) -> Result<(), DriverError> {
    // SAFETY: the caller's ranges, contexts and stream.
    unsafe { sys::cuMemcpyPeerAsync(dst, dst_ctx, src, src_ctx, bytes, stream) }.result()
}

/// `cuMemsetD32Async`: set `count` 32-bit words from `dst` to `value`, on `stream`.
///
/// # Safety
/// The `count` words from `dst` lie in a live device allocation no other work uses until
/// the memset has run, and `stream` is live.
pub unsafe fn memset_d32_async(
    dst: sys::CUdeviceptr,
    value: u32,
    count: usize,
    stream: sys::CUstream,
) -> Result<(), DriverError> {
    // SAFETY: the caller's range and stream.
    unsafe { sys::cuMemsetD32Async(dst, value, count, stream) }.result()
}

/// `cuMemPoolCreate` of device memory on `device`, then its release threshold: 0 hands
/// freed memory back to the driver at the next synchronization, `u64::MAX` keeps it for
/// the pool's next allocations.
pub fn mem_pool_create(
    device: sys::CUdevice,
    release_threshold: u64,
) -> Result<sys::CUmemoryPool, DriverError> {
    // SAFETY: every field of the properties is a plain value or a null pointer, for which
    // all-zero bytes are valid (the enums' zero is their INVALID or NONE).
    let mut props: sys::CUmemPoolProps = unsafe { std::mem::zeroed() };
    props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;
    props.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = device;
    // SAFETY: `props` is a valid description of a device pool.
    let pool = unsafe { cudarc::driver::result::mem_pool::create(&props) }?;
    let mut threshold = release_threshold;
    // SAFETY: the new pool; the release threshold is a u64.
    let set = unsafe {
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            &mut threshold as *mut u64 as *mut c_void,
        )
    }
    .result();
    if let Err(err) = set {
        // SAFETY: the new pool, which nothing has allocated from.
        let _ = unsafe { cudarc::driver::result::mem_pool::destroy(pool) };
        return Err(err);
    }
    Ok(pool)
}

/// `cuMemAllocFromPoolAsync` then `cuMemFreeAsync`: `bytes` bytes from `pool`, allocated
/// and freed again in `stream`'s order (nothing uses them in between).
///
/// # Safety
/// `pool` and `stream` are live, in the current context.
pub unsafe fn alloc_and_free_async(
    pool: sys::CUmemoryPool,
    bytes: usize,
    stream: sys::CUstream,
) -> Result<(), DriverError> {
    let mut ptr: sys::CUdeviceptr = 0;
    // SAFETY: the caller's pool and stream; the allocation is freed on the same stream,
    // after nothing.
    unsafe {
        sys::cuMemAllocFromPoolAsync(&mut ptr, bytes, pool, stream).result()?;
        sys::cuMemFreeAsync(ptr, stream).result()
    }
}

/// `cuMemHostRegister`: page-lock `bytes` bytes of host memory from `host` and let the
/// GPU copy them asynchronously, as memory `cuMemHostAlloc` made.
///
/// # Safety
/// The bytes are a live host allocation, which stays allocated until
/// [`host_unregister`].
pub unsafe fn host_register(host: *mut c_void, bytes: usize) -> Result<(), DriverError> {
    // SAFETY: the caller's range; flags 0 asks for memory as cuMemHostAlloc's default.
    unsafe { sys::cuMemHostRegister_v2(host, bytes, 0) }.result()
}

/// `cuMemHostUnregister`: undo [`host_register`].
///
/// # Safety
/// `host` was registered, and no copy uses it any more.
pub unsafe fn host_unregister(host: *mut c_void) -> Result<(), DriverError> {
    // SAFETY: the caller's registered range.
    unsafe { sys::cuMemHostUnregister(host) }.result()
}

/// `cuLaunchKernelEx` with programmatic stream serialization: the kernel may start before
/// the kernel ahead of it on `stream` has finished, its blocks running up to their
/// `griddepcontrol.wait`.
///
/// # Safety
/// `params` points at a value of each of `f`'s parameters, in order; the kernel reaches
/// only memory they give it; and it waits (`griddepcontrol.wait`) before touching
/// anything the kernel ahead of it on `stream` touches.
pub unsafe fn launch_programmatic(
    f: sys::CUfunction,
    grid: (u32, u32),
    block: (u32, u32),
    stream: sys::CUstream,
    params: &mut [*mut c_void],
) -> Result<(), DriverError> {
    // SAFETY: all-zero bytes are a valid attribute (its union's padding included).
    let mut attribute: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attribute.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: grid.0,
        gridDimY: grid.1,
        gridDimZ: 1,
        blockDimX: block.0,
        blockDimY: block.1,
        blockDimZ: 1,
        sharedMemBytes: 0,
        hStream: stream,
        attrs: &mut attribute,
        numAttrs: 1,
    };
    // SAFETY: the caller's parameters, kernel and stream; the driver copies the
    // parameters and the configuration during the call.
    unsafe { sys::cuLaunchKernelEx(&config, f, params.as_mut_ptr(), std::ptr::null_mut()) }.result()
}
