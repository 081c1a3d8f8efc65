//! How busy each engine and stream of a traced timeline was ([`Occupancy`]), how the
//! work flowed between them, and the bound the busiest one sets ([`busiest_bound`]).
use crate::saved::timeline::{Engine, Lane, OpKind, Timeline, TimelineOp, row_label};
use crate::stats::Series;
use serde::{Deserialize, Serialize};

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

/// The busiest engine or stream of a traced schedule and its mean busy time per steady
/// iteration ([`busiest_bound`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BusiestBound {
    pub ms: f64,
    pub resource: Resource,
}

/// A schedule's busiest bound from batches each traced right after a timed one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
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

/// The busiest bound of batches timed at `timed_ms`, each followed by the traced batch of
/// the same index of `traced`; `None` unless every timed batch has its traced one.
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
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
    pub flow: Flow,
}

/// How a traced timeline's work flowed, from the GPU's own records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
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

/// Which operation: its kind, stream (0-based) and lane where it has one, and iteration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WaitingOp {
    pub kind: OpKind,
    pub stream: usize,
    pub lane: Option<Lane>,
    pub iteration: usize,
}

impl Flow {
    /// In words, e.g. "kernels ran beside a copy 93% of their time, copies beside a
    /// kernel 12% of theirs; every engine idle with work queued 0.0120 ms (3 gaps);
    /// queue wait mean 0.4100 ms, longest 1.2400 ms (HtoD on stream 2, iteration 1)".
    pub fn describe(&self, sms_busy_ms: f64) -> String {
        let share = |part: f64, whole: f64| match whole > 0.0 {
            true => format!("{:.0}%", 100.0 * part / whole),
            false => "–".to_owned(),
        };
        let longest = self.longest_wait.map_or(String::new(), |w| {
            let (kind, row) = (w.kind.label(), row_label(w.stream, w.lane));
            format!(" ({kind} on {row}, iteration {})", w.iteration + 1)
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
    /// The share of the span `engine` was busy.
    pub fn share(&self, engine: Engine) -> f64 {
        let busy_ms = match engine {
            Engine::HtoD => self.htod_busy_ms,
            Engine::Sms => self.sms_busy_ms,
            Engine::DtoH => self.dtoh_busy_ms,
        };
        busy_ms / self.span_ms
    }

    /// The engine busy the largest share of the span.
    pub fn busiest_engine(&self) -> Engine {
        (Engine::ALL.into_iter())
            .max_by(|a, b| self.share(*a).total_cmp(&self.share(*b)))
            .expect("three engines")
    }

    fn bound_kind(busiest: Engine) -> &'static str {
        if busiest == Engine::Sms {
            "kernel-bound"
        } else {
            "copy-bound"
        }
    }

    /// The verdict, e.g. "copy-bound: HtoD copy engine busy 94%".
    pub fn verdict(&self) -> String {
        let busiest = self.busiest_engine();
        let (kind, busy) = (Self::bound_kind(busiest), 100.0 * self.share(busiest));
        format!("{kind}: {} busy {busy:.0}%", busiest.label())
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
pub(super) fn union(mut intervals: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
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

pub(super) fn length(intervals: &[(f64, f64)]) -> f64 {
    intervals.iter().fold(0.0, |total, (a, b)| total + (b - a))
}

/// The parts of `[start, end]` that disjoint, ascending `busy` intervals leave free.
pub(super) fn gaps(busy: &[(f64, f64)], start: f64, end: f64) -> Vec<(f64, f64)> {
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
pub(super) fn intersection(a: &[(f64, f64)], b: &[(f64, f64)]) -> Vec<(f64, f64)> {
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

/// The busy intervals of `resource` among `ops`.
fn busy<'a>(ops: impl Iterator<Item = &'a TimelineOp>, resource: Resource) -> Vec<(f64, f64)> {
    union(
        ops.filter(|op| resource.runs(op))
            .map(|op| (op.start_ms, op.end_ms))
            .collect(),
    )
}

/// The mean busy time per iteration of `t`'s busiest engine or stream over its steady
/// iterations (back to back, those between the first and the last, whose fill and drain
/// the timed iterations do not pay; otherwise every one): its busy time in them over
/// their count. Each engine and stream runs one operation at a time, so the mean time
/// of such iterations (the timed one) is no shorter, though one iteration alone may be.
/// `None` without operations.
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

/// From the first operation of `t` ready to the last one's end; `None` without operations.
pub(super) fn extent(t: &Timeline) -> Option<(f64, f64)> {
    let start = (t.ops.iter())
        .map(|op| op.ready_ms.unwrap_or(op.start_ms).min(op.start_ms))
        .min_by(f64::total_cmp)?;
    let end = t.ops.iter().map(|op| op.end_ms).max_by(f64::total_cmp)?;
    Some((start, end))
}

/// The occupancy of `t`'s engines; `None` without operations.
pub fn occupancy(t: &Timeline) -> Option<Occupancy> {
    let (start, end) = extent(t)?;
    let [htod, sms, dtoh] = Engine::ALL.map(|e| busy(t.ops.iter(), Resource::Engine(e)));
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
        copy_kernel_overlap_ms: length(&intersection(&copying, &sms)),
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
            lane: t.lane(op.stream),
            iteration: op.iteration,
        }),
    };
    Some(Occupancy {
        span_ms: end - start,
        htod_busy_ms: length(&htod),
        sms_busy_ms: length(&sms),
        dtoh_busy_ms: length(&dtoh),
        both_copying_ms: length(&intersection(&htod, &dtoh)),
        bound,
        flow,
    })
}
