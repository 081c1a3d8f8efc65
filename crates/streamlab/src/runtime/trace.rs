//! Tracing a schedule: when each copy and kernel really ran, from the GPU's own records.
//!
//! [`record`] runs the schedule twice. The first run warms up (CUPTI instruments a
//! kernel the first time it launches under tracing, which would otherwise show as a
//! long wait) and its records are dropped. The second run is issued behind a closed
//! [`Gate`], so it starts on the GPU as it would if the host issued it instantly, as in
//! the timed runs; the gate's opening is the traced run's time zero.
//!
//! With CUPTI (loaded at run time like libcuda), the records of every kernel and copy
//! give each operation's GPU start and end; they are matched to the issued operations
//! per stream (a stream runs its work in order, so its n-th record is its n-th
//! operation, checked by kind and bytes). An operation's ready time is when its stream
//! let it start: the gate's opening, or the end of the operation before it on its
//! stream. Started later than ready, it waited for its engine.
//!
//! Each trace is checked at once ([`streamlab_results::derived::trace`]); one that fails
//! (a link busy with other traffic at that moment) is traced again after a pause, up to
//! five times in all, and the timeline lists the failures it left behind. One that still
//! fails is kept, and its checks mark it disturbed.
//!
//! Without CUPTI each operation is bracketed by events recorded in its stream, the
//! timeline says `source: events`, and a note goes to stderr once. Tracing is only ever
//! done on top of the timed runs, never inside them.
use std::alloc::{Layout, alloc, dealloc};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use cudarc::cupti::result::{self as cupti, activity};
use cudarc::cupti::sys as csys;
use cudarc::driver::sys as dsys;
use streamlab_results::derived::trace as checks;
use streamlab_results::saved::timeline::{
    Lane, OpKind, Timeline, TimelineOp, TraceReference, TraceSource,
};

use super::gate::Gate;
use super::{Event, Gpu, RuntimeError, Stream};

/// One operation as CUPTI recorded it (nanoseconds on CUPTI's clock).
#[derive(Debug, Clone, Copy)]
struct Record {
    kind: OpKind,
    stream: u32,
    start: u64,
    end: u64,
    bytes: Option<u64>,
    /// A copy from or to pageable host memory.
    pageable: bool,
    /// Issued with a synchronous call (a copy or memset without a stream).
    synchronous: bool,
}

/// Records delivered by CUPTI's buffer callback since the last [`take_records`].
static RECORDS: Mutex<Vec<Record>> = Mutex::new(Vec::new());
/// Whether the "no CUPTI" note was printed.
static NOTED: AtomicBool = AtomicBool::new(false);

const BUFFER_BYTES: usize = 8 << 20;
/// How many times a schedule is traced before its failed checks stand.
const TRACE_ATTEMPTS: usize = 5;
/// The pause before the n-th trace again is n times this.
const RETRACE_PAUSE: std::time::Duration = std::time::Duration::from_millis(250);

fn buffer_layout() -> Layout {
    Layout::from_size_align(BUFFER_BYTES, 8).expect("a valid layout")
}

/// Buffers CUPTI handed back, kept for its next request: a fresh one's pages fault in
/// while CUPTI first writes them, on the thread issuing the traced schedule, which
/// showed as milliseconds of host time in traces started as issued.
static SPARE: Mutex<Vec<usize>> = Mutex::new(Vec::new());

extern "C" fn buffer_requested(buffer: *mut *mut u8, size: *mut usize, max_records: *mut usize) {
    let spare = SPARE.lock().ok().and_then(|mut s| s.pop());
    // SAFETY: CUPTI passes valid out-pointers; the buffer goes back to `SPARE` in
    // `buffer_completed`.
    unsafe {
        let memory = match spare {
            Some(address) => address as *mut u8,
            None => alloc(buffer_layout()),
        };
        *buffer = memory;
        *size = if memory.is_null() { 0 } else { BUFFER_BYTES };
        *max_records = 0;
    }
}

