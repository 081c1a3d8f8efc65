//! What the GPU may still be doing with a buffer, so that the host never reads, writes
//! or frees memory while a copy or kernel on it may be in flight, and no call in a
//! timed region waits for anything.
//!
//! Every piece of GPU work issued takes a ticket from one process-wide count. A copy to
//! or from a pinned buffer leaves its ticket on the buffer, with the stream it went on; a
//! kernel given a mapped buffer leaves a mark that only waiting for the whole GPU clears.
//! The tickets are a host buffer's one piece of interior mutability ([`Pending`], behind
//! a mutex): copies only read the host buffer they copy from, yet must still be known to
//! the host. A device buffer remembers the count when it was made: work issued before
//! cannot touch it.
//!
//! Waiting for a stream, an event recorded on it, or the whole GPU marks the tickets
//! issued before the wait as finished. Before the host touches a buffer, what is not
//! known finished is waited for: the stream a ticket went on (the whole GPU for the
//! driver's default streams and for kernels), and only then. Once GPUs reach each
//! other's memory (peer access, peer copies), freeing a device buffer of one of them
//! waits for all of them.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{result, sys};

use crate::{Context as _, RuntimeError, raw};

/// The process-wide count of GPU work issued: every ticket is unique and later work has
/// a larger one, on any GPU.
static ISSUED: AtomicU64 = AtomicU64::new(0);

/// The GPUs whose memory another GPU may reach.
static SHARING: Mutex<Vec<Arc<GpuWork>>> = Mutex::new(Vec::new());

/// The count now: work issued from here on has a larger ticket.
pub(crate) fn now() -> u64 {
    ISSUED.load(Ordering::SeqCst)
}

/// `gpus` may reach each other's memory from now on.
pub(crate) fn share(gpus: &[&Arc<GpuWork>]) {
    let mut sharing = SHARING.lock().unwrap_or_else(|e| e.into_inner());
    for gpu in gpus {
        if !sharing.iter().any(|g| Arc::ptr_eq(g, gpu)) {
            sharing.push(Arc::clone(gpu));
        }
    }
}

/// One GPU's context and how far its work is issued and finished.
pub(crate) struct GpuWork {
    ctx: sys::CUcontext,
    /// The latest ticket of work issued on this GPU.
    last: AtomicU64,
    /// Every ticket of this GPU up to this is finished (the GPU was waited for after it).
    finished: AtomicU64,
}

// SAFETY: the context handle is only passed to the driver, which accepts it from any
// thread; the counts are atomics.
unsafe impl Send for GpuWork {}
unsafe impl Sync for GpuWork {}

impl GpuWork {
    pub(crate) fn new(ctx: sys::CUcontext) -> Arc<GpuWork> {
        Arc::new(GpuWork {
            ctx,
            last: AtomicU64::new(0),
            finished: AtomicU64::new(0),
        })
    }

    /// Work is being issued on this GPU: its ticket.
    pub(crate) fn issue(&self) -> u64 {
        let ticket = ISSUED.fetch_add(1, Ordering::SeqCst) + 1;
        self.last.fetch_max(ticket, Ordering::SeqCst);
        ticket
    }

    /// Whether work issued after `mark` may still run.
    fn busy_since(&self, mark: u64) -> bool {
        let last = self.last.load(Ordering::SeqCst);
        last > mark && last > self.finished.load(Ordering::SeqCst)
    }

    /// Run `f` with this GPU's context current, restoring the thread's context after.
    pub(crate) fn within<R>(
        &self,
        f: impl FnOnce() -> Result<R, RuntimeError>,
    ) -> Result<R, RuntimeError> {
        // SAFETY: the primary context is retained for the process's life.
        unsafe { raw::push_context(self.ctx) }.doing("making a GPU's context current")?;
        let out = f();
        raw::pop_context().doing("restoring the thread's context")?;
        out
    }

    /// Wait for all work on this GPU; every ticket issued before is then finished.
    pub(crate) fn synchronize(&self) -> Result<(), RuntimeError> {
        let upto = now();
        self.within(|| result::ctx::synchronize().doing("waiting for the GPU"))?;
        self.finished.fetch_max(upto, Ordering::SeqCst);
        Ok(())
    }

