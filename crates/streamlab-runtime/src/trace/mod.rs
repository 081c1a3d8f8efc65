//! Tracing a schedule: when each copy and kernel really ran, from the GPU's own records.
//!
//! [`record`] runs the schedule twice. The first run warms up (CUPTI instruments a
//! kernel the first time it launches under tracing, which would otherwise show as a
//! long wait) and its records are dropped. The second run is issued behind a closed
//! [`Gate`](crate::gate::Gate), so it starts on the GPU as it would if the host issued it
//! instantly, as in the timed runs; the gate's opening is the traced run's time zero.
//!
//! With CUPTI (loaded at run time like libcuda), the records of every kernel and copy
//! give each operation's GPU start and end; they are matched to the issued operations
//! per stream (a stream runs its work in order, so its n-th record is its n-th
//! operation, checked by kind and bytes). An operation's ready time is when its stream
//! let it start: the gate's opening, or the end of the operation before it on its
//! stream. Started later than ready, it waited for its engine.
//!
//! Each trace is judged at once by the caller's [`Judge`] (streamlab holds it to its
//! trace checks); one it finds wanting (a link busy with other traffic at that moment)
//! is traced again after a pause, up to five times in all, and the timeline lists the
//! reasons it left behind. One still wanting is kept: its checks mark it disturbed.
//!
//! Without CUPTI each operation is bracketed by events recorded in its stream, the
//! timeline says `source: events`, and a note goes to stderr once. Tracing is only ever
//! done on top of the timed runs, never inside them.
//!
//! [`record_gpus`] traces a schedule over the streams of several GPUs at once: a gate per
//! GPU, opened one after the other; CUPTI's records matched by their context (one primary
//! context per GPU) and stream; each operation saved with its GPU. Without CUPTI each
//! GPU's times run from its own gate's opening.
mod cupti;
mod rows;

use std::sync::atomic::{AtomicBool, Ordering};

use cudarc::cupti::result::activity;
use cupti::{KINDS, cupti_unavailable, flush, from_cupti, now_ns, start_cupti, take_records};
use streamlab_record::timeline::{
    Lane, OpKind, Timeline, TimelineOp, TraceReference, TraceSource, TracedGpu,
};

use crate::{Event, Gpu, RuntimeError, Stream};
use rows::{Rows, gates, zeros};

/// What is wrong with a trace, in the caller's words (nothing: keep it): the runtime
/// traces a schedule again while its trace has something wrong.
pub type Judge<'a> = &'a dyn Fn(&Timeline) -> Vec<String>;

/// Whether the "no CUPTI" note was printed.
static NOTED: AtomicBool = AtomicBool::new(false);
/// How many times a schedule is traced before its failed checks stand.
const TRACE_ATTEMPTS: usize = 5;
/// The pause before the n-th trace again is n times this.
const RETRACE_PAUSE: std::time::Duration = std::time::Duration::from_millis(250);

fn note_fallback(why: &str) {
    if !NOTED.swap(true, Ordering::Relaxed) {
        crate::news::say(&format!(
            "note: {why}, so timelines are drawn from event brackets (queueing included) and marked \"source\": \"events\""
        ));
    }
}

/// One operation as issued.
pub(super) struct Issued {
    /// Its row: a stream's index, or one past them for the other lane and the host.
    stream: usize,
    iteration: usize,
    kind: OpKind,
    bytes: Option<u64>,
    /// The API call that issued it, where the schedule names it.
    call: Option<String>,
    /// When the host issued it (CUPTI's clock), with CUPTI.
    issued_ns: Option<u64>,
    /// A host call's start and end (CUPTI's clock).
    host: Option<(u64, u64)>,
    /// The events around it, when CUPTI is unavailable.
    brackets: Option<(Event, Event)>,
}

/// How operations are timed.
enum Mode {
    /// CUPTI records them; each stream's CUPTI context and stream ids.
    Cupti { stream_ids: Vec<(u32, u32)> },
    /// Events bracket them, from a zero mark per GPU recorded when its gate opens.
    Events { zeros: Vec<Event> },
}

/// What a schedule issues its operations through.
pub struct Recorder<'a> {
    rows: Rows<'a>,
    /// A lane beyond the streams that operations may be issued on (the NULL stream, the
    /// per-thread default stream).
    lane: Option<(Lane, &'a Stream<'a>)>,
    /// Events mode brackets each operation; `None` while warming up.
    brackets: bool,
    /// Whether CUPTI's clock times the host's calls and issue.
    clock: bool,
    issued: Option<Vec<Issued>>,
}

