//! What every traced timeline shows, and the checks it is held to against what the same
//! run measured.
//!
//! From the GPU's own records (CUPTI), each engine's busy time (the union of its
//! operations' intervals: HtoD copy engine, SMs, DtoH copy engine) and how long both copy
//! directions ran at once ([`Occupancy`]). Iterations cannot run, on average, faster
//! than their busiest engine, nor than their busiest stream (a stream runs its
//! operations one after another, so a stream that must copy its chunk out before copying
//! the next one in waits for it): each one's busy time per iteration, over the
//! iterations that ran as timed ones do, is a bound no correct measurement of the same
//! schedule beats under the same traffic ([`busiest_bound`]).
//!
//! A timeline that fails a check after its retraces shows a machine disturbed by traffic
//! the run cannot see (a shared link): it is marked "disturbed" and gives no bound, and
//! the run goes on (`--strict` makes it fail the run). The checks:
//!
//! 1. No two copies in the same direction overlap: each direction has one copy engine.
//! 2. Each copy's duration lies between its bytes over its direction's rate alone and
//!    its bytes over its direction's rate while both directions run (how much of it ran
//!    while the other direction was busy decides where), within [`TOLERANCE`]; both rates
//!    measured over the same chunks in the same run. Copies under [`MIN_CHECKED_BYTES`]
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
//! check applies to them.
//!
//! From the same records, every timeline is explained: how much copies and kernels
//! overlapped, how long every engine sat idle while work was queued, each operation's
//! wait from ready to start ([`Flow`]), and the concurrency breaks ([`breaks`]): any
//! operation on the legacy NULL stream, any synchronous copy or memset, any copy from or
//! to pageable memory, any host call that waited for the GPU, each with its wait, how long
//! the rest of the GPU sat idle while it ran and what it held back.
use serde::{Deserialize, Serialize};

use super::pipeline::SLACK;
use crate::saved::timeline::{CopyRates, Engine, Lane, OpKind, Timeline, TimelineOp, TraceSource};
use crate::stats::Series;

/// Relative tolerance of the duration and span checks.
pub const TOLERANCE: f64 = 0.15;
/// Copies smaller than this are not held to the copy rates: their fixed costs (a few
/// microseconds, more while CUPTI records them) reach the tolerance.
pub const MIN_CHECKED_BYTES: u64 = 8 << 20;
/// Overlap allowed between two copies of one direction (timestamp granularity).
const OVERLAP_SLACK_MS: f64 = 0.001;

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Passed,
    Failed,
    NotApplicable,
}

/// One check on one timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceCheck {
    pub name: String,
    pub outcome: Outcome,
    pub detail: String,
}

/// Every check on one timeline, and its engines' occupancy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    #[serde(default)]
    pub breaks: Vec<Break>,
}

impl TraceChecks {
    pub fn passed(&self) -> bool {
        !self.disturbed
    }

    /// The per-iteration bound of the busiest engine or stream, from an undisturbed trace
    /// only.
    pub fn busiest_bound(&self) -> Option<BusiestBound> {
        (!self.disturbed)
            .then_some(self.occupancy.as_ref())
            .flatten()
            .map(|o| o.bound)
    }

    /// The failed checks, one line each.
    pub fn failures(&self) -> Vec<String> {
        (self.checks.iter())
            .filter(|c| c.outcome == Outcome::Failed)
            .map(|c| format!("{} — {}: {}", self.title, c.name, c.detail))
            .collect()
    }
}

/// Check `t`.
pub fn check(t: &Timeline) -> TraceChecks {
    let gpu_records = t.source == TraceSource::Cupti;
    let not_applicable = |name: &str| TraceCheck {
        name: name.to_owned(),
        outcome: Outcome::NotApplicable,
        detail: "event brackets include the time an operation waited for its engine".into(),
    };
    let checks = vec![
        if gpu_records {
            one_copy_at_a_time(t)
        } else {
            not_applicable(ONE_AT_A_TIME)
        },
        if gpu_records {
            copy_durations(t)
        } else {
            not_applicable(DURATIONS)
        },
        span(t),
    ];
    let occupancy = gpu_records.then(|| occupancy(t)).flatten();
    let mut checks = checks;
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

/// Why an operation breaks the concurrency of the streams around it (the CUDA
/// Handbook's 6.5.3, and the rules profilers apply to a timeline).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BreakKind {
    /// On the legacy NULL stream: it waits for the earlier work of every blocking stream
    /// of its context, and their later work waits for it.
    NullStream,
    /// A copy or memset issued with a call that takes no stream and returns when it is
    /// done: the host issues nothing meanwhile.
    Synchronous,
    /// A copy from or to pageable host memory: the driver stages it through a pinned
    /// buffer of its own, and the host waits for the staging.
    Pageable,
    /// A host call that waits for the GPU (a free, a wait on an event): nothing is issued
    /// while it waits.
    HostCall,
}

impl BreakKind {
    pub fn label(self) -> &'static str {
        match self {
            BreakKind::NullStream => "NULL-stream operation",
            BreakKind::Synchronous => "synchronous",
            BreakKind::Pageable => "pageable host memory",
            BreakKind::HostCall => "host call waiting for the GPU",
        }
    }
}

/// One operation that breaks concurrency, and what it did to the rest of the GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Break {
    pub kinds: Vec<BreakKind>,
    pub op: OpKind,
    /// Its row: "the NULL stream", "stream 8", "the host".
    pub row: String,
    pub iteration: usize,
    /// The API call that issued it, where the schedule names it.
    pub call: Option<String>,
    /// How long it waited from ready (issued, its stream's earlier work done) to start:
    /// on the NULL stream, for every blocking stream's earlier work.
    pub waited_ms: f64,
    pub start_ms: f64,
    pub end_ms: f64,
    /// How long, while it ran, no other operation ran on the GPU.
    pub alone_ms: f64,
    /// Operations that were ready before it ended (issued, their stream's earlier work
    /// done) and started only as it ended: what it held back.
    pub held_back: usize,
}

/// An operation that starts within this of a break's end, having waited, waited for it.
pub const HELD_BACK_MS: f64 = 0.02;

