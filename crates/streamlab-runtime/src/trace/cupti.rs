//! CUPTI's side of a trace: its activity buffers and the records they deliver, its clock,
//! and the matching of its records to the operations a schedule issued.
use std::alloc::{Layout, alloc, dealloc};
use std::ptr::null_mut;
use std::sync::{Mutex, OnceLock};

use cudarc::cupti::result::{self as cupti, activity};
use cudarc::cupti::sys as csys;
use cudarc::driver::sys as dsys;
use streamlab_record::timeline::{OpKind, TimelineOp};

use super::Issued;
use crate::{Gpu, RuntimeError, Stream};

/// One operation as CUPTI recorded it (nanoseconds on CUPTI's clock).
#[derive(Debug, Clone, Copy)]
pub(super) struct Record {
    kind: OpKind,
    /// CUPTI's id of its context: with one primary context per GPU, its GPU. Stream ids
    /// are unique within a context only.
    context: u32,
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

const BUFFER_BYTES: usize = 8 << 20;

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
            // A record's span, and (for copies and memsets) its bytes.
            macro_rules! span {
                ($kind:expr, $r:expr) => {
                    Record {
                        kind: $kind,
                        context: (*$r).contextId,
                        stream: (*$r).streamId,
                        start: (*$r).start,
                        end: (*$r).end,
                        bytes: None,
                        pageable: false,
                        synchronous: false,
                    }
                };
                ($kind:expr, $r:expr, bytes) => {
                    Record {
                        bytes: Some((*$r).bytes),
                        // CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC is the same bit.
                        synchronous: u32::from((*$r).flags) & asynchronous == 0,
                        ..span!($kind, $r)
                    }
                };
            }
            if kind == csys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL as u32 {
                let k = record as *const csys::CUpti_ActivityKernel10;
                found.push(span!(OpKind::Kernel, k));
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
                        pageable: (*m).srcKind == pageable_kind || (*m).dstKind == pageable_kind,
                        ..span!(kind, m, bytes)
                    });
                }
            } else if kind == csys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMSET as u32 {
                let m = record as *const csys::CUpti_ActivityMemset4;
                found.push(span!(OpKind::Memset, m, bytes));
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

pub(super) fn take_records() -> Vec<Record> {
    RECORDS
        .lock()
        .map(|mut r| std::mem::take(&mut *r))
        .unwrap_or_default()
}

pub(super) const KINDS: [csys::CUpti_ActivityKind; 3] = [
    csys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    csys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMCPY,
    csys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMSET,
];

/// Why CUPTI cannot be used here, if it cannot: checked once per process.
pub(super) fn cupti_unavailable() -> Option<&'static str> {
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

/// CUPTI's clock now, if CUPTI is loaded.
pub(super) fn now_ns() -> Option<u64> {
    cupti_unavailable().is_none().then(|| {
        let mut now = 0u64;
        // SAFETY: writes one integer.
        unsafe { cupti::get_timestamp(&mut now) }.ok().map(|()| now)
    })?
}

/// Deliver every buffered record to the callback.
pub(super) fn flush() -> Result<(), RuntimeError> {
    activity::flush_all(csys::CUpti_ActivityFlag::CUPTI_ACTIVITY_FLAG_FLUSH_FORCED as u32).map_err(
        |e| RuntimeError::Cupti {
            what: "flushing its records",
            code: e.0 as u32,
        },
    )
}

/// Match CUPTI's records to the issued operations, stream by stream (`stream_ids`: each
/// row's context and stream ids; the records of no stream of ours are the lane's, at row
/// `lane_row`); host calls keep their own times. `opened` is when the gate opened or
/// issue began (CUPTI's clock).
pub(super) fn from_cupti(
    title: &str,
    issued: &[Issued],
    stream_ids: &[(u32, u32)],
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
                Some(id) => (r.context, r.stream) == id,
                None => !stream_ids.contains(&(r.context, r.stream)),
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

/// Enable the activity kinds and read each stream's CUPTI context and stream ids
/// (`streams`: each stream with the index of its GPU in `gpus`).
pub(super) fn start_cupti(
    gpus: &[&Gpu],
    streams: &[(&Stream, usize)],
) -> Result<Vec<(u32, u32)>, String> {
    take_records();
    for kind in KINDS {
        activity::enable(kind)
            .map_err(|e| format!("CUPTI could not record activity (error {})", e.0 as u32))?;
    }
    let contexts = (gpus.iter())
        .map(|gpu| {
            let mut id = 0u32;
            // SAFETY: the GPU's primary context lives for the process's life.
            unsafe { cupti::get_context_id(gpu.ctx, &mut id) }
                .map(|()| id)
                .map_err(|e| format!("CUPTI could not name a context (error {})", e.0 as u32))
        })
        .collect::<Result<Vec<u32>, String>>()?;
    streams
        .iter()
        .map(|&(stream, k)| {
            let mut id = 0u32;
            // SAFETY: the stream is live, of the GPU's context given.
            unsafe { cupti::get_stream_id_ex(gpus[k].ctx, stream.raw(), 0, &mut id) }
                .map(|()| (contexts[k], id))
                .map_err(|e| format!("CUPTI could not name a stream (error {})", e.0 as u32))
        })
        .collect()
}
