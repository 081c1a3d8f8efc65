//! Several GPUs at once: the machine's GPUs by name, peer access between two GPUs'
//! contexts (`cuDeviceCanAccessPeer`, `cuCtxEnablePeerAccess`), and copy-engine copies
//! from one GPU's memory to another's (`cuMemcpyPeerAsync`). Without peer access the
//! driver stages such a copy through host memory; with it, the copy goes straight over
//! the link between the GPUs, and kernels on one GPU can load and store the other's
//! memory.
use cudarc::driver::{result, sys};

use crate::buffer::Element;
use crate::stream::copy_len;
use crate::{
    Context as _, DeviceBuffer, Gpu, PinnedBuffer, RuntimeError, Stream, driver_present, pending,
    raw,
};

/// The name of every GPU of this machine, by ordinal; with no driver or no GPU, the
/// error opening a GPU gives.
pub fn gpu_names() -> Result<Vec<String>, RuntimeError> {
    if !driver_present() {
        return Err(RuntimeError::NoDriver);
    }
    result::init().doing("initialising the driver")?;
    let count = result::device::get_count().doing("counting GPUs")?;
    if count == 0 {
        return Err(RuntimeError::NoGpus);
    }
    (0..count)
        .map(|ordinal| {
            let device = result::device::get(ordinal).doing("opening a GPU")?;
            result::device::get_name(device).doing("reading a GPU's name")
        })
        .collect()
}

/// A page-locked host buffer of `len` elements, every element `fill`, that every GPU's
/// context treats as pinned (not only the one current when it was made).
pub fn portable_pinned<T: Element>(len: usize, fill: T) -> Result<PinnedBuffer<T>, RuntimeError> {
    PinnedBuffer::new(len, fill, sys::CU_MEMHOSTALLOC_PORTABLE)
}

impl Gpu {
    /// Whether this GPU's kernels and copies can reach `peer`'s memory directly.
    pub fn can_access_peer(&self, peer: &Gpu) -> Result<bool, RuntimeError> {
        raw::can_access_peer(self.device, peer.device)
            .doing("asking whether one GPU can reach another's memory")
    }

    /// Let this GPU's context reach `peer`'s memory directly; whether it already could.
    /// Binds this GPU.
    pub fn enable_peer_access(&self, peer: &Gpu) -> Result<bool, RuntimeError> {
        self.bind()?;
        // This GPU's kernels may now touch `peer`'s buffers.
        pending::share(&[&self.work, &peer.work]);
        // SAFETY: both contexts are live.
        unsafe { raw::enable_peer_access(peer.ctx) }.doing("enabling peer access")
    }

    /// Turn this GPU's direct access to `peer`'s memory off; whether it was on. Waits for
    /// both GPUs first: work issued on either may still be reaching the other's memory
    /// through this access. Binds this GPU.
    pub fn disable_peer_access(&self, peer: &Gpu) -> Result<bool, RuntimeError> {
        self.synchronize()?;
        peer.synchronize()?;
        self.bind()?;
        // SAFETY: both contexts are live, and no work on either runs.
        unsafe { raw::disable_peer_access(peer.ctx) }.doing("disabling peer access")
    }

    /// Turn this GPU's direct access to `peer`'s memory off, and check with the driver
    /// that it is off: a second `cuCtxDisablePeerAccess` must answer
    /// `CUDA_ERROR_PEER_ACCESS_NOT_ENABLED` ([`RuntimeError::PeerAccessStillOn`] where it
    /// does not). Whether it was on. Waits for both GPUs, and binds this one.
    pub fn disable_peer_access_checked(&self, peer: &Gpu) -> Result<bool, RuntimeError> {
        let was_on = self.disable_peer_access(peer)?;
        // SAFETY: both contexts are live, and no work on either runs.
        let still_on = unsafe { raw::disable_peer_access(peer.ctx) }
            .doing("checking that peer access is off")?;
        if still_on {
            return Err(RuntimeError::PeerAccessStillOn {
                from: self.info().ordinal,
                to: peer.info().ordinal,
            });
        }
        Ok(was_on)
    }

    /// Peer access from this GPU to `peer` on where `on`, off where not (as
    /// [`Gpu::enable_peer_access`] and [`Gpu::disable_peer_access`]).
    pub fn set_peer_access(&self, peer: &Gpu, on: bool) -> Result<(), RuntimeError> {
        if on {
            self.enable_peer_access(peer)?;
        } else {
            self.disable_peer_access(peer)?;
        }
        Ok(())
    }
}

impl Stream<'_> {
    /// Copy the first `len` elements of `src` (on `src_gpu`) into `dst` (on `dst_gpu`)
    /// with `cuMemcpyPeerAsync`, on this stream: over the link where peer access is on,
    /// staged by the driver through host memory where it is off.
    pub fn copy_peer<T: Element>(
        &self,
        (dst, dst_gpu): (&mut DeviceBuffer<T>, &Gpu),
        (src, src_gpu): (&DeviceBuffer<T>, &Gpu),
        len: usize,
    ) -> Result<(), RuntimeError> {
        let count = copy_len(0, dst.len, &(0..len), src.len);
        // Work on this stream now touches both GPUs' memory.
        pending::share(&[&dst_gpu.work, &src_gpu.work]);
        self.work.issue();
        // SAFETY: both ranges lie in live allocations of their contexts, borrowed.
        unsafe {
            raw::memcpy_peer_async(
                (dst.addr(0), dst_gpu.ctx),
                (src.addr(0), src_gpu.ctx),
                count * size_of::<T>(),
                self.raw,
            )
        }
        .doing("copying from one GPU to another")
    }
}
