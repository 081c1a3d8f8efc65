//! What breaks the streams' concurrency in a traced timeline: each operation that held
//! another stream's ready work back, its kind, and what it cost.
use super::engines::{gaps, intersection, length, union};
use crate::saved::timeline::{Lane, OpKind, Timeline, TimelineOp};
use serde::Serialize;

/// Why an operation breaks the concurrency of the streams around it (the CUDA
/// Handbook's 6.5.3, and the rules profilers apply to a timeline).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// What broke concurrency, in a few words for a chart: "HtoD on the NULL stream",
    /// "cuMemFree on the host".
    pub fn short(&self) -> String {
        let what = match (&self.call, self.op) {
            (Some(c), OpKind::Host) => c.clone(),
            (_, op) => op.label().to_owned(),
        };
        format!("{what} on {}", self.row)
    }

    /// In words, e.g. "HtoD on the NULL stream (iteration 2, cuMemcpyHtoDAsync),
    /// NULL-stream operation: waited 0.4100 ms to start, took 0.3100 ms, the rest of the
    /// GPU idle 0.3000 ms of it; held back 1 operation that was ready".
    pub fn describe(&self) -> String {
        let kinds: Vec<&str> = self.kinds.iter().map(|k| k.label()).collect();
        // A host call is named by its call ([`Break::short`]); an operation by its kind,
        // with its call.
        let call = match (&self.call, self.op) {
            (Some(c), op) if op != OpKind::Host => format!(", {c}"),
            _ => String::new(),
        };
        let held = match self.held_back {
            0 => String::new(),
            1 => "; held back 1 operation that was ready".to_owned(),
            n => format!("; held back {n} operations that were ready"),
        };
        format!(
            "{} (iteration {}{call}), {}: waited {:.4} ms to start, took {:.4} ms, the rest of \
             the GPU idle {:.4} ms of it{held}",
            self.short(),
            self.iteration + 1,
            kinds.join(", "),
            self.waited_ms,
            self.end_ms - self.start_ms,
            self.alone_ms,
        )
    }
}

/// Every operation of `t` that breaks concurrency ([`BreakKind`]), with how long the rest
/// of the GPU sat idle while it ran and how many ready operations it held back.
pub fn breaks(t: &Timeline) -> Vec<Break> {
    (t.ops.iter().enumerate())
        .filter_map(|(i, op)| {
            let null = t.lane(op.stream) == Some(Lane::NullStream);
            let kinds: Vec<BreakKind> = [
                (null, BreakKind::NullStream),
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
                .filter_map(|(j, other)| (j != i && other.kind.on_gpu()).then_some(other))
                .collect();
            let running = intersection(
                &union(others.iter().map(|o| (o.start_ms, o.end_ms)).collect()),
                &[(op.start_ms, op.end_ms)],
            );
            let alone = length(&gaps(&running, op.start_ms, op.end_ms));
            let held_back = (others.iter())
                .filter(|o| {
                    let waited = |r: f64| r < op.end_ms && o.start_ms - r > HELD_BACK_MS;
                    o.ready_ms.is_some_and(waited) && (o.start_ms - op.end_ms).abs() <= HELD_BACK_MS
                })
                .count();
            Some(Break {
                kinds,
                op: op.kind,
                row: t.row(op.stream),
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
