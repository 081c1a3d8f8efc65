//! Tracing a schedule on the GPU ([`crate::runtime::trace`]), each trace held to the
//! trace checks at once (`streamlab_results::derived::trace`): one that fails them is
//! traced again, up to the runtime's limit, and one that still fails is kept and marked
//! disturbed by the same checks when its result is analysed.
use streamlab_results::derived::trace::check;
use streamlab_results::saved::timeline::{Lane, Timeline, TraceReference};

pub use crate::runtime::trace::{Recorder, record_unchecked};
use crate::runtime::{Gpu, RuntimeError, Stream, trace};

/// What the trace checks find wrong with `timeline`.
fn failures(timeline: &Timeline) -> Vec<String> {
    check(timeline).failures()
}

/// [`trace::record`], held to the trace checks.
pub fn record(
    gpu: &Gpu,
    streams: &[Stream],
    title: &str,
    reference: TraceReference,
    schedule: impl FnMut(&mut Recorder) -> Result<(), RuntimeError>,
) -> Result<Timeline, RuntimeError> {
    trace::record(gpu, streams, (title, reference, &failures), schedule)
}

/// [`trace::record_gpus`], held to the trace checks.
pub fn record_gpus(
    gpus: &[(&Gpu, &[Stream])],
    title: &str,
    reference: TraceReference,
    schedule: impl FnMut(&mut Recorder) -> Result<(), RuntimeError>,
) -> Result<Timeline, RuntimeError> {
    trace::record_gpus(gpus, (title, reference, &failures), schedule)
}

/// [`trace::record_as_issued`], held to the trace checks.
pub fn record_as_issued(
    gpu: &Gpu,
    streams: &[Stream],
    lane: Option<(Lane, &Stream)>,
    title: &str,
    reference: TraceReference,
    schedule: impl FnMut(&mut Recorder) -> Result<(), RuntimeError>,
) -> Result<Timeline, RuntimeError> {
    trace::record_as_issued(gpu, streams, lane, (title, reference, &failures), schedule)
}
