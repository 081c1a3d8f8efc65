//! What every traced timeline shows, and the checks it is held to against what the same
//! run measured.
//!
//! From the GPU's own records (CUPTI), each engine's busy time ([`Occupancy`]), the bound
//! the busiest engine or stream sets ([`busiest_bound`]), how the work flowed ([`Flow`])
//! and what broke the streams' concurrency ([`breaks`]).
//!
//! A timeline that fails a check after its retraces shows a machine disturbed by traffic
//! the run cannot see (a shared link): it is marked "disturbed" and gives no bound, and
//! the run goes on (`--strict` makes it fail the run). The checks:
//!
//! 1. No two copies in the same direction overlap on one GPU: each direction has one
//!    copy engine. A copy from pageable memory is left out: the driver stages it chunk
//!    by chunk, and its record spans every chunk while the engine serves other copies.
//! 2. Each copy's duration lies between its bytes over its direction's rate alone and
//!    its bytes over its direction's rate while both directions run (how much of it ran
//!    while the other direction was busy decides where), within [`TOLERANCE`]; both rates
//!    measured over the same chunks in the same run. Copies under [`LARGE_COPY_BYTES`]
//!    are dominated by fixed costs and are not checked.
//! 3. The traced schedule took as long as its fastest timed sample, within [`TOLERANCE`]
//!    (the trace is one clean run, so it is held to the cleanest timed one): the period
//!    of the middle iteration when iterations were traced back to back (fill and drain
//!    fall on the first and last), else the span of the one traced run.
//! 4. Where the timed median is known, the traced busiest engine is no slower than it
//!    (within [`SLACK`]): a trace whose engines ran slower than the timed runs met a
//!    busier link, and its bound would sit above what the run measured.
//!
//! Event-bracketed timelines (no CUPTI) include queueing in every bar, so only the third
//! check applies to them. A timeline of several GPUs has no one set of engines: its
//! occupancy and busiest bound are left out, and the fourth check with them.
mod concurrency;
mod engines;

pub use concurrency::{Break, BreakKind, HELD_BACK_MS, breaks, describe_breaks};
use engines::extent;
pub use engines::{
    BusiestBound, Flow, Occupancy, Resource, TracedBound, WaitingOp, busiest_bound, occupancy,
    traced_bound,
};

use serde::Serialize;

use super::pipeline::SLACK;
use super::rates::{LARGE_COPY_BYTES, ms_at};
use crate::saved::timeline::{CopyRates, OpKind, Timeline, TimelineOp, TraceSource};
use crate::stats::Series;

/// Relative tolerance of the duration and span checks.
pub const TOLERANCE: f64 = 0.15;
/// Overlap allowed between two copies of one direction (timestamp granularity).
const OVERLAP_SLACK_MS: f64 = 0.001;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Passed,
    Failed,
    NotApplicable,
}

impl Outcome {
    /// Passed or failed.
    fn of(passed: bool) -> Outcome {
        if passed {
            Outcome::Passed
        } else {
            Outcome::Failed
        }
    }

    /// As a report marks a check.
    pub fn mark(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "FAILED",
            Outcome::NotApplicable => "not applicable",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceCheck {
    pub name: String,
    pub outcome: Outcome,
    pub detail: String,
}

impl TraceCheck {
    fn new(name: &str, outcome: Outcome, detail: impl Into<String>) -> TraceCheck {
        TraceCheck {
            name: name.to_owned(),
            outcome,
            detail: detail.into(),
        }
    }
}

/// Every check on one timeline, and its engines' occupancy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceChecks {
    pub title: String,
    pub source: TraceSource,
    pub checks: Vec<TraceCheck>,
    /// A check failed: the machine was disturbed while this schedule was traced, and
    /// the timeline gives no bound.
    pub disturbed: bool,
    /// Earlier traces of the same schedule dropped because they failed a check.
    pub retraces: usize,
    /// How busy each engine was (GPU records only).
    pub occupancy: Option<Occupancy>,
    /// The operations that break the streams' concurrency (GPU records only).
    pub breaks: Vec<Break>,
}

impl TraceChecks {
    pub fn passed(&self) -> bool {
        !self.disturbed
    }

    /// The bound of the busiest engine or stream, from an undisturbed trace only.
    pub fn busiest_bound(&self) -> Option<BusiestBound> {
        self.occupancy.filter(|_| !self.disturbed).map(|o| o.bound)
    }

