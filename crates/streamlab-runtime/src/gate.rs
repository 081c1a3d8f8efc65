//! A gate the host opens: streams told to wait at it queue their later work on the GPU
//! until the host says go. Work issued behind a closed gate starts as it would if the
//! host had issued it instantly, so timings and traces of a schedule do not include how
//! long the host took to issue it.
//!
//! The gate is a counter in page-locked host memory mapped into the address space of
//! every GPU it serves (`CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP`, its
//! address in each context from `cuMemHostGetDevicePointer`), so that streams of several
//! GPUs can wait at one gate: [`Gate::hold`] makes a stream wait until the counter
//! reaches the gate's current ticket (`cuStreamWaitValue32`), [`Gate::open`] writes the
//! ticket. Each [`Gate::close`] takes a new ticket, so the gate never needs resetting
//! while streams still wait on it.
//!
//! What the host issues behind a closed gate fills the driver's queue for that GPU, and
//! a full queue blocks the host before it can open the gate. [`Gate::sample`] holds
//! streams for one sample and counts what the sample queues on each GPU
//! ([`Held::queue`]), refusing past [`MAX_QUEUED_PER_GPU`]; the sample's gate opens when
//! it is dropped, on every error path, and any gate opens when it is dropped.
use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::sys;

use crate::pending::GpuWork;
use crate::{Context, Gpu, PinnedBuffer, RuntimeError, Stream, raw};

/// The most operations one sample may queue on one GPU behind a closed gate: 256 of
/// work (compare-kernels' most launches in a sample, peer-copy's most copies) and 8 for
/// the gate's waits and the timing events around the work.
pub const MAX_QUEUED_PER_GPU: usize = 264;

/// A host-opened gate for streams of one or more GPUs.
pub struct Gate {
    flag: PinnedBuffer<u32>,
    /// Each GPU it serves, with the flag's address in that GPU's context.
    served: Vec<(Arc<GpuWork>, sys::CUdeviceptr)>,
    ticket: u32,
}

impl Gate {
    /// A closed gate for streams of `gpu`. (32-bit stream memory waits work on every GPU
    /// since CUDA 12.)
    pub fn new(gpu: &Gpu) -> Result<Gate, RuntimeError> {
        Gate::across(&[gpu])
    }

    /// A closed gate for streams of any of `gpus`: its flag is mapped into every one's
    /// context.
    pub fn across(gpus: &[&Gpu]) -> Result<Gate, RuntimeError> {
        let Some(first) = gpus.first() else {
            return Err(RuntimeError::Gate("a gate serves at least one GPU".into()));
        };
        let flags = sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP;
        let flag = first.work.within(|| PinnedBuffer::new(1, 0u32, flags))?;
        let host = flag.ptr as *mut c_void;
        let served = (gpus.iter())
            .map(|gpu| {
                let addr = gpu.work.within(|| {
                    // SAFETY: a live allocation made with DEVICEMAP and PORTABLE: mapped in
                    // every context.
                    unsafe { raw::mapped_device_pointer(host) }
                        .doing("mapping a gate's flag into a GPU's address space")
                })?;
                Ok((gpu.work.clone(), addr))
            })
            .collect::<Result<Vec<_>, RuntimeError>>()?;
        Ok(Gate {
            flag,
            served,
            ticket: 1,
        })
    }

    /// Which of the gate's GPUs `stream` belongs to.
    fn served(&self, stream: &Stream) -> Result<usize, RuntimeError> {
        let gpu = stream.work.gpu();
        (self.served.iter())
            .position(|(served, _)| Arc::ptr_eq(served, gpu))
            .ok_or_else(|| RuntimeError::Gate("a stream of a GPU the gate does not serve".into()))
    }

    /// Close the gate again (for the next schedule).
    pub fn close(&mut self) {
        self.ticket += 1;
    }

    /// Make everything issued on `stream` from now on wait until the gate opens. The
    /// stream is of one of the gate's GPUs, else [`RuntimeError::Gate`].
    pub fn hold(&self, stream: &Stream) -> Result<(), RuntimeError> {
        let (gpu, addr) = &self.served[self.served(stream)?];
        gpu.within(|| {
            // SAFETY: the flag lives in memory mapped into the stream's context for as
            // long as the gate, which opens and waits for every GPU it serves before it
            // goes; the stream is live.
            unsafe { raw::wait_value_at_least(stream.raw, *addr, self.ticket) }
                .doing("holding a stream at a gate")
        })
    }