extern "C" fn buffer_completed(
    _context: dsys::CUcontext,
    _stream: u32,
    buffer: *mut u8,
    _size: usize,
    valid: usize,
) {
    let mut found = Vec::new();
    let mut record: *mut csys::CUpti_Activity = null_mut();
    // SAFETY: CUPTI hands back a buffer it filled with `valid` bytes of records. Each
    // record's kind is read as a raw u32 and only the scalar fields used are read.
    unsafe {
        while activity::get_next_record(buffer, valid, &mut record).is_ok() {
            let kind = *(record as *const u32);
            let asynchronous = csys::CUpti_ActivityFlag::CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC as u32;
            if kind == csys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL as u32 {
                let k = record as *const csys::CUpti_ActivityKernel10;
                found.push(Record {
                    kind: OpKind::Kernel,
                    stream: (*k).streamId,
                    start: (*k).start,
                    end: (*k).end,
                    bytes: None,
                    pageable: false,
                    synchronous: false,
                });
            } else if kind == csys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMCPY as u32 {
                let m = record as *const csys::CUpti_ActivityMemcpy6;
                let copy = (*m).copyKind;
                use csys::CUpti_ActivityMemcpyKind as Copy;
                let kind = if copy == Copy::CUPTI_ACTIVITY_MEMCPY_KIND_HTOD as u8 {
                    Some(OpKind::HtoD)
                } else if copy == Copy::CUPTI_ACTIVITY_MEMCPY_KIND_DTOH as u8 {
                    Some(OpKind::DtoH)
                } else if copy == Copy::CUPTI_ACTIVITY_MEMCPY_KIND_DTOD as u8 {
                    Some(OpKind::DtoD)
                } else {
                    None
                };
                let pageable_kind =
                    csys::CUpti_ActivityMemoryKind::CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE as u8;
                if let Some(kind) = kind {
                    found.push(Record {
                        kind,
                        stream: (*m).streamId,
                        start: (*m).start,
                        end: (*m).end,
                        bytes: Some((*m).bytes),
                        pageable: (*m).srcKind == pageable_kind || (*m).dstKind == pageable_kind,
                        synchronous: u32::from((*m).flags) & asynchronous == 0,
                    });
                }
            } else if kind == csys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMSET as u32 {
                let m = record as *const csys::CUpti_ActivityMemset4;
                found.push(Record {
                    kind: OpKind::Memset,
                    stream: (*m).streamId,
                    start: (*m).start,
                    end: (*m).end,
                    bytes: Some((*m).bytes),
                    pageable: false,
                    // CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC is the same bit.
                    synchronous: u32::from((*m).flags) & asynchronous == 0,
                });
            }
        }
        match SPARE.lock() {
            Ok(mut spare) => spare.push(buffer as usize),
            Err(_) => dealloc(buffer, buffer_layout()),
        }
    }
    if let Ok(mut records) = RECORDS.lock() {
        records.extend(found);
    }
}

fn take_records() -> Vec<Record> {
    RECORDS
        .lock()
        .map(|mut r| std::mem::take(&mut *r))
        .unwrap_or_default()
}

const KINDS: [csys::CUpti_ActivityKind; 3] = [
    csys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    csys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMCPY,
    csys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMSET,
];

/// Why CUPTI cannot be used here, if it cannot: checked once per process.
fn cupti_unavailable() -> Option<&'static str> {
    static CHECK: OnceLock<Option<String>> = OnceLock::new();
    CHECK
        .get_or_init(|| {
            // SAFETY: probing only opens and closes the library.
            if !unsafe { csys::is_culib_present() } {
                return Some("libcupti was not found".into());
            }
            let mut version = 0u32;
            // SAFETY: writes one integer.
            let status = unsafe { csys::cuptiGetVersion(&mut version) };
            if status != csys::CUptiResult::CUPTI_SUCCESS || version < csys::CUPTI_API_VERSION {
                return Some(format!(
                    "libcupti reports API version {version}, older than the {} it needs",
                    csys::CUPTI_API_VERSION
                ));
            }
            activity::register_callbacks(Some(buffer_requested), Some(buffer_completed))
                .err()
                .map(|e| format!("CUPTI refused its activity buffers (error {})", e.0 as u32))
        })
        .as_deref()
}