impl Break {
    /// In words, e.g. "HtoD on the NULL stream (iteration 2, cuMemcpyHtoDAsync),
    /// NULL-stream operation: waited 0.4100 ms to start, took 0.3100 ms, the rest of the
    /// GPU idle 0.3000 ms of it; held back 1 operation that was ready".
    pub fn describe(&self) -> String {
        let kinds: Vec<&str> = self.kinds.iter().map(|k| k.label()).collect();
        // A host call is named by its call; an operation by its kind, with its call.
        let (what, call) = match (&self.call, self.op) {
            (Some(c), OpKind::Host) => (c.clone(), String::new()),
            (c, op) => (
                op.label().to_owned(),
                c.as_ref().map_or(String::new(), |c| format!(", {c}")),
            ),
        };
        let held = match self.held_back {
            0 => String::new(),
            1 => "; held back 1 operation that was ready".to_owned(),
            n => format!("; held back {n} operations that were ready"),
        };
        format!(
            "{} on {} (iteration {}{call}), {}: waited {:.4} ms to start, took {:.4} ms, the \
             rest of the GPU idle {:.4} ms of it{held}",
            what,
            self.row,
            self.iteration + 1,
            kinds.join(", "),
            self.waited_ms,
            self.end_ms - self.start_ms,
            self.alone_ms,
        )
    }
}

/// Every operation of `t` that breaks concurrency: one on the NULL stream, a synchronous
/// copy or memset, a copy from or to pageable memory, a host call that waited for the
/// GPU; each with how long the rest of the GPU sat idle while it ran and how many ready
/// operations it held back.
pub fn breaks(t: &Timeline) -> Vec<Break> {
    (t.ops.iter().enumerate())
        .filter_map(|(i, op)| {
            let kinds: Vec<BreakKind> = [
                (
                    t.lane(op.stream) == Some(Lane::NullStream),
                    BreakKind::NullStream,
                ),
                (op.synchronous, BreakKind::Synchronous),
                (op.pageable, BreakKind::Pageable),
                (op.kind == OpKind::Host, BreakKind::HostCall),
            ]
            .into_iter()
            .filter_map(|(is, kind)| is.then_some(kind))
            .collect();
            if kinds.is_empty() {
                return None;
            }
            let others: Vec<&TimelineOp> = (t.ops.iter().enumerate())
                .filter(|&(j, other)| j != i && other.kind.on_gpu())
                .map(|(_, other)| other)
                .collect();
            let running = intersection(
                &union(others.iter().map(|o| (o.start_ms, o.end_ms)).collect()),
                &[(op.start_ms, op.end_ms)],
            );
            let alone = length(&gaps(&running, op.start_ms, op.end_ms));
            let held_back = (others.iter())
                .filter(|o| {
                    o.ready_ms
                        .is_some_and(|r| r < op.end_ms && o.start_ms - r > HELD_BACK_MS)
                        && o.start_ms >= op.end_ms - HELD_BACK_MS
                        && o.start_ms <= op.end_ms + HELD_BACK_MS
                })
                .count();
            Some(Break {
                kinds,
                op: op.kind,
                row: t.lane(op.stream).map_or_else(
                    || format!("stream {}", op.stream + 1),
                    |l| format!("the {}", l.label()),
                ),
                iteration: op.iteration,
                call: op.call.clone(),
                waited_ms: op.ready_ms.map_or(0.0, |r| (op.start_ms - r).max(0.0)),
                start_ms: op.start_ms,
                end_ms: op.end_ms,
                alone_ms: alone,
                held_back,
            })
        })
        .collect()
}

/// The breaks of a timeline in one line each, or the line saying there are none.
pub fn describe_breaks(breaks: &[Break]) -> Vec<String> {
    if breaks.is_empty() {
        return vec![
            "no concurrency breaks: nothing on the NULL stream, no synchronous copy or memset, \
             no pageable copy, no host call waiting for the GPU"
                .to_owned(),
        ];
    }
    breaks
        .iter()
        .map(|b| format!("concurrency break: {}", b.describe()))
        .collect()
}

/// What runs one operation at a time: one of the GPU's engines, or a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Resource {
    Engine(Engine),
    /// 0-based stream index.
    Stream(usize),
}

impl Resource {
    pub fn label(self) -> String {
        match self {
            Resource::Engine(e) => e.label().to_owned(),
            Resource::Stream(s) => format!("stream {}", s + 1),
        }
    }

    /// Whether `op` runs on it.
    fn runs(self, op: &TimelineOp) -> bool {
        match self {
            Resource::Engine(e) => op.kind.engine() == Some(e),
            Resource::Stream(s) => op.stream == s,
        }
    }
}

/// No correct timed iteration of a schedule beats its busiest engine's or stream's time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BusiestBound {
    /// The busy time per iteration of the busiest engine or stream, over the steady
    /// iterations ([`busiest_bound`]).
    pub ms: f64,
    pub resource: Resource,
}

/// A schedule's busiest bound from traced batches, each traced right after one of its
/// timed batches: their median, its resource and noise, and how far the timed batches
/// sat above it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TracedBound {
    pub ms: f64,
    /// The busiest engine or stream of the batch nearest the median.
    pub resource: Resource,
    /// Relative noise of the batches' bounds ([`Series::noise`]).
    pub noise: f64,
    pub batches: usize,
    /// The median over the timed batches of each one's time over the bound of the batch
    /// traced right after it, under the same traffic on a shared link: 1 is the bound.
    pub timed_over_bound: f64,
}

/// The busiest bound of a schedule timed in batches `timed_ms`, each followed by a
/// traced batch whose bound is the same index of `traced`; `None` unless every timed
/// batch has its traced one.
pub fn traced_bound(timed_ms: &[f64], traced: &[BusiestBound]) -> Option<TracedBound> {
    if traced.len() != timed_ms.len() {
        return None;
    }
    let series = Series::new(traced.iter().map(|b| b.ms).collect())?;
    let median = series.median();
    let nearest =
        (traced.iter()).min_by(|a, b| (a.ms - median).abs().total_cmp(&(b.ms - median).abs()))?;
    let ratios = Series::new(
        (timed_ms.iter().zip(traced))
            .map(|(t, b)| t / b.ms)
            .collect(),
    )?;
    Some(TracedBound {
        ms: median,
        resource: nearest.resource,
        noise: series.noise(),
        batches: traced.len(),
        timed_over_bound: ratios.median(),
    })
}