impl<'a> Recorder<'a> {
    /// A recorder that only issues: for the timed runs of a schedule written once for
    /// them and its trace.
    pub fn untraced(
        gpu: &'a Gpu,
        streams: &'a [Stream<'a>],
        lane: Option<(Lane, &'a Stream<'a>)>,
    ) -> Recorder<'a> {
        Recorder::issuing(Rows::One { gpu, streams }, lane)
    }

    /// A recorder over `rows` that only issues.
    fn issuing(rows: Rows<'a>, lane: Option<(Lane, &'a Stream<'a>)>) -> Recorder<'a> {
        Recorder {
            rows,
            lane,
            brackets: false,
            clock: false,
            issued: None,
        }
    }

    /// Issue one operation on stream `stream` (of [`record_gpus`]'s GPUs, counted over
    /// all of them in order), as part of `iteration`; `bytes` for a copy.
    pub fn op(
        &mut self,
        stream: usize,
        iteration: usize,
        kind: OpKind,
        bytes: Option<u64>,
        issue: impl FnOnce(&Stream) -> Result<(), RuntimeError>,
    ) -> Result<(), RuntimeError> {
        let on = self.rows.stream(stream);
        self.issue(on, stream, iteration, kind, bytes, None, issue)
    }

    /// Issue one operation with `call` on the lane beyond the streams (the NULL or
    /// per-thread default stream the trace was given).
    pub fn on_lane(
        &mut self,
        iteration: usize,
        kind: OpKind,
        bytes: Option<u64>,
        call: &str,
        issue: impl FnOnce(&Stream) -> Result<(), RuntimeError>,
    ) -> Result<(), RuntimeError> {
        let (_, on) = self.lane.expect("a trace with a lane");
        let row = self.rows.len();
        self.issue(on, row, iteration, kind, bytes, Some(call), issue)
    }

    /// Make `call`, a host call that may wait for the GPU, drawn on the host's row with
    /// the times CUPTI's clock gives it (not drawn without CUPTI).
    pub fn host(
        &mut self,
        iteration: usize,
        call: &str,
        f: impl FnOnce() -> Result<(), RuntimeError>,
    ) -> Result<(), RuntimeError> {
        if self.issued.is_none() || !self.clock {
            return f();
        }
        let start = now_ns();
        f()?;
        let end = now_ns();
        let row = self.rows.len() + usize::from(self.lane.is_some());
        if let (Some(start), Some(end), Some(issued)) = (start, end, self.issued.as_mut()) {
            issued.push(Issued {
                stream: row,
                iteration,
                kind: OpKind::Host,
                bytes: None,
                call: Some(call.to_owned()),
                issued_ns: Some(start),
                host: Some((start, end)),
                brackets: None,
            });
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn issue(
        &mut self,
        on: &Stream,
        row: usize,
        iteration: usize,
        kind: OpKind,
        bytes: Option<u64>,
        call: Option<&str>,
        issue: impl FnOnce(&Stream) -> Result<(), RuntimeError>,
    ) -> Result<(), RuntimeError> {
        if self.issued.is_none() {
            return issue(on);
        }
        let issued_ns = if self.clock { now_ns() } else { None };
        let brackets = if self.brackets {
            let gpu = self.rows.gpu(row);
            let (before, after) = (gpu.event()?, gpu.event()?);
            on.record(&before)?;
            issue(on)?;
            on.record(&after)?;
            Some((before, after))
        } else {
            issue(on)?;
            None
        };
        if let Some(issued) = self.issued.as_mut() {
            issued.push(Issued {
                stream: row,
                iteration,
                kind,
                bytes,
                call: call.map(str::to_owned),
                issued_ns,
                host: None,
                brackets,
            });
        }
        Ok(())
    }
}

/// Trace `schedule` on `streams` (module header): run it once to warm up, then again
/// behind a gate, recorded; `reference` is what the timeline will be checked against.
pub fn record(
    gpu: &Gpu,
    streams: &[Stream],
    (title, reference, judge): (&str, TraceReference, Judge),
    schedule: impl FnMut(&mut Recorder) -> Result<(), RuntimeError>,
) -> Result<Timeline, RuntimeError> {
    let rows = Rows::One { gpu, streams };
    record_with(&rows, How::gated(title), (reference, judge), schedule)
}

/// Trace `schedule` over the streams of several GPUs as [`record`] does one GPU's, behind
/// a gate per GPU: its operations name their stream counted over every GPU's streams in
/// the order of `gpus` ([`Recorder::op`]), and the schedule makes each GPU's context
/// current before it issues that GPU's work. The timeline lists the GPUs with their
/// streams, and every operation its GPU.
pub fn record_gpus(
    gpus: &[(&Gpu, &[Stream])],
    (title, reference, judge): (&str, TraceReference, Judge),
    schedule: impl FnMut(&mut Recorder) -> Result<(), RuntimeError>,
) -> Result<Timeline, RuntimeError> {
    let rows = Rows::several(gpus);
    record_with(&rows, How::gated(title), (reference, judge), schedule)
}

/// Trace `schedule` as [`record`] does, but started as the host issues it, with no gate:
/// for schedules whose host waits for the GPU in the middle of issue (a gate closed
/// until issue ends would never let it go on). Each operation's ready time is then when
/// the host issued it or its stream's earlier work ended, whichever was later. `lane`
/// is a stream beyond `streams` the schedule may issue on ([`Recorder::on_lane`]).
pub fn record_as_issued(
    gpu: &Gpu,
    streams: &[Stream],
    lane: Option<(Lane, &Stream)>,
    (title, reference, judge): (&str, TraceReference, Judge),
    schedule: impl FnMut(&mut Recorder) -> Result<(), RuntimeError>,
) -> Result<Timeline, RuntimeError> {
    let how = How {
        lane,
        gated: false,
        title,
    };
    record_with(
        &Rows::One { gpu, streams },
        how,
        (reference, judge),
        schedule,
    )
}

/// Trace `schedule` once with no checks, traced again only where CUPTI lost records
/// (`record_whole`): behind the gate as [`record`] does (`gated`), or as the host issues
/// it as [`record_as_issued`] does; for schedules whose records give a number (a busy
/// time, a probe's wait), not a timeline to hold to a timed run.
pub fn record_unchecked(
    gpu: &Gpu,
    streams: &[Stream],
    gated: bool,
    title: &str,
    reference: TraceReference,
    mut schedule: impl FnMut(&mut Recorder) -> Result<(), RuntimeError>,
) -> Result<Timeline, RuntimeError> {
    let how = How {
        lane: None,
        gated,
        title,
    };
    record_whole(
        &Rows::One { gpu, streams },
        &how,
        &reference,
        &mut schedule,
        &mut Vec::new(),
    )
}

/// How a schedule is traced: the lane beyond its streams, whether behind a gate, and its
/// title.
struct How<'a> {
    lane: Option<(Lane, &'a Stream<'a>)>,
    gated: bool,
    title: &'a str,
}

impl<'a> How<'a> {
    /// Behind a gate, with no lane.
    fn gated(title: &'a str) -> How<'a> {
        How {
            lane: None,
            gated: true,
            title,
        }
    }
}

/// [`record_once`], traced again while CUPTI's records come back incomplete (each reason
/// pushed onto `retraced`), and timed with events on the last of [`TRACE_ATTEMPTS`]: a
/// disturbed trace, never a failed run.
fn record_whole(
    rows: &Rows,
    how: &How,
    reference: &TraceReference,
    schedule: &mut impl FnMut(&mut Recorder) -> Result<(), RuntimeError>,
    retraced: &mut Vec<String>,
) -> Result<Timeline, RuntimeError> {
    loop {
        let source = if retraced.len() + 1 < TRACE_ATTEMPTS {
            Source::Cupti
        } else {
            Source::Events
        };
        let traced = record_once(rows, how, reference.clone(), schedule, source);
        match traced {
            Err(RuntimeError::Trace(why)) if source == Source::Cupti => {
                crate::news::say(&format!("{why}; tracing it again"));
                retraced.push(why);
            }
            other => return other,
        }
    }
}

/// Where a trace's times come from: CUPTI's records where it runs, or the events around
/// each operation (the labelled fallback, also where CUPTI lost records on every try).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Cupti,
    Events,
}

/// [`record_whole`], traced again while `judge` finds the trace wanting, up to
/// [`TRACE_ATTEMPTS`]; the timeline lists the reasons of every retrace.
fn record_with(
    rows: &Rows,
    how: How,
    (reference, judge): (TraceReference, Judge),
    mut schedule: impl FnMut(&mut Recorder) -> Result<(), RuntimeError>,
) -> Result<Timeline, RuntimeError> {
    let mut retraced = Vec::new();
    loop {
        let mut timeline = record_whole(rows, &how, &reference, &mut schedule, &mut retraced)?;
        let failures = judge(&timeline);
        match failures.first() {
            Some(first) if retraced.len() + 1 < TRACE_ATTEMPTS => {
                crate::news::say(&format!("{first}; tracing it again"));
                retraced.push(first.clone());
                // Other traffic on a shared link comes in bursts: wait one out.
                std::thread::sleep(RETRACE_PAUSE * retraced.len() as u32);
            }
            _ => {
                timeline.retraced = retraced;
                return Ok(timeline);
            }
        }
    }
}

/// One warm-up pass and one traced pass of `schedule`, behind a gate per GPU if
/// `how.gated`, timed by CUPTI or by events (`source`).
fn record_once(
    rows: &Rows,
    how: &How,
    reference: TraceReference,
    schedule: &mut impl FnMut(&mut Recorder) -> Result<(), RuntimeError>,
    source: Source,
) -> Result<Timeline, RuntimeError> {
    let (lane, title) = (how.lane, how.title);
    rows.wait_all()?;
    let cupti = match (source, cupti_unavailable()) {
        (Source::Events, _) => None,
        (Source::Cupti, None) => start_cupti(&rows.gpus(), &rows.indexed())
            .map_err(|why| note_fallback(&why))
            .ok(),
        (Source::Cupti, Some(why)) => {
            note_fallback(why);
            None
        }
    };
    schedule(&mut Recorder::issuing(rows.clone(), lane))?;
    rows.wait_all()?;
    // Behind a gate the host's issue time is hidden: drop the warm-up's records now. As
    // issued, flushing CUPTI (or allocating the gate's mapped memory) here showed as a
    // millisecond of host time in the first traced call; the warm-up's records are left
    // for `from_cupti` to drop by their time instead.
    let mut gates = if how.gated {
        if cupti.is_some() {
            flush()?;
            take_records();
        }
        gates(rows)?
    } else {
        Vec::new()
    };
    let mode = match cupti {
        Some(stream_ids) => Mode::Cupti { stream_ids },
        None => Mode::Events {
            zeros: zeros(rows, lane.map(|(_, s)| s))?,
        },
    };
    let mut recorder = Recorder {
        brackets: matches!(mode, Mode::Events { .. }),
        clock: matches!(mode, Mode::Cupti { .. }),
        issued: Some(Vec::new()),
        ..Recorder::issuing(rows.clone(), lane)
    };
    let before_issue = now_ns();
    schedule(&mut recorder)?;
    let issued = recorder.issued.take().unwrap_or_default();
    let opened = if how.gated { now_ns() } else { before_issue };
    for gate in &mut gates {
        gate.open();
    }
    rows.wait_all()?;
    let iterations = issued.iter().map(|op| op.iteration + 1).max().unwrap_or(0);
    let lane_row = lane.map(|_| rows.len());
    let (source, ops) = match &mode {
        Mode::Cupti { stream_ids } => {
            flush()?;
            for kind in KINDS {
                let _ = activity::disable(kind);
            }
            (
                TraceSource::Cupti,
                from_cupti(title, &issued, stream_ids, lane_row, opened)?,
            )
        }
        Mode::Events { zeros } => (TraceSource::Events, from_events(&issued, rows, zeros)?),
    };
    let gpus = rows.gpus();
    let devices = if gpus.len() > 1 {
        (gpus.iter().enumerate())
            .map(|(k, gpu)| TracedGpu {
                ordinal: gpu.info().ordinal,
                streams: rows.of(k).count(),
            })
            .collect()
    } else {
        Vec::new()
    };
    let host_calls = issued.iter().any(|op| op.kind == OpKind::Host);
    Ok(Timeline {
        title: title.to_owned(),
        source,
        streams: rows.len(),
        other_lanes: (lane.map(|(l, _)| l).into_iter())
            .chain(host_calls.then_some(Lane::Host))
            .collect(),
        devices,
        iterations,
        ops,
        reference,
        retraced: Vec::new(),
    })
}

/// Read the event brackets into operations, each from its GPU's zero mark.
fn from_events(
    issued: &[Issued],
    rows: &Rows,
    zeros: &[Event],
) -> Result<Vec<TimelineOp>, RuntimeError> {
    (issued.iter())
        .map(|op| {
            let (before, after) = op.brackets.as_ref().expect("bracketed in events mode");
            let zero = &zeros[rows.gpu_index(op.stream)];
            Ok(TimelineOp {
                stream: op.stream,
                iteration: op.iteration,
                kind: op.kind,
                ready_ms: None,
                start_ms: zero.elapsed_ms(before)?,
                end_ms: zero.elapsed_ms(after)?,
                bytes: op.bytes,
                pageable: false,
                synchronous: false,
                call: op.call.clone(),
            })
        })
        .collect()
}