fn note_fallback(why: &str) {
    if !NOTED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "note: {why}, so timelines are drawn from event brackets (queueing included) and marked \"source\": \"events\""
        );
    }
}

/// One operation as issued.
struct Issued {
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
    /// CUPTI records them; each stream's CUPTI id.
    Cupti { stream_ids: Vec<u32> },
    /// Events bracket them, from a zero mark recorded when the gate opens.
    Events { zero: Event },
}

/// What a schedule issues its operations through.
pub struct Recorder<'a> {
    gpu: &'a Gpu,
    streams: &'a [Stream<'a>],
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
        Recorder {
            gpu,
            streams,
            lane,
            brackets: false,
            clock: false,
            issued: None,
        }
    }

    /// Issue one operation on `streams[stream]`, as part of `iteration`; `bytes` for a
    /// copy.
    pub fn op(
        &mut self,
        stream: usize,
        iteration: usize,
        kind: OpKind,
        bytes: Option<u64>,
        issue: impl FnOnce(&Stream) -> Result<(), RuntimeError>,
    ) -> Result<(), RuntimeError> {
        let on = &self.streams[stream];
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
        let row = self.streams.len();
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
        let row = self.streams.len() + usize::from(self.lane.is_some());
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
            let (before, after) = (self.gpu.event()?, self.gpu.event()?);
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
    title: &str,
    reference: TraceReference,
    schedule: impl FnMut(&mut Recorder) -> Result<(), RuntimeError>,
) -> Result<Timeline, RuntimeError> {
    record_with(gpu, streams, None, true, title, reference, schedule)
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
    title: &str,
    reference: TraceReference,
    schedule: impl FnMut(&mut Recorder) -> Result<(), RuntimeError>,
) -> Result<Timeline, RuntimeError> {
    record_with(gpu, streams, lane, false, title, reference, schedule)
}

/// Trace `schedule` once, as [`record`] does but with no checks and no retrace: for
/// traced batches whose records only give a number (a busy time), not a timeline to keep.
pub fn record_unchecked(
    gpu: &Gpu,
    streams: &[Stream],
    title: &str,
    reference: TraceReference,
    mut schedule: impl FnMut(&mut Recorder) -> Result<(), RuntimeError>,
) -> Result<Timeline, RuntimeError> {
    record_once(gpu, streams, None, true, title, reference, &mut schedule)
}