/// How busy each engine was over a traced timeline, from the GPU's own records.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Occupancy {
    /// From the first operation ready to the last one's end.
    pub span_ms: f64,
    /// Each engine's busy time over the span: the union of its operations' intervals.
    pub htod_busy_ms: f64,
    pub sms_busy_ms: f64,
    pub dtoh_busy_ms: f64,
    /// How long copies in both directions ran at once.
    pub both_copying_ms: f64,
    pub bound: BusiestBound,
    /// How the work flowed between the engines.
    #[serde(default)]
    pub flow: Flow,
}

/// How a traced timeline's work flowed, from the GPU's own records: how much copying and
/// computing overlapped, how long every engine sat idle while work was waiting, and how
/// long operations waited from ready to start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Flow {
    /// Time either copy engine was busy (the union of both).
    pub copying_ms: f64,
    /// Time a copy and a kernel ran at once.
    pub copy_kernel_overlap_ms: f64,
    /// Time no engine ran while an operation was ready (issued, its stream's earlier
    /// work done), and in how many separate gaps.
    pub idle_while_queued_ms: f64,
    pub idle_gaps: usize,
    /// From ready to start, over the operations with a ready time: the mean, and the
    /// longest with which operation had it.
    pub mean_queue_wait_ms: f64,
    pub longest_queue_wait_ms: f64,
    pub longest_wait: Option<WaitingOp>,
}

/// Which operation: its kind, stream (0-based) and iteration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WaitingOp {
    pub kind: OpKind,
    pub stream: usize,
    pub iteration: usize,
}

impl Flow {
    /// In words, e.g. "kernels ran beside a copy 93% of their time, copies beside a
    /// kernel 12% of theirs; every engine idle with work queued 0.0120 ms (3 gaps);
    /// queue wait mean 0.4100 ms, longest 1.2400 ms (HtoD on stream 2, iteration 1)".
    pub fn describe(&self, sms_busy_ms: f64) -> String {
        let share = |part: f64, whole: f64| {
            if whole > 0.0 {
                format!("{:.0}%", 100.0 * part / whole)
            } else {
                "–".to_owned()
            }
        };
        let longest = self.longest_wait.map_or(String::new(), |w| {
            format!(
                " ({} on stream {}, iteration {})",
                w.kind.label(),
                w.stream + 1,
                w.iteration + 1
            )
        });
        format!(
            "kernels ran beside a copy {} of their time, copies beside a kernel {} of theirs; \
             every engine idle with work queued {:.4} ms ({} gap{}); queue wait mean {:.4} ms, \
             longest {:.4} ms{longest}",
            share(self.copy_kernel_overlap_ms, sms_busy_ms),
            share(self.copy_kernel_overlap_ms, self.copying_ms),
            self.idle_while_queued_ms,
            self.idle_gaps,
            if self.idle_gaps == 1 { "" } else { "s" },
            self.mean_queue_wait_ms,
            self.longest_queue_wait_ms,
        )
    }
}

impl Occupancy {
    pub fn busy_ms(&self, engine: Engine) -> f64 {
        match engine {
            Engine::HtoD => self.htod_busy_ms,
            Engine::Sms => self.sms_busy_ms,
            Engine::DtoH => self.dtoh_busy_ms,
        }
    }

    /// The share of the span `engine` was busy.
    pub fn share(&self, engine: Engine) -> f64 {
        self.busy_ms(engine) / self.span_ms
    }

    /// The engine busy the largest share of the span.
    pub fn busiest_engine(&self) -> Engine {
        (Engine::ALL.into_iter())
            .max_by(|a, b| self.share(*a).total_cmp(&self.share(*b)))
            .expect("three engines")
    }

    fn bound_kind(busiest: Engine) -> &'static str {
        if busiest == Engine::Sms {
            "compute-bound"
        } else {
            "copy-bound"
        }
    }

    /// The verdict, e.g. "copy-bound: HtoD copy engine busy 94%".
    pub fn verdict(&self) -> String {
        let busiest = self.busiest_engine();
        format!(
            "{}: {} busy {:.0}%",
            Self::bound_kind(busiest),
            busiest.label(),
            100.0 * self.share(busiest)
        )
    }

    /// In words, e.g. "HtoD copy engine busy 94% of the traced time, SMs 7%, DtoH copy
    /// engine 93%, both directions at once 88%: copy-bound; an iteration is no faster
    /// than 2.801 ms (its busiest engine or stream: HtoD copy engine)".
    pub fn describe(&self) -> String {
        let busiest = self.busiest_engine();
        let kind = Self::bound_kind(busiest);
        let others: Vec<String> = (Engine::ALL.into_iter())
            .filter(|e| *e != busiest)
            .map(|e| format!("{} {:.0}%", e.label(), 100.0 * self.share(e)))
            .collect();
        format!(
            "{} busy {:.0}% of the traced time, {}, both copy directions at once {:.0}%: \
             {kind}; an iteration is no faster than {:.4} ms (its busiest engine or stream: \
             {})",
            busiest.label(),
            100.0 * self.share(busiest),
            others.join(", "),
            100.0 * self.both_copying_ms / self.span_ms,
            self.bound.ms,
            self.bound.resource.label()
        )
    }
}

/// Disjoint, ascending intervals covering `intervals`.
fn union(mut intervals: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f64, f64)> = Vec::with_capacity(intervals.len());
    for (start, end) in intervals {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

fn length(intervals: &[(f64, f64)]) -> f64 {
    intervals.iter().fold(0.0, |total, (a, b)| total + (b - a))
}

/// The parts of `[start, end]` that disjoint, ascending `busy` intervals leave free.
fn gaps(busy: &[(f64, f64)], start: f64, end: f64) -> Vec<(f64, f64)> {
    let mut free = Vec::new();
    let mut at = start;
    for &(a, b) in busy {
        if a > at {
            free.push((at, a.min(end)));
        }
        at = at.max(b);
    }
    if end > at {
        free.push((at, end));
    }
    free
}

/// Where two sets of disjoint, ascending intervals overlap.
fn intersection(a: &[(f64, f64)], b: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        let (lo, hi) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
        if hi > lo {
            out.push((lo, hi));
        }
        if a[i].1 < b[j].1 { i += 1 } else { j += 1 }
    }
    out
}