    /// Wait for whatever issued after `made` (when a device buffer of this GPU was made)
    /// may still use that buffer: this GPU's work, and every GPU's that shares memory
    /// with it.
    pub(crate) fn settle_since(self: &Arc<Self>, made: u64) -> Result<(), RuntimeError> {
        let sharing = SHARING.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let reach: Vec<&Arc<GpuWork>> = if sharing.iter().any(|g| Arc::ptr_eq(g, self)) {
            sharing.iter().collect()
        } else {
            vec![self]
        };
        for gpu in reach {
            if gpu.busy_since(made) {
                gpu.synchronize()?;
            }
        }
        Ok(())
    }
}

/// One stream's finished work: the stream's handle while it lives (none for the driver's
/// default streams, which only waiting for the whole GPU settles).
pub(crate) struct StreamWork {
    gpu: Arc<GpuWork>,
    raw: Mutex<Option<sys::CUstream>>,
    finished: AtomicU64,
}

// SAFETY: the stream handle is only passed to the driver, behind the mutex; the rest is
// atomics and an `Arc` of a `Sync` type.
unsafe impl Send for StreamWork {}
unsafe impl Sync for StreamWork {}

impl StreamWork {
    pub(crate) fn new(gpu: Arc<GpuWork>, raw: Option<sys::CUstream>) -> Arc<StreamWork> {
        Arc::new(StreamWork {
            gpu,
            raw: Mutex::new(raw),
            finished: AtomicU64::new(0),
        })
    }

    /// The GPU it is a stream of.
    pub(crate) fn gpu(&self) -> &Arc<GpuWork> {
        &self.gpu
    }

    /// How far this stream's work had been issued: what waiting for it now, or for an
    /// event recorded on it now, finishes.
    pub(crate) fn mark(&self) -> u64 {
        now()
    }

    /// Work is being issued on this stream.
    pub(crate) fn issue(&self) -> u64 {
        self.gpu.issue()
    }

    /// Every ticket on this stream up to `upto` is finished.
    pub(crate) fn finished_up_to(&self, upto: u64) {
        self.finished.fetch_max(upto, Ordering::SeqCst);
    }

    /// Wait for this stream (the whole GPU for a default stream).
    pub(crate) fn synchronize(&self) -> Result<(), RuntimeError> {
        let upto = self.mark();
        let raw = self.raw.lock().unwrap_or_else(|e| e.into_inner());
        match *raw {
            Some(raw) => self.gpu.within(|| {
                // SAFETY: the handle is live while it is in the mutex.
                unsafe { result::stream::synchronize(raw) }.doing("waiting for a stream")
            })?,
            None => return self.gpu.synchronize(),
        }
        self.finished_up_to(upto);
        Ok(())
    }

    /// The stream is going: wait for it and let go of its handle.
    pub(crate) fn retire(&self) -> Result<(), RuntimeError> {
        let waited = self.synchronize();
        *self.raw.lock().unwrap_or_else(|e| e.into_inner()) = None;
        if waited.is_ok() {
            self.finished_up_to(u64::MAX);
        }
        waited
    }

    fn done(&self, ticket: u64) -> bool {
        self.finished.load(Ordering::SeqCst) >= ticket
            || self.gpu.finished.load(Ordering::SeqCst) >= ticket
    }
}

/// Where a ticket's work runs.
enum On {
    Stream(Arc<StreamWork>, u64),
    /// A kernel given the buffer: only waiting for the whole GPU after the launch tells,
    /// and the launch is not seen here.
    Kernel(Arc<GpuWork>),
}

struct Ticket {
    on: On,
    /// Whether the GPU writes the buffer (the host may then not even read it).
    writes: bool,
}

impl Ticket {
    fn done(&self) -> bool {
        match &self.on {
            On::Stream(stream, ticket) => stream.done(*ticket),
            On::Kernel(_) => false,
        }
    }

    fn wait(&self) -> Result<(), RuntimeError> {
        match &self.on {
            On::Stream(stream, _) => stream.synchronize(),
            On::Kernel(gpu) => gpu.synchronize(),
        }
    }
}

/// The GPU's work on one host buffer not yet known finished.
#[derive(Default)]
pub(crate) struct Pending(Mutex<Vec<Ticket>>);