    /// Open the gate: every stream waiting at it goes on.
    pub fn open(&mut self) {
        let flag = self.flag.ptr;
        // SAFETY: the flag is one live u32 the GPUs only read (no kernel is handed it); a
        // volatile write is seen by them.
        unsafe { flag.write_volatile(self.ticket) };
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }

    /// Close the gate and hold each of `streams` at it for one sample: what is issued on
    /// them next waits until [`Held::open`], or until the sample is dropped.
    pub fn sample<'g>(&'g mut self, streams: &[&Stream]) -> Result<Held<'g>, RuntimeError> {
        self.close();
        let mut held = Held {
            queued: Queued::new(self.served.len()),
            gate: self,
        };
        for stream in streams {
            held.queue(stream, 1)?;
            held.gate.hold(stream)?;
        }
        Ok(held)
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        // Streams may still wait at a gate that was never opened: open it, and let the
        // work finish before the flag's memory goes.
        self.open();
        for (gpu, _) in &self.served {
            let _ = gpu.synchronize();
        }
    }
}

/// Streams held at a closed gate for one sample, and what the sample has queued behind
/// it; the gate opens when this goes, however the sample ends.
pub struct Held<'g> {
    gate: &'g mut Gate,
    queued: Queued,
}

impl Held<'_> {
    /// `ops` more operations (copies, launches, event records and waits) are about to be
    /// issued on `stream` behind the gate: refused where they would take its GPU past
    /// [`MAX_QUEUED_PER_GPU`] (issue nothing more then: the gate opens as this is
    /// dropped).
    pub fn queue(&mut self, stream: &Stream, ops: usize) -> Result<(), RuntimeError> {
        let gpu = self.gate.served(stream)?;
        self.queued.admit(gpu, ops).map_err(RuntimeError::Gate)
    }

    /// Open the gate: the sample's work runs.
    pub fn open(self) {}
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.gate.open();
    }
}

/// How many operations a sample has queued behind a closed gate on each GPU.
#[derive(Debug)]
struct Queued(Vec<usize>);

impl Queued {
    fn new(gpus: usize) -> Queued {
        Queued(vec![0; gpus])
    }

    /// Count `ops` more on GPU `gpu`, unless that takes it past [`MAX_QUEUED_PER_GPU`]:
    /// then why not, counting nothing.
    fn admit(&mut self, gpu: usize, ops: usize) -> Result<(), String> {
        let queued = self.0[gpu].saturating_add(ops);
        if queued > MAX_QUEUED_PER_GPU {
            return Err(format!(
                "{queued} operations would queue on one GPU behind a closed gate, more than {MAX_QUEUED_PER_GPU}: the host could block before it opens the gate"
            ));
        }
        self.0[gpu] = queued;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_queues_up_to_the_cap_on_each_gpu_and_no_further() {
        let mut queued = Queued::new(2);
        queued.admit(0, 1).unwrap();
        queued.admit(0, MAX_QUEUED_PER_GPU - 1).unwrap();
        let refused = queued.admit(0, 1).unwrap_err();
        assert!(refused.contains("more than 264"), "{refused}");
        assert_eq!(queued.0[0], MAX_QUEUED_PER_GPU, "a refusal counts nothing");
        queued.admit(1, MAX_QUEUED_PER_GPU).unwrap();
        assert!(
            queued.admit(1, usize::MAX).is_err(),
            "no overflow lets it through"
        );
    }

    #[test]
    fn the_cap_holds_a_sample_of_256_operations_with_its_waits_and_events() {
        // The stream leading a both-ways peer-copy sample: the gate's wait, its start and
        // stop, its wait for the other stream and its end, and 256 copies; the other
        // GPU's stream: the gate's wait, its wait for the start, its start and stop.
        let mut queued = Queued::new(2);
        queued.admit(0, 1 + 4 + 256).unwrap();
        queued.admit(1, 1 + 3 + 256).unwrap();
        assert!(queued.admit(0, MAX_QUEUED_PER_GPU - 256).is_err());
    }
}
