//! Traced iterations: when each copy and kernel really ran on the GPU.
//!
//! With CUPTI (the normal case) every operation's start and end are the GPU's own
//! records, and `ready_ms` is when the operation could have started: issued by the host
//! and everything before it on its stream done. An operation that starts later than that
//! waited for its engine (copies in one direction share one copy engine): the report
//! draws that wait as a lighter "queued" segment. Operations off the schedule's own
//! streams (on the legacy NULL stream, the per-thread default stream, or a host call that
//! waited for the GPU) sit on rows of their own ([`Lane`]), and each operation carries
//! what the break detector needs: whether it copied pageable memory, whether it was
//! issued synchronously, and the call that issued it. Without CUPTI the operations are
//! bracketed by events recorded in their stream, which mark "reached by the stream →
//! done", queueing included; such a timeline says so in `source`. A timeline of several
//! GPUs lists them ([`TracedGpu`]), each with its streams, and every operation carries
//! its GPU.
use serde::{Deserialize, Serialize};

/// What the times of a timeline are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceSource {
    /// CUPTI activity records: the GPU's start and end of every kernel and copy.
    Cupti,
    /// Events recorded in each stream before and after each operation (CUPTI missing).
    Events,
}

impl TraceSource {
    pub fn label(self) -> &'static str {
        match self {
            TraceSource::Cupti => "cupti",
            TraceSource::Events => "events",
        }
    }

    /// Where the times come from, in words.
    pub fn description(self) -> &'static str {
        match self {
            TraceSource::Cupti => "the GPU's own records (CUPTI activity)",
            TraceSource::Events => {
                "event brackets (CUPTI was unavailable): waits for an engine count as running"
            }
        }
    }
}

/// The kind of an operation on a timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    HtoD,
    Kernel,
    DtoH,
    /// A copy from device memory to device memory.
    DtoD,
    /// A memset of device memory.
    Memset,
    /// A host API call that returned only when the GPU let it (an allocation and a free,
    /// a wait on an event): not GPU work, drawn on the host's row.
    Host,
}

impl OpKind {
    pub const ALL: [OpKind; 6] = [
        OpKind::HtoD,
        OpKind::Kernel,
        OpKind::DtoH,
        OpKind::DtoD,
        OpKind::Memset,
        OpKind::Host,
    ];

    /// The plain name an execution interval carries in a trace.
    pub fn label(self) -> &'static str {
        match self {
            OpKind::HtoD => "HtoD",
            OpKind::Kernel => "kernel",
            OpKind::DtoH => "DtoH",
            OpKind::DtoD => "DtoD",
            OpKind::Memset => "memset",
            OpKind::Host => "host call",
        }
    }

    /// The engine of the three that runs it, if one of them does (device-to-device
    /// copies and memsets run on whichever unit the driver picks, host calls on none).
    pub fn engine(self) -> Option<Engine> {
        match self {
            OpKind::HtoD => Some(Engine::HtoD),
            OpKind::Kernel => Some(Engine::Sms),
            OpKind::DtoH => Some(Engine::DtoH),
            OpKind::DtoD | OpKind::Memset | OpKind::Host => None,
        }
    }

    /// Whether the GPU runs it (everything but a host call).
    pub fn on_gpu(self) -> bool {
        self != OpKind::Host
    }
}

/// A row of a timeline beyond the schedule's own streams: where an operation that is on
/// none of them ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lane {
    /// The legacy NULL (default) stream, which waits for and holds back every blocking
    /// stream of its context.
    NullStream,
    /// The per-thread default stream, an ordinary stream that only the NULL stream
    /// joins.
    PerThreadStream,
    /// The host thread, for its calls that wait for the GPU.
    Host,
}

impl Lane {
    pub fn label(self) -> &'static str {
        match self {
            Lane::NullStream => "NULL stream",
            Lane::PerThreadStream => "per-thread default stream",
            Lane::Host => "host",
        }
    }
}

/// Operation row `stream` in words: "stream 3", or "the NULL stream" where it is `lane`.
pub fn row_label(stream: usize, lane: Option<Lane>) -> String {
    lane.map_or_else(
        || format!("stream {}", stream + 1),
        |l| format!("the {}", l.label()),
    )
}

/// A unit of the GPU that runs operations: one row each on a timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Engine {
    /// The host-to-device copy engine.
    HtoD,
    /// The device-to-host copy engine.
    DtoH,
    /// The streaming multiprocessors.
    Sms,
}

impl Engine {
    pub const ALL: [Engine; 3] = [Engine::HtoD, Engine::Sms, Engine::DtoH];

    pub fn label(self) -> &'static str {
        match self {
            Engine::HtoD => "HtoD copy engine",
            Engine::DtoH => "DtoH copy engine",
            Engine::Sms => "SMs",
        }
    }
}