/// How long two sets of disjoint, ascending intervals overlap.
fn overlap(a: &[(f64, f64)], b: &[(f64, f64)]) -> f64 {
    let (mut i, mut j, mut total) = (0, 0, 0.0);
    while i < a.len() && j < b.len() {
        total += (a[i].1.min(b[j].1) - a[i].0.max(b[j].0)).max(0.0);
        if a[i].1 < b[j].1 { i += 1 } else { j += 1 }
    }
    total
}

/// The busy intervals of `resource` among `ops`.
fn busy<'a>(ops: impl Iterator<Item = &'a TimelineOp>, resource: Resource) -> Vec<(f64, f64)> {
    union(
        ops.filter(|op| resource.runs(op))
            .map(|op| (op.start_ms, op.end_ms))
            .collect(),
    )
}

/// The busy time per iteration of `t`'s busiest engine or stream, over its steady
/// iterations: back to back, the first iteration's copies in run before any copy out
/// shares the link (fill) and the last one's copies out after (drain), so the iterations
/// between count, which run as the timed ones do; otherwise every iteration. Each
/// engine and stream runs one operation at a time, so the steady iterations together
/// take at least its busy time over their operations: per iteration, the largest of
/// these is the bound. `None` without operations.
pub fn busiest_bound(t: &Timeline) -> Option<BusiestBound> {
    let steady = if t.reference.back_to_back && t.iterations >= 3 {
        1..t.iterations - 1
    } else {
        0..t.iterations.max(1)
    };
    let count = steady.len() as f64;
    (Engine::ALL.into_iter().map(Resource::Engine))
        .chain((0..t.streams).map(Resource::Stream))
        .map(|resource| {
            let ops = t.ops.iter().filter(|op| steady.contains(&op.iteration));
            let ms = length(&busy(ops, resource)) / count;
            BusiestBound { ms, resource }
        })
        .max_by(|a, b| a.ms.total_cmp(&b.ms))
        .filter(|b| b.ms > 0.0)
}

/// The occupancy of `t`'s engines; `None` without operations.
pub fn occupancy(t: &Timeline) -> Option<Occupancy> {
    let start = (t.ops.iter())
        .map(|op| op.ready_ms.unwrap_or(op.start_ms).min(op.start_ms))
        .min_by(f64::total_cmp)?;
    let end = t.ops.iter().map(|op| op.end_ms).max_by(f64::total_cmp)?;
    let [htod, sms, dtoh] =
        [Engine::HtoD, Engine::Sms, Engine::DtoH].map(|e| busy(t.ops.iter(), Resource::Engine(e)));
    let bound = busiest_bound(t)?;
    let copying = union([htod.clone(), dtoh.clone()].concat());
    // Device-to-device copies and memsets run on no engine of the three, but they are
    // the GPU's work all the same.
    let elsewhere: Vec<(f64, f64)> = (t.ops.iter())
        .filter(|op| op.kind.on_gpu() && op.kind.engine().is_none())
        .map(|op| (op.start_ms, op.end_ms))
        .collect();
    let any_busy = union([copying.clone(), sms.clone(), elsewhere].concat());
    let waiting = union(
        (t.ops.iter())
            .filter(|op| op.kind.on_gpu())
            .filter_map(|op| op.ready_ms.map(|r| (r, op.start_ms)))
            .filter(|(r, s)| s > r)
            .collect(),
    );
    let idle = gaps(&any_busy, start, end);
    let idle_while_queued = intersection(&idle, &waiting);
    let waits: Vec<(f64, &TimelineOp)> = (t.ops.iter())
        .filter(|op| op.kind.on_gpu())
        .filter_map(|op| op.ready_ms.map(|r| ((op.start_ms - r).max(0.0), op)))
        .collect();
    let longest = waits.iter().max_by(|a, b| a.0.total_cmp(&b.0));
    let flow = Flow {
        copy_kernel_overlap_ms: overlap(&copying, &sms),
        copying_ms: length(&copying),
        idle_while_queued_ms: length(&idle_while_queued),
        idle_gaps: idle_while_queued.len(),
        mean_queue_wait_ms: if waits.is_empty() {
            0.0
        } else {
            waits.iter().map(|w| w.0).sum::<f64>() / waits.len() as f64
        },
        longest_queue_wait_ms: longest.map_or(0.0, |w| w.0),
        longest_wait: longest.map(|(_, op)| WaitingOp {
            kind: op.kind,
            stream: op.stream,
            iteration: op.iteration,
        }),
    };
    Some(Occupancy {
        span_ms: end - start,
        htod_busy_ms: length(&htod),
        sms_busy_ms: length(&sms),
        dtoh_busy_ms: length(&dtoh),
        both_copying_ms: overlap(&htod, &dtoh),
        bound,
        flow,
    })
}

const BUSIEST: &str = "busiest engine or stream no slower than the timed median";

fn busiest_engine(o: &Occupancy, median_ms: f64) -> TraceCheck {
    let ok = o.bound.ms <= median_ms * (1.0 + SLACK);
    TraceCheck {
        name: BUSIEST.into(),
        outcome: if ok { Outcome::Passed } else { Outcome::Failed },
        detail: format!(
            "{} was busy {:.4} ms per steady traced iteration; the timed median is \
             {median_ms:.4} ms{}",
            o.bound.resource.label(),
            o.bound.ms,
            if ok {
                ""
            } else {
                ": the trace met a busier link than the timed runs"
            }
        ),
    }
}

const ONE_AT_A_TIME: &str = "one copy per direction at a time";
const DURATIONS: &str = "copy durations match the measured rates";
const SPAN: &str = "traced time matches the fastest timed sample";