    /// The failed checks, one line each.
    pub fn failures(&self) -> Vec<String> {
        (self.checks.iter())
            .filter(|c| c.outcome == Outcome::Failed)
            .map(|c| format!("{} — {}: {}", self.title, c.name, c.detail))
            .collect()
    }
}

pub fn check(t: &Timeline) -> TraceChecks {
    let gpu_records = t.source == TraceSource::Cupti;
    let from_gpu_records = |name: &str, check: fn(&Timeline) -> TraceCheck| match gpu_records {
        true => check(t),
        false => {
            let why = "event brackets include the time an operation waited for its engine";
            TraceCheck::new(name, Outcome::NotApplicable, why)
        }
    };
    let mut checks = vec![
        from_gpu_records(ONE_AT_A_TIME, one_copy_at_a_time),
        from_gpu_records(DURATIONS, copy_durations),
        span(t),
    ];
    // One GPU's engines bound its iterations; those of several GPUs are not one engine.
    let occupancy = (gpu_records && t.devices.is_empty())
        .then(|| occupancy(t))
        .flatten();
    if let (Some(o), Some(median)) = (&occupancy, t.reference.median_ms) {
        checks.push(busiest_engine(o, median));
    }
    TraceChecks {
        title: t.title.clone(),
        source: t.source,
        disturbed: checks.iter().any(|c| c.outcome == Outcome::Failed),
        retraces: t.retraced.len(),
        checks,
        occupancy,
        breaks: if gpu_records { breaks(t) } else { Vec::new() },
    }
}

const BUSIEST: &str = "busiest engine or stream no slower than the timed median";

fn busiest_engine(o: &Occupancy, median_ms: f64) -> TraceCheck {
    let ok = o.bound.ms <= median_ms * (1.0 + SLACK);
    let busier = ": the trace met a busier link than the timed runs";
    let detail = format!(
        "{} was busy {:.4} ms per steady traced iteration; the timed median is \
         {median_ms:.4} ms{}",
        o.bound.resource.label(),
        o.bound.ms,
        if ok { "" } else { busier }
    );
    TraceCheck::new(BUSIEST, Outcome::of(ok), detail)
}

const ONE_AT_A_TIME: &str = "one copy per direction at a time";
const DURATIONS: &str = "copy durations match the measured rates";
const SPAN: &str = "traced time matches the fastest timed sample";

fn describe(t: &Timeline, op: &TimelineOp) -> String {
    let stream = match t.gpu_stream(op.stream) {
        Some((gpu, s)) => format!("GPU {gpu} stream {}", s + 1),
        None => format!("stream {}", op.stream + 1),
    };
    format!(
        "{} on {stream} (iteration {})",
        op.kind.label(),
        op.iteration + 1
    )
}

/// The first check: one copy per direction at a time on each GPU.
fn one_copy_at_a_time(t: &Timeline) -> TraceCheck {
    let mut counted = Vec::new();
    let staged = t.ops.iter().filter(|op| op.pageable).count();
    for kind in [OpKind::HtoD, OpKind::DtoH] {
        // GPU by GPU, each in the order they started.
        let mut copies: Vec<&TimelineOp> = (t.ops.iter())
            .filter(|op| op.kind == kind && !op.pageable)
            .collect();
        copies.sort_by(|a, b| {
            (t.gpu_of(a).cmp(&t.gpu_of(b))).then(a.start_ms.total_cmp(&b.start_ms))
        });
        if let Some(pair) = copies.windows(2).find(|pair| {
            t.gpu_of(pair[0]) == t.gpu_of(pair[1])
                && pair[1].start_ms < pair[0].end_ms - OVERLAP_SLACK_MS
        }) {
            let detail = format!(
                "{} starts {:.3} ms before {} ends",
                describe(t, pair[1]),
                pair[0].end_ms - pair[1].start_ms,
                describe(t, pair[0])
            );
            return TraceCheck::new(ONE_AT_A_TIME, Outcome::Failed, detail);
        }
        counted.push(format!("{} {}", copies.len(), kind.label()));
    }
    let detail = format!(
        "{} copies, none overlapping another of its direction{}",
        counted.join(" and "),
        match staged {
            0 => String::new(),
            n => format!(" ({n} staged from pageable memory left out)"),
        }
    );
    TraceCheck::new(ONE_AT_A_TIME, Outcome::Passed, detail)
}

fn copy_durations(t: &Timeline) -> TraceCheck {
    let Some(rates) = t.reference.rates else {
        let why = "no copy rates were measured for this schedule";
        return TraceCheck::new(DURATIONS, Outcome::NotApplicable, why);
    };
    let (htod_slowest, dtoh_slowest) = slowest_shared_rates(&rates);
    let mut checked = 0;
    let mut skipped = 0;
    for op in &t.ops {
        let (alone, shared) = match op.kind {
            OpKind::HtoD => (rates.htod_gbps, htod_slowest),
            OpKind::DtoH => (rates.dtoh_gbps, dtoh_slowest),
            OpKind::Kernel | OpKind::DtoD | OpKind::Memset | OpKind::Host => continue,
        };
        // The driver stages a pageable copy through its own buffers: no link rate holds it.
        let Some(bytes) = op.bytes.filter(|_| !op.pageable) else {
            continue;
        };
        if bytes < LARGE_COPY_BYTES {
            skipped += 1;
            continue;
        }
        let (fastest, slowest) = (ms_at(bytes, alone), ms_at(bytes, shared));
        let (low, high) = (fastest.min(slowest), fastest.max(slowest));
        let took = op.end_ms - op.start_ms;
        if took < low * (1.0 - TOLERANCE) || took > high * (1.0 + TOLERANCE) {
            let detail = format!(
                "{} took {took:.3} ms for {bytes} bytes; the measured rates allow \
                 {low:.3}–{high:.3} ms ± {:.0}%",
                describe(t, op),
                TOLERANCE * 100.0
            );
            return TraceCheck::new(DURATIONS, Outcome::Failed, detail);
        }
        checked += 1;
    }
    let skipped = match skipped {
        0 => String::new(),
        n => format!("; {n} copies under 8 MiB not checked"),
    };
    let detail = format!(
        "{checked} copies within {:.0}% of their bytes over HtoD {:.1}–{:.1} GB/s and \
         DtoH {:.1}–{:.1} GB/s (from the rate while both directions run to the rate \
         alone){skipped}",
        TOLERANCE * 100.0,
        htod_slowest.min(rates.htod_gbps),
        htod_slowest.max(rates.htod_gbps),
        dtoh_slowest.min(rates.dtoh_gbps),
        dtoh_slowest.max(rates.dtoh_gbps)
    );
    let outcome = match checked {
        0 => Outcome::NotApplicable,
        _ => Outcome::Passed,
    };
    TraceCheck::new(DURATIONS, outcome, detail)
}

/// The slowest each direction runs while the other is busy: the smaller of its rate
/// measured with both directions copying at once and what the both-ways total leaves it
/// when the other direction runs at its full one-way rate (the link does not always
/// split evenly: in a pipeline the copies out often keep nearly their one-way rate).
fn slowest_shared_rates(r: &CopyRates) -> (f64, f64) {
    let htod = r.htod_shared_gbps.min(r.both_gbps - r.dtoh_gbps);
    (htod, r.dtoh_shared_gbps.min(r.both_gbps - r.htod_gbps))
}

/// The period of back-to-back iteration `i` (from 1): the median, over its operations,
/// of how long after its twin in iteration `i - 1` (the same stream, kind and place on
/// its stream) each one ended. An engine serves the streams in an order of its own, so
/// one operation of an iteration may end well after the rest; that moves one twin's
/// distance, not the median. Falls back to the distance between the iterations' last
/// ends where no operation has a twin.
fn period(t: &Timeline, i: usize) -> Option<f64> {
    // Each operation of `iteration` on `stream` of `kind`, in the order they ran.
    let ends = |iteration: usize, stream: usize, kind: OpKind| {
        let mut ops: Vec<&TimelineOp> = (t.ops.iter())
            .filter(|op| op.iteration == iteration && op.stream == stream && op.kind == kind)
            .collect();
        ops.sort_by(|a, b| a.start_ms.total_cmp(&b.start_ms));
        ops.into_iter().map(|op| op.end_ms).collect::<Vec<f64>>()
    };
    let mut kinds: Vec<(usize, OpKind)> = (t.ops.iter())
        .filter(|op| op.iteration == i && op.kind.on_gpu())
        .map(|op| (op.stream, op.kind))
        .collect();
    kinds.sort_by_key(|&(stream, kind)| (stream, kind as u8));
    kinds.dedup();
    let distances: Vec<f64> = (kinds.into_iter())
        .flat_map(|(stream, kind)| {
            let (now, before) = (ends(i, stream, kind), ends(i - 1, stream, kind));
            now.into_iter()
                .zip(before)
                .map(|(a, b)| a - b)
                .collect::<Vec<f64>>()
        })
        .collect();
    let last_end = |i: usize| {
        let ends = t.ops.iter().filter(|op| op.iteration == i);
        ends.map(|op| op.end_ms).max_by(f64::total_cmp)
    };
    match Series::new(distances) {
        Some(d) => Some(d.median()),
        None => Some(last_end(i)? - last_end(i - 1)?),
    }
}

/// The traced time to compare with the timed one, and what it is.
fn traced_ms(t: &Timeline) -> Option<(f64, String)> {
    if t.reference.back_to_back && t.iterations >= 3 {
        let middle = t.iterations / 2;
        let what = format!("the period of iteration {} of {}", middle + 1, t.iterations);
        return Some((period(t, middle)?, what));
    }
    let (start, end) = extent(t)?;
    let per_iteration = (end - start) / t.iterations.max(1) as f64;
    Some((per_iteration, "the traced span".into()))
}

fn span(t: &Timeline) -> TraceCheck {
    let timed = t.reference.timed_ms;
    let Some((traced, what)) = traced_ms(t) else {
        return TraceCheck::new(SPAN, Outcome::Failed, "the timeline has no operations");
    };
    let off = traced / timed - 1.0;
    let detail = format!(
        "{what}, {traced:.3} ms, is {:+.1}% of the fastest timed {timed:.3} ms (allowed ±{:.0}%)",
        off * 100.0,
        TOLERANCE * 100.0
    );
    TraceCheck::new(SPAN, Outcome::of(off.abs() <= TOLERANCE), detail)
}

#[cfg(test)]
mod tests;
