//! Event timing across streams, and tracing one iteration into a [`Timeline`].
//!
//! A timed region starts with an event on the first stream that every other stream waits
//! for, and ends when the first stream has waited for an event from every other stream:
//! the elapsed time covers exactly the work issued on all of them, on the GPU's clock.
use crate::results::{OpKind, Timeline, TimelineOp};
use crate::runtime::{Event, Gpu, RuntimeError, Stream};

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

    /// Mark the end after all work on `streams`, wait for it, and return milliseconds.
    pub fn end(&self, streams: &[Stream]) -> Result<f64, RuntimeError> {
        for (stream, join) in streams.iter().zip(&self.joins).skip(1) {
            stream.record(join)?;
            streams[0].wait(join)?;
        }
        streams[0].record(&self.stop)?;
        self.start.elapsed_ms(&self.stop)
    }
}

/// Records an event before and after each operation of one iteration.
pub struct Tracer {
    zero: Event,
    marks: Vec<(usize, OpKind, Event, Event)>,
}

impl Tracer {
    /// Start tracing; `streams` all wait for the zero mark.
    pub fn begin(gpu: &Gpu, streams: &[Stream]) -> Result<Tracer, RuntimeError> {
        let zero = gpu.event()?;
        streams[0].record(&zero)?;
        for stream in &streams[1..] {
            stream.wait(&zero)?;
        }
        Ok(Tracer {
            zero,
            marks: Vec::new(),
        })
    }

    /// Issue one operation on `streams[index]`, bracketed by two events.
    pub fn op(
        &mut self,
        gpu: &Gpu,
        streams: &[Stream],
        index: usize,
        kind: OpKind,
        issue: impl FnOnce(&Stream) -> Result<(), RuntimeError>,
    ) -> Result<(), RuntimeError> {
        let (before, after) = (gpu.event()?, gpu.event()?);
        let stream = &streams[index];
        stream.record(&before)?;
        issue(stream)?;
        stream.record(&after)?;
        self.marks.push((index, kind, before, after));
        Ok(())
    }

    /// Wait for everything and read the marks into a timeline.
    pub fn finish(self, gpu: &Gpu, title: &str, streams: usize) -> Result<Timeline, RuntimeError> {
        gpu.synchronize()?;
        let ops = self
            .marks
            .iter()
            .map(|(stream, kind, before, after)| {
                Ok(TimelineOp {
                    stream: *stream,
                    kind: *kind,
                    start_ms: self.zero.elapsed_ms(before)?,
                    end_ms: self.zero.elapsed_ms(after)?,
                })
            })
            .collect::<Result<_, RuntimeError>>()?;
        Ok(Timeline {
            title: title.to_owned(),
            streams,
            ops,
        })
    }
}