fn describe(op: &TimelineOp) -> String {
    format!(
        "{} on stream {} (iteration {})",
        op.kind.label(),
        op.stream + 1,
        op.iteration + 1
    )
}

/// No two copies of one direction overlap. A copy from pageable memory is left out: the
/// driver stages it through pinned buffers chunk by chunk, and its record spans every
/// chunk while the copy engine serves other copies between them.
fn one_copy_at_a_time(t: &Timeline) -> TraceCheck {
    let mut counted = Vec::new();
    let staged = t.ops.iter().filter(|op| op.pageable).count();
    for kind in [OpKind::HtoD, OpKind::DtoH] {
        let mut copies: Vec<&TimelineOp> = (t.ops.iter())
            .filter(|op| op.kind == kind && !op.pageable)
            .collect();
        copies.sort_by(|a, b| a.start_ms.total_cmp(&b.start_ms));
        for pair in copies.windows(2) {
            if pair[1].start_ms < pair[0].end_ms - OVERLAP_SLACK_MS {
                return TraceCheck {
                    name: ONE_AT_A_TIME.into(),
                    outcome: Outcome::Failed,
                    detail: format!(
                        "{} starts {:.3} ms before {} ends",
                        describe(pair[1]),
                        pair[0].end_ms - pair[1].start_ms,
                        describe(pair[0])
                    ),
                };
            }
        }
        counted.push(format!("{} {}", copies.len(), kind.label()));
    }
    TraceCheck {
        name: ONE_AT_A_TIME.into(),
        outcome: Outcome::Passed,
        detail: format!(
            "{} copies, none overlapping another of its direction{}",
            counted.join(" and "),
            if staged > 0 {
                format!(" ({staged} staged from pageable memory left out)")
            } else {
                String::new()
            }
        ),
    }
}

fn copy_durations(t: &Timeline) -> TraceCheck {
    let Some(rates) = t.reference.rates else {
        return TraceCheck {
            name: DURATIONS.into(),
            outcome: Outcome::NotApplicable,
            detail: "no copy rates were measured for this schedule".into(),
        };
    };
    let (htod_slowest, dtoh_slowest) = slowest_shared_rates(&rates);
    let mut checked = 0;
    let mut skipped = 0;
    for op in &t.ops {
        let (Some(bytes), Some((alone, shared))) = (
            op.bytes,
            match op.kind {
                OpKind::HtoD => Some((rates.htod_gbps, htod_slowest)),
                OpKind::DtoH => Some((rates.dtoh_gbps, dtoh_slowest)),
                OpKind::Kernel | OpKind::DtoD | OpKind::Memset | OpKind::Host => None,
            },
        ) else {
            continue;
        };
        // The driver stages a pageable copy through its own buffers: no link rate holds it.
        if op.pageable {
            continue;
        }
        if bytes < MIN_CHECKED_BYTES {
            skipped += 1;
            continue;
        }
        let fastest = bytes as f64 / (alone * 1e6);
        let slowest = bytes as f64 / (shared * 1e6);
        let (low, high) = (fastest.min(slowest), fastest.max(slowest));
        let took = op.end_ms - op.start_ms;
        if took < low * (1.0 - TOLERANCE) || took > high * (1.0 + TOLERANCE) {
            return TraceCheck {
                name: DURATIONS.into(),
                outcome: Outcome::Failed,
                detail: format!(
                    "{} took {took:.3} ms for {bytes} bytes; the measured rates allow \
                     {low:.3}–{high:.3} ms ± {:.0}%",
                    describe(op),
                    TOLERANCE * 100.0
                ),
            };
        }
        checked += 1;
    }
    let skipped = if skipped > 0 {
        format!("; {skipped} copies under 8 MiB not checked")
    } else {
        String::new()
    };
    TraceCheck {
        name: DURATIONS.into(),
        outcome: if checked > 0 {
            Outcome::Passed
        } else {
            Outcome::NotApplicable
        },
        detail: format!(
            "{checked} copies within {:.0}% of their bytes over HtoD {:.1}–{:.1} GB/s and \
             DtoH {:.1}–{:.1} GB/s (from the rate while both directions run to the rate \
             alone){skipped}",
            TOLERANCE * 100.0,
            htod_slowest.min(rates.htod_gbps),
            htod_slowest.max(rates.htod_gbps),
            dtoh_slowest.min(rates.dtoh_gbps),
            dtoh_slowest.max(rates.dtoh_gbps)
        ),
    }
}

/// The slowest each direction runs while the other is busy: the smaller of its rate
/// measured with both directions copying at once and what the both-ways total leaves it
/// when the other direction runs at its full one-way rate (the link does not always
/// split evenly: in a pipeline the copies out often keep nearly their one-way rate).
fn slowest_shared_rates(rates: &CopyRates) -> (f64, f64) {
    (
        rates
            .htod_shared_gbps
            .min(rates.both_gbps - rates.dtoh_gbps),
        rates
            .dtoh_shared_gbps
            .min(rates.both_gbps - rates.htod_gbps),
    )
}

/// The latest end of iteration `i`'s operations.
fn iteration_end(t: &Timeline, i: usize) -> Option<f64> {
    (t.ops.iter())
        .filter(|op| op.iteration == i)
        .map(|op| op.end_ms)
        .max_by(f64::total_cmp)
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
    match Series::new(distances) {
        Some(d) => Some(d.median()),
        None => Some(iteration_end(t, i)? - iteration_end(t, i - 1)?),
    }
}

/// The traced time to compare with the timed one, and what it is.
fn traced_ms(t: &Timeline) -> Option<(f64, String)> {
    if t.reference.back_to_back && t.iterations >= 3 {
        let middle = t.iterations / 2;
        return Some((
            period(t, middle)?,
            format!("the period of iteration {} of {}", middle + 1, t.iterations),
        ));
    }
    let start = (t.ops.iter())
        .map(|op| op.ready_ms.unwrap_or(op.start_ms).min(op.start_ms))
        .min_by(f64::total_cmp)?;
    let end = t.ops.iter().map(|op| op.end_ms).max_by(f64::total_cmp)?;
    Some((
        (end - start) / t.iterations.max(1) as f64,
        "the traced span".into(),
    ))
}