fn record_with(
    gpu: &Gpu,
    streams: &[Stream],
    lane: Option<(Lane, &Stream)>,
    gated: bool,
    title: &str,
    reference: TraceReference,
    mut schedule: impl FnMut(&mut Recorder) -> Result<(), RuntimeError>,
) -> Result<Timeline, RuntimeError> {
    let mut retraced = Vec::new();
    loop {
        let mut timeline = record_once(
            gpu,
            streams,
            lane,
            gated,
            title,
            reference.clone(),
            &mut schedule,
        )?;
        let failures = checks::check(&timeline).failures();
        match failures.first() {
            Some(first) if retraced.len() + 1 < TRACE_ATTEMPTS => {
                eprintln!("{first}; tracing it again");
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

/// One warm-up pass and one traced pass of `schedule`, behind a gate if `gated`.
#[allow(clippy::too_many_arguments)]
fn record_once(
    gpu: &Gpu,
    streams: &[Stream],
    lane: Option<(Lane, &Stream)>,
    gated: bool,
    title: &str,
    reference: TraceReference,
    schedule: &mut impl FnMut(&mut Recorder) -> Result<(), RuntimeError>,
) -> Result<Timeline, RuntimeError> {
    gpu.synchronize()?;
    let cupti = match cupti_unavailable() {
        None => start_cupti(streams).map_err(|why| note_fallback(&why)).ok(),
        Some(why) => {
            note_fallback(why);
            None
        }
    };
    schedule(&mut Recorder::untraced(gpu, streams, lane))?;
    gpu.synchronize()?;
    // Behind a gate the host's issue time is hidden: drop the warm-up's records now. As
    // issued, flushing CUPTI (or allocating the gate's mapped memory) here showed as a
    // millisecond of host time in the first traced call; the warm-up's records are left
    // for `from_cupti` to drop by their time instead.
    let mut gate = if gated {
        if cupti.is_some() {
            flush()?;
            take_records();
        }
        let gate = Gate::new(gpu)?;
        for stream in streams {
            gate.hold(stream)?;
        }
        Some(gate)
    } else {
        None
    };
    let mode = match cupti {
        Some(stream_ids) => Mode::Cupti { stream_ids },
        None => {
            let zero = gpu.event()?;
            streams[0].record(&zero)?;
            for stream in streams[1..].iter().chain(lane.map(|(_, s)| s)) {
                stream.wait(&zero)?;
            }
            Mode::Events { zero }
        }
    };
    let mut recorder = Recorder {
        gpu,
        streams,
        lane,
        brackets: matches!(mode, Mode::Events { .. }),
        clock: matches!(mode, Mode::Cupti { .. }),
        issued: Some(Vec::new()),
    };
    let before_issue = now_ns();
    schedule(&mut recorder)?;
    let issued = recorder.issued.take().unwrap_or_default();
    let opened = if gated { now_ns() } else { before_issue };
    if let Some(gate) = gate.as_mut() {
        gate.open();
    }
    gpu.synchronize()?;
    let iterations = issued.iter().map(|op| op.iteration + 1).max().unwrap_or(0);
    let lane_row = lane.map(|_| streams.len());
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
        Mode::Events { zero } => (TraceSource::Events, from_events(&issued, zero)?),
    };
    let host_calls = issued.iter().any(|op| op.kind == OpKind::Host);
    Ok(Timeline {
        title: title.to_owned(),
        source,
        streams: streams.len(),
        other_lanes: (lane.map(|(l, _)| l).into_iter())
            .chain(host_calls.then_some(Lane::Host))
            .collect(),
        iterations,
        ops,
        reference,
        retraced: Vec::new(),
    })
}

/// CUPTI's clock now, if CUPTI is loaded.
fn now_ns() -> Option<u64> {
    cupti_unavailable().is_none().then(|| {
        let mut now = 0u64;
        // SAFETY: writes one integer.
        unsafe { cupti::get_timestamp(&mut now) }.ok().map(|()| now)
    })?
}

/// Deliver every buffered record to the callback.
fn flush() -> Result<(), RuntimeError> {
    activity::flush_all(csys::CUpti_ActivityFlag::CUPTI_ACTIVITY_FLAG_FLUSH_FORCED as u32).map_err(
        |e| RuntimeError::Cupti {
            what: "flushing its records",
            code: e.0 as u32,
        },
    )
}

/// Match CUPTI's records to the issued operations, stream by stream (the records of no
/// stream of ours are the lane's, at row `lane_row`); host calls keep their own times.
/// `opened` is when the gate opened or issue began (CUPTI's clock).
fn from_cupti(
    title: &str,
    issued: &[Issued],
    stream_ids: &[u32],
    lane_row: Option<usize>,
    opened: Option<u64>,
) -> Result<Vec<TimelineOp>, RuntimeError> {
    // Records that started before the traced pass are the warm-up's.
    let records: Vec<Record> = (take_records().into_iter())
        .filter(|r| opened.is_none_or(|opened| r.start >= opened))
        .collect();
    // (issued index, start, end, ready, record) in nanoseconds.
    let mut timed: Vec<(usize, u64, u64, u64, Option<Record>)> = Vec::with_capacity(issued.len());
    let rows = (stream_ids.iter().enumerate())
        .map(|(s, &id)| (s, Some(id)))
        .chain(lane_row.map(|row| (row, None)));
    for (row, id) in rows {
        let mut work: Vec<Record> = (records.iter())
            .filter(|r| match id {
                Some(id) => r.stream == id,
                None => !stream_ids.contains(&r.stream),
            })
            .copied()
            .collect();
        work.sort_by_key(|w| w.start);
        let mine: Vec<usize> = (0..issued.len())
            .filter(|&i| issued[i].stream == row && issued[i].kind != OpKind::Host)
            .collect();
        let name = if id.is_some() {
            format!("stream {}", row + 1)
        } else {
            "the lane beyond the streams".to_owned()
        };
        if work.len() != mine.len() {
            return Err(RuntimeError::Trace(format!(
                "{title}: {name} issued {} operations but CUPTI recorded {}",
                mine.len(),
                work.len()
            )));
        }
        let mut previous_end = opened;
        for (&i, record) in mine.iter().zip(&work) {
            let op = &issued[i];
            if record.kind != op.kind || (record.bytes.is_some() && record.bytes != op.bytes) {
                return Err(RuntimeError::Trace(format!(
                    "{title}: {name} ran a {} of {:?} bytes where a {} of {:?} was issued",
                    record.kind.label(),
                    record.bytes,
                    op.kind.label(),
                    op.bytes
                )));
            }
            let ready = (previous_end.into_iter().chain(op.issued_ns))
                .max()
                .unwrap_or(record.start)
                .min(record.start);
            timed.push((i, record.start, record.end, ready, Some(*record)));
            previous_end = Some(record.end);
        }
    }
    for (i, op) in issued.iter().enumerate() {
        if let Some((start, end)) = op.host {
            timed.push((i, start, end, start, None));
        }
    }
    let zero = opened
        .into_iter()
        .chain(timed.iter().map(|t| t.3))
        .min()
        .unwrap_or(0);
    let ms = |ns: u64| ns.saturating_sub(zero) as f64 / 1e6;
    timed.sort_by_key(|t| t.0);
    Ok(timed
        .into_iter()
        .map(|(i, start, end, ready, record)| {
            let op = &issued[i];
            TimelineOp {
                stream: op.stream,
                iteration: op.iteration,
                kind: op.kind,
                ready_ms: Some(ms(ready)),
                start_ms: ms(start),
                end_ms: ms(end),
                bytes: op.bytes,
                pageable: record.is_some_and(|r| r.pageable),
                synchronous: record.is_some_and(|r| r.synchronous),
                call: op.call.clone(),
            }
        })
        .collect())
}

/// Read the event brackets into operations.
fn from_events(issued: &[Issued], zero: &Event) -> Result<Vec<TimelineOp>, RuntimeError> {
    (issued.iter())
        .map(|op| {
            let (before, after) = op.brackets.as_ref().expect("bracketed in events mode");
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

/// Enable the activity kinds and read each stream's CUPTI id.
fn start_cupti(streams: &[Stream]) -> Result<Vec<u32>, String> {
    take_records();
    for kind in KINDS {
        activity::enable(kind)
            .map_err(|e| format!("CUPTI could not record activity (error {})", e.0 as u32))?;
    }
    streams
        .iter()
        .map(|stream| {
            let mut id = 0u32;
            // SAFETY: the stream is live; a null context means the current one.
            unsafe { cupti::get_stream_id_ex(null_mut(), stream.raw(), 0, &mut id) }
                .map(|()| id)
                .map_err(|e| format!("CUPTI could not name a stream (error {})", e.0 as u32))
        })
        .collect()
}