/// One operation: which stream and iteration, what, and when (milliseconds from the
/// moment the first operation was ready).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineOp {
    /// 0-based stream index.
    pub stream: usize,
    /// 0-based iteration, when several were traced back to back.
    pub iteration: usize,
    pub kind: OpKind,
    /// When it could have started (issued and its stream's earlier work done); `None`
    /// for event-bracketed timelines.
    pub ready_ms: Option<f64>,
    pub start_ms: f64,
    pub end_ms: f64,
    /// Bytes a copy moved.
    pub bytes: Option<u64>,
    /// A copy from or to pageable (not pinned) host memory, which the driver stages.
    #[serde(default, skip_serializing_if = "is_false")]
    pub pageable: bool,
    /// Issued with a call that does not take a stream and returns when it is done (a
    /// synchronous copy or memset), as the GPU's records say.
    #[serde(default, skip_serializing_if = "is_false")]
    pub synchronous: bool,
    /// The API call that issued it, where the schedule names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
}

fn is_false(b: &bool) -> bool {
    !b
}

/// One or more traced iterations of one schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// Experiment and schedule, e.g. "sincos-overlap asynchronous 1, 4 streams".
    pub title: String,
    pub source: TraceSource,
    pub streams: usize,
    /// Rows beyond the schedule's own streams: an operation whose `stream` is
    /// `streams + k` ran on `other_lanes[k]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_lanes: Vec<Lane>,
    /// The GPUs of a timeline of several, in the order of their streams: the first
    /// `devices[0].streams` streams are the first GPU's, the next the second's, and so
    /// on (empty for a timeline of one GPU).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<TracedGpu>,
    /// Iterations traced back to back.
    pub iterations: usize,
    pub ops: Vec<TimelineOp>,
    /// What the checks compared each traced iteration with.
    pub reference: TraceReference,
    /// The first failed check of each earlier trace of the same schedule that was
    /// dropped and traced again (a link busy with other traffic at that moment fails a
    /// trace; a schedule that keeps failing keeps its last trace, marked disturbed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retraced: Vec<String>,
}

impl Timeline {
    /// The lane beyond the schedule's streams that operation row `stream` is, if it is
    /// one.
    pub fn lane(&self, stream: usize) -> Option<Lane> {
        (stream.checked_sub(self.streams)).and_then(|k| self.other_lanes.get(k).copied())
    }

    /// Operation row `stream` in words, as the timeline labels it: "stream 3", or "the
    /// NULL stream", "the host" for a lane beyond the schedule's streams.
    pub fn row(&self, stream: usize) -> String {
        row_label(stream, self.lane(stream))
    }

    /// On a timeline of several GPUs, the GPU whose stream row `stream` is (its ordinal)
    /// and the stream's index among that GPU's.
    pub fn gpu_stream(&self, stream: usize) -> Option<(usize, usize)> {
        let mut first = 0;
        for gpu in &self.devices {
            if stream < first + gpu.streams {
                return Some((gpu.ordinal, stream - first));
            }
            first += gpu.streams;
        }
        None
    }

    /// The GPU (its ordinal) `op` ran on, on a timeline of several GPUs.
    pub fn gpu_of(&self, op: &TimelineOp) -> Option<usize> {
        self.gpu_stream(op.stream).map(|(gpu, _)| gpu)
    }
}

/// One GPU of a timeline of several: its ordinal and how many of the timeline's streams
/// are its.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TracedGpu {
    pub ordinal: usize,
    pub streams: usize,
}

/// The timed figures a trace is checked against (all from the same run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceReference {
    /// The fastest timed sample of the same schedule (like the trace, a run that
    /// nothing else got in the way of): per iteration when iterations run back to back
    /// (compared with the middle traced iteration's period), else of one run alone
    /// (compared with the traced span).
    pub timed_ms: f64,
    /// The median timed sample of the same schedule, where the schedule is a row of its
    /// own: the traced busiest engine or stream is held to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ms: Option<f64>,
    /// Whether `timed_ms` is a period of back-to-back iterations.
    pub back_to_back: bool,
    /// Copy rates measured in the same run, GB/s: one way alone, and both ways at once in
    /// total; `None` where the experiment moves no data.
    pub rates: Option<CopyRates>,
}

/// Copy rates in GB/s (10^9 bytes per second), measured over the traced schedule's
/// chunks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CopyRates {
    /// Each way alone.
    pub htod_gbps: f64,
    pub dtoh_gbps: f64,
    /// Both directions at once, in total.
    pub both_gbps: f64,
    /// Each direction's own rate while both run (the link is not always shared evenly).
    pub htod_shared_gbps: f64,
    pub dtoh_shared_gbps: f64,
}

impl CopyRates {
    /// Rates of a run that measured none.
    pub const UNMEASURED: CopyRates = CopyRates {
        htod_gbps: f64::NAN,
        dtoh_gbps: f64::NAN,
        both_gbps: f64::NAN,
        htod_shared_gbps: f64::NAN,
        dtoh_shared_gbps: f64::NAN,
    };
}