impl Pending {
    /// Add `ticket`, folding in an earlier one on the same stream (or GPU, for kernels):
    /// the later covers it, in stream order, and writes if either did.
    fn add(&self, mut ticket: Ticket) {
        let mut tickets = self.0.lock().unwrap_or_else(|e| e.into_inner());
        tickets.retain(|t| {
            let same = match (&t.on, &ticket.on) {
                (On::Stream(a, _), On::Stream(b, _)) => Arc::ptr_eq(a, b),
                (On::Kernel(a), On::Kernel(b)) => Arc::ptr_eq(a, b),
                _ => false,
            };
            if same {
                ticket.writes |= t.writes;
            }
            !same && !t.done()
        });
        tickets.push(ticket);
    }

    /// A copy on `stream` reads (`writes` false) or writes the buffer.
    pub(crate) fn copy(&self, stream: &Arc<StreamWork>, writes: bool) {
        let ticket = stream.issue();
        self.add(Ticket {
            on: On::Stream(stream.clone(), ticket),
            writes,
        });
    }

    /// A kernel on `gpu` is handed the buffer to read or write.
    pub(crate) fn kernel(&self, gpu: &Arc<GpuWork>, writes: bool) {
        self.add(Ticket {
            on: On::Kernel(gpu.clone()),
            writes,
        });
    }

    /// Wait for what may still write the buffer (`for_writing` false: the host reads it)
    /// or touch it at all (`for_writing` true: the host writes or frees it).
    pub(crate) fn settle(&self, for_writing: bool) -> Result<(), RuntimeError> {
        let mut tickets = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let mut at = 0;
        while at < tickets.len() {
            let ticket = &tickets[at];
            if ticket.done() {
                tickets.swap_remove(at);
            } else if ticket.writes || for_writing {
                ticket.wait()?;
                tickets.swap_remove(at);
            } else {
                at += 1;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GPU no test hands to the driver: they settle only what is known finished or
    /// only read, which waits for nothing.
    fn gpu() -> Arc<GpuWork> {
        GpuWork::new(std::ptr::null_mut())
    }

    fn tickets(pending: &Pending) -> Vec<bool> {
        let tickets = pending.0.lock().unwrap();
        tickets.iter().map(|t| t.writes).collect()
    }

    #[test]
    fn copies_on_one_stream_fold_into_one_ticket_that_writes_if_either_did() {
        let gpu = gpu();
        let (one, two) = (
            StreamWork::new(gpu.clone(), None),
            StreamWork::new(gpu, None),
        );
        let pending = Pending::default();
        pending.copy(&one, false);
        pending.copy(&one, true);
        pending.copy(&one, false);
        assert_eq!(tickets(&pending), [true]);
        pending.copy(&two, false);
        assert_eq!(tickets(&pending), [true, false]);
    }

    #[test]
    fn reading_leaves_copies_that_only_read_and_drops_those_known_finished() {
        let gpu = gpu();
        let (reading, writing) = (
            StreamWork::new(gpu.clone(), None),
            StreamWork::new(gpu, None),
        );
        let pending = Pending::default();
        pending.copy(&reading, false);
        pending.copy(&writing, true);
        writing.finished_up_to(writing.mark());
        pending.settle(false).unwrap();
        assert_eq!(tickets(&pending), [false]);
        reading.finished_up_to(reading.mark());
        pending.settle(true).unwrap();
        assert!(tickets(&pending).is_empty());
    }

    #[test]
    fn a_finished_wait_covers_only_the_copies_issued_before_it() {
        let stream = StreamWork::new(gpu(), None);
        let pending = Pending::default();
        pending.copy(&stream, true);
        let waited = stream.mark();
        pending.copy(&stream, true);
        stream.finished_up_to(waited);
        assert!(!pending.0.lock().unwrap()[0].done());
    }

    #[test]
    fn a_device_buffer_waits_only_for_work_issued_since_it_was_made() {
        let gpu = gpu();
        gpu.issue();
        let made = now();
        assert!(!gpu.busy_since(made), "earlier work cannot touch it");
        gpu.issue();
        assert!(gpu.busy_since(made));
        gpu.finished.fetch_max(now(), Ordering::SeqCst);
        assert!(!gpu.busy_since(made), "the GPU was waited for since");
    }

    #[test]
    fn a_kernel_handed_a_mapped_buffer_is_never_taken_as_finished() {
        let gpu = gpu();
        let pending = Pending::default();
        pending.kernel(&gpu, false);
        gpu.finished.fetch_max(now(), Ordering::SeqCst);
        pending.settle(false).unwrap();
        assert_eq!(
            tickets(&pending),
            [false],
            "only waiting for the GPU clears it"
        );
    }
}