fn span(t: &Timeline) -> TraceCheck {
    let timed = t.reference.timed_ms;
    let Some((traced, what)) = traced_ms(t) else {
        return TraceCheck {
            name: SPAN.into(),
            outcome: Outcome::Failed,
            detail: "the timeline has no operations".into(),
        };
    };
    let off = traced / timed - 1.0;
    TraceCheck {
        name: SPAN.into(),
        outcome: if off.abs() <= TOLERANCE {
            Outcome::Passed
        } else {
            Outcome::Failed
        },
        detail: format!(
            "{what}, {traced:.3} ms, is {:+.1}% of the fastest timed {timed:.3} ms (allowed ±{:.0}%)",
            off * 100.0,
            TOLERANCE * 100.0
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::saved::timeline::{CopyRates, TraceReference};

    const MIB32: u64 = 32 << 20;

    fn op(kind: OpKind, stream: usize, iteration: usize, start: f64, end: f64) -> TimelineOp {
        TimelineOp {
            stream,
            iteration,
            kind,
            ready_ms: Some(0.0),
            start_ms: start,
            end_ms: end,
            bytes: (kind != OpKind::Kernel).then_some(MIB32),
            pageable: false,
            synchronous: false,
            call: None,
        }
    }

    fn timeline(
        ops: Vec<TimelineOp>,
        timed_ms: f64,
        back_to_back: bool,
        iterations: usize,
    ) -> Timeline {
        Timeline {
            title: "t".into(),
            source: TraceSource::Cupti,
            streams: 4,
            other_lanes: Vec::new(),
            iterations,
            ops,
            reference: TraceReference {
                timed_ms,
                back_to_back,
                median_ms: None,
                rates: Some(CopyRates {
                    htod_gbps: 55.0,
                    dtoh_gbps: 55.0,
                    both_gbps: 96.0,
                    htod_shared_gbps: 48.0,
                    dtoh_shared_gbps: 48.0,
                }),
            },
            retraced: Vec::new(),
        }
    }

    /// 32 MiB takes 0.610 ms at 55 GB/s and 0.699 ms at 48 GB/s.
    fn serial_copies() -> Vec<TimelineOp> {
        vec![
            op(OpKind::HtoD, 0, 0, 0.0, 0.61),
            op(OpKind::HtoD, 1, 0, 0.61, 1.25),
            op(OpKind::Kernel, 0, 0, 0.62, 0.70),
            op(OpKind::DtoH, 0, 0, 0.70, 1.38),
        ]
    }

    #[test]
    fn a_clean_trace_passes_every_check() {
        let checks = check(&timeline(serial_copies(), 1.4, false, 1));
        assert!(checks.passed(), "{:?}", checks.failures());
        assert!(checks.checks.iter().all(|c| c.outcome == Outcome::Passed));
    }

    #[test]
    fn overlapping_copies_in_one_direction_fail() {
        let mut ops = serial_copies();
        ops[1].start_ms = 0.3;
        ops[1].end_ms = 0.91;
        let checks = check(&timeline(ops, 1.4, false, 1));
        let failures = checks.failures();
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].contains("HtoD on stream 2 (iteration 1) starts 0.310 ms before"));
    }

    #[test]
    fn a_copy_staged_from_pageable_memory_may_span_other_copies() {
        let mut ops = serial_copies();
        // The pageable copy's record spans its staged chunks; the pinned copy of stream 2
        // ran between two of them.
        ops[0].pageable = true;
        ops[0].end_ms = 1.0;
        let checks = check(&timeline(ops.clone(), 1.4, false, 1));
        let one = (checks.checks.iter())
            .find(|c| c.name == ONE_AT_A_TIME)
            .expect("the check ran");
        assert_eq!(one.outcome, Outcome::Passed, "{}", one.detail);
        assert!(
            one.detail
                .contains("1 staged from pageable memory left out")
        );
        // Two pinned copies overlapping still fail beside it.
        ops[3].kind = OpKind::HtoD;
        ops[3].start_ms = 1.0;
        let checks = check(&timeline(ops, 1.4, false, 1));
        assert!(
            checks
                .failures()
                .iter()
                .any(|f| f.contains("starts 0.250 ms before")),
            "{:?}",
            checks.failures()
        );
    }

    #[test]
    fn a_copy_slower_than_the_link_allows_fails() {
        let mut ops = serial_copies();
        ops[3].end_ms = 0.70 + 1.2;
        let checks = check(&timeline(ops, 1.9, false, 1));
        assert!(
            checks.failures()[0].contains("DtoH on stream 1"),
            "{:?}",
            checks.failures()
        );
    }

    #[test]
    fn the_span_or_the_middle_period_must_match_the_timed_time() {
        assert!(!check(&timeline(serial_copies(), 1.0, false, 1)).passed());
        // Three iterations back to back ending at 2, 3 and 5 ms: the middle period is 1.
        let ops = vec![
            op(OpKind::Kernel, 0, 0, 0.0, 2.0),
            op(OpKind::Kernel, 0, 1, 2.0, 3.0),
            op(OpKind::Kernel, 0, 2, 3.0, 5.0),
        ];
        assert!(check(&timeline(ops.clone(), 1.05, true, 3)).passed());
        assert!(!check(&timeline(ops, 1.5, true, 3)).passed());
        // Three streams, each iteration 1 ms after the one before, but the engine served
        // stream 3 last in the middle iteration: its last end moved 0.6 ms, its period
        // did not.
        let ops: Vec<TimelineOp> = (0..3)
            .flat_map(|i| {
                (0..3).map(move |s| {
                    let late = if (i, s) == (1, 2) { 0.6 } else { 0.0 };
                    let start = i as f64 + 0.3 * s as f64 + late;
                    op(OpKind::Kernel, s, i, start, start + 0.3)
                })
            })
            .collect();
        assert!(check(&timeline(ops, 1.0, true, 3)).passed());
    }

    #[test]
    fn occupancy_is_each_engines_union_and_bounds_the_iteration() {
        // serial_copies: HtoD busy 0–1.25, SMs 0.62–0.70, DtoH 0.70–1.38; span 0–1.38.
        let o = occupancy(&timeline(serial_copies(), 1.4, false, 1)).unwrap();
        assert!((o.span_ms - 1.38).abs() < 1e-12);
        assert!((o.htod_busy_ms - 1.25).abs() < 1e-12);
        assert!((o.sms_busy_ms - 0.08).abs() < 1e-12);
        assert!((o.dtoh_busy_ms - 0.68).abs() < 1e-12);
        // Both directions ran at once from 0.70 to 1.25.
        assert!((o.both_copying_ms - 0.55).abs() < 1e-12);
        // Stream 1 copies its chunk in, runs the kernel and copies it out one after
        // another: 0.61 + 0.08 + 0.68 ms, more than the HtoD engine's 1.25.
        assert_eq!(o.bound.resource, Resource::Stream(0));
        assert!((o.bound.ms - 1.37).abs() < 1e-12);
        assert!(
            o.describe().starts_with("HtoD copy engine busy 91%"),
            "{}",
            o.describe()
        );
        // Two iterations: per iteration, the HtoD engine is busy 1.5 / 2, the SMs 1.3 / 2,
        // stream 1 (1.0 + 0.7) / 2 and stream 2 (1.0 + 0.6) / 2.
        let ops = vec![
            op(OpKind::HtoD, 0, 0, 0.0, 1.0),
            op(OpKind::HtoD, 1, 0, 0.5, 1.5),
            op(OpKind::Kernel, 0, 1, 1.5, 2.2),
            op(OpKind::Kernel, 1, 1, 2.2, 2.8),
        ];
        let o = occupancy(&timeline(ops, 1.4, false, 2)).unwrap();
        assert_eq!(o.bound.resource, Resource::Stream(0));
        assert!((o.bound.ms - 0.85).abs() < 1e-12);
        assert!((o.htod_busy_ms - 1.5).abs() < 1e-12);
        // Back to back over five iterations, the three between fill and drain count: the
        // HtoD engine busy 0.9, 1.0 and 1.1 ms in them, 1.0 per iteration.
        let ops = (0..5)
            .map(|i| {
                let ms = [0.5, 0.9, 1.0, 1.1, 0.5][i];
                let start: f64 = [0.5, 0.9, 1.0, 1.1, 0.5][..i].iter().sum();
                op(OpKind::HtoD, 0, i, start, start + ms)
            })
            .collect();
        let o = occupancy(&timeline(ops, 1.0, true, 5)).unwrap();
        assert!((o.bound.ms - 1.0).abs() < 1e-12, "{}", o.bound.ms);
        // Back to back, fill and drain iterations give no bound: the middle one does.
        let ops = vec![
            op(OpKind::HtoD, 0, 0, 0.0, 0.5),
            op(OpKind::HtoD, 0, 1, 0.5, 1.5),
            op(OpKind::HtoD, 0, 2, 1.5, 2.0),
        ];
        let o = occupancy(&timeline(ops, 1.0, true, 3)).unwrap();
        assert!((o.bound.ms - 1.0).abs() < 1e-12);
        // Stream 1 copies in and runs its kernel in the first iteration, and only copies
        // in the middle one: its 1.0 ms then is the bound.
        let ops = vec![
            op(OpKind::HtoD, 1, 0, 0.0, 0.4),
            op(OpKind::HtoD, 0, 0, 0.4, 1.0),
            op(OpKind::Kernel, 0, 0, 1.0, 1.2),
            op(OpKind::HtoD, 0, 1, 1.2, 2.2),
            op(OpKind::HtoD, 0, 2, 2.2, 3.2),
            op(OpKind::Kernel, 1, 2, 3.2, 3.4),
        ];
        let waits = occupancy(&timeline(ops, 1.0, true, 3)).unwrap();
        assert_eq!(waits.bound.resource, Resource::Stream(0));
        assert!((waits.bound.ms - 1.0).abs() < 1e-12);
        assert_eq!(
            o.sms_busy_ms.to_bits(),
            0.0f64.to_bits(),
            "no negative zero"
        );
    }

    #[test]
    fn a_traced_bound_is_the_median_batch_and_pairs_each_timed_batch_with_its_trace() {
        let engine = |ms| BusiestBound {
            ms,
            resource: Resource::Engine(Engine::HtoD),
        };
        let stream = |ms| BusiestBound {
            ms,
            resource: Resource::Stream(1),
        };
        // The link slowed for the second pair: paired, each batch is 1.02×, 1.01× and
        // 1.03× its trace; unpaired, the median time over the median bound is 1.1 / 1.0.
        let timed = [1.02, 1.212, 1.1];
        let traced = [engine(1.0), stream(1.2), engine(1.068)];
        let b = traced_bound(&timed, &traced).unwrap();
        assert!((b.ms - 1.068).abs() < 1e-12);
        assert_eq!((b.resource, b.batches), (Resource::Engine(Engine::HtoD), 3));
        assert!((b.timed_over_bound - 1.02).abs() < 1e-12, "{b:?}");
        assert!(b.noise > 0.0);
        // A timed batch without its trace (no CUPTI) gives no bound.
        assert_eq!(traced_bound(&timed, &traced[..2]), None);
        assert_eq!(traced_bound(&timed, &[]), None);
    }

    #[test]
    fn flow_counts_overlap_idle_time_with_work_queued_and_queue_waits() {
        // serial_copies: copies 0–1.38 (HtoD 0–1.25, DtoH 0.70–1.38), kernel 0.62–0.70,
        // every op ready at 0.
        let o = occupancy(&timeline(serial_copies(), 1.4, false, 1)).unwrap();
        let f = o.flow;
        assert!((f.copying_ms - 1.38).abs() < 1e-12);
        assert!((f.copy_kernel_overlap_ms - 0.08).abs() < 1e-12);
        assert_eq!(f.idle_gaps, 0);
        // Waits: 0, 0.61, 0.62 and 0.70 ms.
        assert!((f.mean_queue_wait_ms - 1.93 / 4.0).abs() < 1e-12);
        assert!((f.longest_queue_wait_ms - 0.70).abs() < 1e-12);
        let w = f.longest_wait.unwrap();
        assert_eq!((w.kind, w.stream), (OpKind::DtoH, 0));
        // A kernel ready at 1.0 that starts at 1.5 after a copy ending at 1.0: half a
        // millisecond with every engine idle and work queued.
        let mut ops = vec![op(OpKind::HtoD, 0, 0, 0.0, 1.0)];
        let mut k = op(OpKind::Kernel, 0, 0, 1.5, 2.0);
        k.ready_ms = Some(1.0);
        ops.push(k);
        ops[0].ready_ms = Some(0.0);
        let f = occupancy(&timeline(ops, 2.0, false, 1)).unwrap().flow;
        assert!((f.idle_while_queued_ms - 0.5).abs() < 1e-12);
        assert_eq!(f.idle_gaps, 1);
        assert_eq!(f.copy_kernel_overlap_ms, 0.0);
        let said = f.describe(0.5);
        assert!(
            said.starts_with("kernels ran beside a copy 0% of their time"),
            "{said}"
        );
        assert!(said.contains("0.5000 ms (1 gap)"), "{said}");
        assert!(
            said.ends_with("(kernel on stream 1, iteration 1)"),
            "{said}"
        );
    }

    #[test]
    fn a_trace_slower_than_the_timed_median_is_disturbed_and_gives_no_bound() {
        let mut t = timeline(serial_copies(), 1.4, false, 1);
        t.reference.median_ms = Some(1.4);
        let checks = check(&t);
        assert!(checks.passed(), "{:?}", checks.failures());
        assert!((checks.busiest_bound().unwrap().ms - 1.37).abs() < 1e-12);
        t.reference.median_ms = Some(1.3);
        let checks = check(&t);
        assert!(checks.disturbed);
        assert!(checks.busiest_bound().is_none());
        assert!(
            checks.failures()[0].contains("busier link"),
            "{:?}",
            checks.failures()
        );
    }

    #[test]
    fn event_brackets_are_only_held_to_the_span() {
        let mut t = timeline(serial_copies(), 1.4, false, 1);
        t.ops[1].start_ms = 0.0;
        t.source = TraceSource::Events;
        let checks = check(&t);
        assert!(checks.passed());
        assert_eq!(checks.checks[0].outcome, Outcome::NotApplicable);
        assert_eq!(checks.checks[2].outcome, Outcome::Passed);
        assert!(checks.occupancy.is_none());
    }

    /// Two streams' copy in, kernel and copy out; with `null`, stream 2's copy in runs on
    /// the NULL stream (row 3) and both kernels wait for it.
    fn pipeline(null: bool) -> Timeline {
        let mut ops = vec![
            op(OpKind::HtoD, 0, 0, 0.0, 1.0),
            op(OpKind::HtoD, if null { 2 } else { 1 }, 0, 1.0, 2.0),
            op(OpKind::Kernel, 0, 0, if null { 2.0 } else { 1.0 }, 3.0),
            op(OpKind::Kernel, 1, 0, 2.0, 3.5),
            op(OpKind::DtoH, 0, 0, 3.0, 4.0),
            op(OpKind::DtoH, 1, 0, 4.0, 5.0),
        ];
        // Each op was ready when its stream's previous op ended.
        for (i, ready) in [0.0, 0.0, 1.0, 2.0, 3.0, 3.5].into_iter().enumerate() {
            ops[i].ready_ms = Some(ready);
        }
        let mut t = timeline(ops, 5.0, false, 1);
        t.streams = 2;
        if null {
            t.other_lanes = vec![Lane::NullStream];
        }
        t
    }

    #[test]
    fn a_clean_pipeline_has_no_breaks() {
        let t = pipeline(false);
        assert!(breaks(&t).is_empty());
        assert_eq!(
            describe_breaks(&check(&t).breaks),
            [describe_breaks(&[])[0].clone()]
        );
        assert!(describe_breaks(&[])[0].starts_with("no concurrency breaks"));
    }

    #[test]
    fn a_copy_on_the_null_stream_is_a_break_that_held_back_the_kernel_ready_before_it_ended() {
        let t = pipeline(true);
        let found = breaks(&t);
        assert_eq!(found.len(), 1);
        let b = &found[0];
        assert_eq!(b.kinds, [BreakKind::NullStream]);
        assert_eq!(
            (b.op, b.row.as_str(), b.iteration),
            (OpKind::HtoD, "the NULL stream", 0)
        );
        // Stream 1's kernel was ready at 1.0 and started at 2.0, as the copy ended.
        assert_eq!(b.held_back, 1);
        // Nothing else ran from 1.0 to 2.0.
        assert!((b.alone_ms - 1.0).abs() < 1e-12);
        assert!(
            b.describe()
                .contains("held back 1 operation that was ready")
        );
    }

    #[test]
    fn pageable_synchronous_copies_and_host_calls_are_named_with_the_gpu_idle_under_them() {
        let mut t = pipeline(false);
        t.ops[1].pageable = true;
        t.ops[4].synchronous = true;
        t.other_lanes = vec![Lane::Host];
        t.ops.push(TimelineOp {
            kind: OpKind::Host,
            stream: 2,
            bytes: None,
            call: Some("cuMemFree".into()),
            ready_ms: Some(0.0),
            ..op(OpKind::Host, 2, 0, 5.0, 5.5)
        });
        let found = breaks(&t);
        let kinds: Vec<&[BreakKind]> = found.iter().map(|b| b.kinds.as_slice()).collect();
        assert_eq!(
            kinds,
            [
                &[BreakKind::Pageable][..],
                &[BreakKind::Synchronous][..],
                &[BreakKind::HostCall][..]
            ]
        );
        let host = &found[2];
        assert_eq!(host.row, "the host");
        // The GPU ran nothing during the call.
        assert!((host.alone_ms - 0.5).abs() < 1e-12);
        assert!(host.describe().contains("cuMemFree"));
        // A host call is not the GPU's work: the queue waits leave it out.
        let o = occupancy(&t).expect("ops");
        assert_eq!(o.flow.longest_wait.map(|w| w.kind), Some(OpKind::HtoD));
        assert!((o.flow.longest_queue_wait_ms - 1.0).abs() < 1e-12);
    }
}
