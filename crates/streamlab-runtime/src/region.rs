//! Timing work spread over several streams with events.
//!
//! A timed region starts with an event on the first stream that every other stream waits
//! for, and ends when the first stream has waited for an event from every other stream:
//! the elapsed time covers exactly the work issued on all of them, on the GPU's clock.
use super::{Event, Gpu, RuntimeError, Stream};

/// Events reused by every timed region over the same streams.
pub struct Region {
    start: Event,
    stop: Event,
    joins: Vec<Event>,
}

impl Region {
    pub fn new(gpu: &Gpu, streams: usize) -> Result<Region, RuntimeError> {
        Ok(Region {
            start: gpu.event()?,
            stop: gpu.event()?,
            joins: (0..streams)
                .map(|_| gpu.event())
                .collect::<Result<_, _>>()?,
        })
    }

    /// Mark the start: work issued after this on any of `streams` is inside the region.
    pub fn begin(&self, streams: &[Stream]) -> Result<(), RuntimeError> {
        streams[0].record(&self.start)?;
        for stream in &streams[1..] {
            stream.wait(&self.start)?;
        }
        Ok(())
    }

    /// Mark the end after all work on `streams` without waiting for it.
    pub fn mark_end(&self, streams: &[Stream]) -> Result<(), RuntimeError> {
        for (stream, join) in streams.iter().zip(&self.joins).skip(1) {
            stream.record(join)?;
            streams[0].wait(join)?;
        }
        streams[0].record(&self.stop)
    }

    /// Milliseconds from the start to the end mark; waits for the end.
    pub fn elapsed_ms(&self) -> Result<f64, RuntimeError> {
        self.start.elapsed_ms(&self.stop)
    }

    /// Mark the end after all work on `streams`, wait for it, and return milliseconds.
    pub fn end(&self, streams: &[Stream]) -> Result<f64, RuntimeError> {
        self.mark_end(streams)?;
        self.elapsed_ms()
    }
}
