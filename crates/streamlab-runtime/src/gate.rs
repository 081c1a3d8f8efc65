//! A gate the host opens: streams told to wait at it queue their later work on the GPU
//! until the host says go. Work issued behind a closed gate starts as it would if the
//! host had issued it instantly, so timings and traces of a schedule do not include how
//! long the host took to issue it.
//!
//! The gate is a counter in mapped host memory: [`Gate::hold`] makes a stream wait until
//! the counter reaches the gate's current ticket (`cuStreamWaitValue32`), [`Gate::open`]
//! writes the ticket. Each [`Gate::close`] takes a new ticket, so the gate never needs
//! resetting while streams still wait on it.
use crate::{Context, Gpu, MappedBuffer, RuntimeError, Stream, raw};

/// A host-opened gate for streams.
pub struct Gate {
    flag: MappedBuffer<u32>,
    ticket: u32,
}

impl Gate {
    /// A closed gate. (32-bit stream memory waits work on every GPU since CUDA 12.)
    pub fn new(gpu: &Gpu) -> Result<Gate, RuntimeError> {
        Ok(Gate {
            flag: gpu.mapped(1, 0u32)?,
            ticket: 1,
        })
    }

    /// Close the gate again (for the next schedule).
    pub fn close(&mut self) {
        self.ticket += 1;
    }

    /// Make everything issued on `stream` from now on wait until the gate opens.
    pub fn hold(&self, stream: &Stream) -> Result<(), RuntimeError> {
        // SAFETY: the flag lives in mapped memory for as long as the gate, which opens
        // and waits for the GPU before it goes; the stream is live.
        unsafe { raw::wait_value_at_least(stream.raw, self.flag.device_addr(), self.ticket) }
            .doing("holding a stream at a gate")
    }

    /// Open the gate: every stream waiting at it goes on.
    pub fn open(&mut self) {
        let flag = self.flag.host_ptr();
        // SAFETY: the flag is one live u32 the GPU only reads (no kernel is handed it); a
        // volatile write is seen by it.
        unsafe { flag.write_volatile(self.ticket) };
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        // Streams may still wait at a gate that was never opened: open it, and let the
        // work finish before the flag's memory goes.
        self.open();
        let _ = self.flag.gpu().synchronize();
    }
}
