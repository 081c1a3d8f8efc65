//! What each chart shows, as data: the bars, lines, bounds, cells and timeline bars with
//! their values. Tests check these models; [`super::plot`] only draws them.
use crate::saved::timeline::{Engine, Lane, OpKind, TraceSource};

/// A colour, `#rrggbb`.
pub type Color = &'static str;

/// Colours of data series, in order; each series of a chart gets its own.
pub const PALETTE: [Color; 8] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#9c755f",
];
/// Bounds and models.
pub const BOUND_COLOR: Color = "#222222";
/// Sequential runs.
pub const SEQUENTIAL_COLOR: Color = "#9c9c9c";

/// The colour of each operation kind on timelines and breakdowns, and the lighter one
/// of its "queued" segments.
fn kind_colors(kind: OpKind) -> (Color, Color) {
    match kind {
        OpKind::HtoD => ("#4e79a7", "#c6d4e4"),
        OpKind::Kernel => ("#59a14f", "#cce3c8"),
        OpKind::DtoH => ("#e15759", "#f4c7c8"),
        OpKind::DtoD => ("#b07aa1", "#e3d1df"),
        OpKind::Memset => ("#f28e2b", "#fad9b8"),
        OpKind::Host => ("#7f7f7f", "#d9d9d9"),
    }
}

pub fn kind_color(kind: OpKind) -> Color {
    kind_colors(kind).0
}

pub fn queued_color(kind: OpKind) -> Color {
    kind_colors(kind).1
}

#[derive(Debug, Clone, PartialEq)]
pub enum XAxis {
    /// One slot per label; bars and line points are placed by slot index.
    Categories(Vec<String>),
    Linear,
    /// A continuous axis, logarithmic (base 2 ticks).
    Log,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YScale {
    Linear,
    Log,
}

/// Bars, one per category.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    pub name: String,
    pub color: Color,
    pub values: Vec<f64>,
    /// Low and high ends of a whisker per bar.
    pub whiskers: Option<Vec<(f64, f64)>>,
}

/// A line through points (x is the slot index on a category axis), or the points alone
/// where they are not a series (`joined` false).
#[derive(Debug, Clone, PartialEq)]
pub struct LineSeries {
    pub name: String,
    pub color: Color,
    pub dashed: bool,
    pub markers: bool,
    pub joined: bool,
    pub points: Vec<(f64, f64)>,
}

/// A shaded horizontal band across the chart, from `lo` to `hi`.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    pub name: String,
    pub color: Color,
    pub lo: f64,
    pub hi: f64,
}

/// A horizontal line across the chart: a bound.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    pub name: String,
    pub color: Color,
    pub y: f64,
}

/// A bar or line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x: XAxis,
    pub y_scale: YScale,
    pub bars: Vec<BarSeries>,
    pub lines: Vec<LineSeries>,
    pub levels: Vec<Level>,
    pub bands: Vec<Band>,
}

/// A grid of coloured cells with their values written in them.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatMap {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub columns: Vec<String>,
    pub rows: Vec<String>,
    /// `values[row][column]`; `None` where nothing was measured.
    pub values: Vec<Vec<Option<f64>>>,
    /// Cells at or above this value are drawn in the "pays off" colour scale, cells below
    /// it in the other; the boundary is the contour.
    pub threshold: f64,
    /// The line between the cells at or above the threshold and those below, as its
    /// legend names it (e.g. "pay-off line"); `None`: no line. The legend names it only
    /// where some of it is drawn.
    pub contour: Option<&'static str>,
    /// How a cell's value is written, e.g. "{:.2}×".
    pub unit: &'static str,
    /// Cells outlined as disagreeing with another map (row, column).
    pub marked: Vec<(usize, usize)>,
}

/// A row of a timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Track {
    Stream(usize),
    /// A row beyond the schedule's streams (the NULL stream, the host).
    Lane(Lane),
    Engine(Engine),
    /// On a timeline of several GPUs, a GPU's stream: its ordinal, and the stream's index
    /// among its streams.
    GpuStream(usize, usize),
    /// On a timeline of several GPUs, a GPU's engine: its ordinal and the engine.
    GpuEngine(usize, Engine),
}

impl Track {
    pub fn label(self) -> String {
        match self {
            Track::Stream(s) => format!("stream {}", s + 1),
            Track::Lane(l) => l.label().to_owned(),
            Track::Engine(e) => e.label().to_owned(),
            Track::GpuStream(gpu, s) => format!("GPU {gpu} stream {}", s + 1),
            Track::GpuEngine(gpu, e) => format!("GPU {gpu} {}", e.label()),
        }
    }

    /// The GPU it belongs to, on a timeline of several GPUs.
    pub fn gpu(self) -> Option<usize> {
        match self {
            Track::GpuStream(gpu, _) | Track::GpuEngine(gpu, _) => Some(gpu),
            Track::Stream(_) | Track::Lane(_) | Track::Engine(_) => None,
        }
    }

    /// Whether it is a row of work in issue order (a stream or a lane), not an engine's.
    pub fn is_stream(self) -> bool {
        matches!(
            self,
            Track::Stream(_) | Track::Lane(_) | Track::GpuStream(..)
        )
    }
}

/// One bar of a timeline: an operation's execution, or its wait to start.
#[derive(Debug, Clone, PartialEq)]
pub struct GanttBar {
    pub track: Track,
    pub kind: OpKind,
    /// A wait before the operation ran (drawn lighter), not execution.
    pub queued: bool,
    pub start_ms: f64,
    pub end_ms: f64,
    /// What it is, shown when the bar is pointed at: the operation, its stream, its start
    /// and its duration.
    pub title: String,
}

impl GanttBar {
    /// Its colour: its kind's, the lighter one where it is a wait.
    pub fn color(&self) -> Color {
        let (ran, waited) = kind_colors(self.kind);
        if self.queued { waited } else { ran }
    }
}

/// A concurrency break marked on a timeline: when the operation to blame ran, on which
/// row, and what it was.
#[derive(Debug, Clone, PartialEq)]
pub struct GanttMark {
    pub at_ms: f64,
    pub end_ms: f64,
    /// The operation's own row, where the timeline has it: the chart boxes it there.
    pub track: Option<Track>,
    /// A few words: what broke concurrency, e.g. "HtoD on the NULL stream".
    pub label: String,
}

/// A timeline: a row per stream, then a row per engine, and the concurrency breaks found in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Gantt {
    pub title: String,
    pub source: TraceSource,
    pub tracks: Vec<Track>,
    pub bars: Vec<GanttBar>,
    pub marks: Vec<GanttMark>,
    /// Where the time axis ends at the least: the end of the longest timeline it is
    /// shown beside, so that a section's timelines share one scale.
    pub span_ms: f64,
}
