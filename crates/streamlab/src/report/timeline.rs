//! One traced iteration per stream: a Gantt chart (one row per stream, a colour per
//! operation kind) and the same operations as Chrome trace-event JSON, which
//! chrome://tracing and ui.perfetto.dev open.
use serde_json::{Value, json};

use super::ReportError;
use super::chart::kind_color;
use super::plot::{round_up, tick_label, ticks};
use super::svg::{Anchor, Rect, Stroke, Svg};
use crate::results::{OpKind, Timeline};

const WIDTH: f64 = 820.0;
const LEFT: f64 = 86.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 64.0;
const ROW: f64 = 26.0;
const BOTTOM: f64 = 52.0;
const KINDS: [OpKind; 3] = [OpKind::HtoD, OpKind::Kernel, OpKind::DtoH];

/// A timeline whose operations all have finite times with `start <= end`.
#[derive(Debug, Clone, Copy)]
pub struct CheckedTimeline<'a> {
    timeline: &'a Timeline,
}

impl<'a> CheckedTimeline<'a> {
    /// Check every operation of `timeline`.
    pub fn new(timeline: &'a Timeline) -> Result<CheckedTimeline<'a>, ReportError> {
        let bad = timeline.ops.iter().find(|op| {
            !op.start_ms.is_finite() || !op.end_ms.is_finite() || op.end_ms < op.start_ms
        });
        match bad {
            Some(op) => Err(ReportError::Invalid(format!(
                "timeline {:?}: a {} on stream {} runs from {} ms to {} ms",
                timeline.title,
                op.kind.label(),
                op.stream + 1,
                op.start_ms,
                op.end_ms
            ))),
            None => Ok(CheckedTimeline { timeline }),
        }
    }

    /// Rows drawn: the declared stream count, or more if an operation names a later stream.
    pub fn rows(&self) -> usize {
        let used = self.timeline.ops.iter().map(|op| op.stream + 1).max();
        used.unwrap_or(0).max(self.timeline.streams)
    }

    fn end_ms(&self) -> f64 {
        self.timeline
            .ops
            .iter()
            .map(|op| op.end_ms)
            .fold(0.0, f64::max)
    }
}

/// The Gantt chart: one row per stream, one bar per operation, time in ms.
pub fn gantt(t: CheckedTimeline) -> String {
    let rows = t.rows();
    let height = TOP + ROW * rows as f64 + BOTTOM;
    let title = format!("{}: one iteration per stream", t.timeline.title);
    let mut svg = Svg::new(WIDTH, height, &title);
    svg.text((WIDTH / 2.0, 24.0), &title, Anchor::Middle, 16.0);
    legend(&mut svg);
    let end = round_up(t.end_ms());
    let x = |ms: f64| LEFT + ms / end.max(f64::MIN_POSITIVE) * (WIDTH - LEFT - RIGHT);
    for row in 0..rows {
        stream_row(&mut svg, row);
    }
    for op in &t.timeline.ops {
        let r = Rect {
            x: x(op.start_ms),
            y: TOP + ROW * op.stream as f64 + 4.0,
            width: x(op.end_ms) - x(op.start_ms),
            height: ROW - 8.0,
        };
        svg.rect(r, kind_color(op.kind), "op", Some(op.end_ms - op.start_ms));
    }
    time_axis(&mut svg, TOP + ROW * rows as f64, end, x);
    svg.finish()
}

fn stream_row(svg: &mut Svg, row: usize) {
    let r = Rect {
        x: LEFT,
        y: TOP + ROW * row as f64,
        width: WIDTH - LEFT - RIGHT,
        height: ROW,
    };
    let shade = if row.is_multiple_of(2) {
        "#f4f4f4"
    } else {
        "#fbfbfb"
    };
    svg.rect(r, shade, "row", None);
    let label = format!("stream {}", row + 1);
    svg.text(
        (LEFT - 8.0, r.y + ROW / 2.0 + 4.0),
        &label,
        Anchor::End,
        12.0,
    );
}

fn time_axis(svg: &mut Svg, base: f64, end: f64, x: impl Fn(f64) -> f64) {
    let axis = Stroke::solid("#444", 1.0);
    svg.line((LEFT, base), (WIDTH - RIGHT, base), axis, "axis");
    for t in ticks(0.0, end) {
        svg.line((x(t), base), (x(t), base + 4.0), axis, "tick");
        svg.text((x(t), base + 16.0), &tick_label(t), Anchor::Middle, 11.0);
    }
    let middle = (LEFT + WIDTH - RIGHT) / 2.0;
    svg.text((middle, base + 38.0), "time (ms)", Anchor::Middle, 13.0);
}

fn legend(svg: &mut Svg) {
    for (i, kind) in KINDS.into_iter().enumerate() {
        let x = LEFT + 110.0 * i as f64;
        let swatch = Rect {
            x,
            y: 38.0,
            width: 12.0,
            height: 12.0,
        };
        svg.rect(swatch, kind_color(kind), "legend-swatch", None);
        svg.text((x + 16.0, 48.0), kind.label(), Anchor::Start, 12.0);
    }
}

/// The trace category of an operation kind.
fn category(kind: OpKind) -> &'static str {
    match kind {
        OpKind::HtoD | OpKind::DtoH => "copy",
        OpKind::Kernel => "kernel",
    }
}

/// Chrome trace-event JSON: a `thread_name` track per stream and a complete (`X`) event
/// per operation, times in microseconds.
pub fn trace(t: CheckedTimeline) -> Result<String, ReportError> {
    let names = (0..t.rows()).map(|row| {
        json!({
            "name": "thread_name",
            "ph": "M",
            "pid": 1,
            "tid": row + 1,
            "args": { "name": format!("stream {}", row + 1) },
        })
    });
    let events = t.timeline.ops.iter().map(|op| {
        json!({
            "name": op.kind.label(),
            "cat": category(op.kind),
            "ph": "X",
            "ts": op.start_ms * 1000.0,
            "dur": (op.end_ms - op.start_ms) * 1000.0,
            "pid": 1,
            "tid": op.stream + 1,
        })
    });
    let doc = json!({
        "traceEvents": names.chain(events).collect::<Vec<Value>>(),
        "displayTimeUnit": "ms",
    });
    serde_json::to_string_pretty(&doc)
        .map_err(|e| ReportError::Invalid(format!("trace of timeline {:?}: {e}", t.timeline.title)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::TimelineOp;

    fn timeline(ops: Vec<TimelineOp>) -> Timeline {
        Timeline {
            title: "t".into(),
            streams: 2,
            ops,
        }
    }

    fn op(stream: usize, start_ms: f64, end_ms: f64) -> TimelineOp {
        TimelineOp {
            stream,
            kind: OpKind::Kernel,
            start_ms,
            end_ms,
        }
    }

    #[test]
    fn backwards_or_non_finite_operations_are_refused() {
        let backwards = timeline(vec![op(0, 2.0, 1.0)]);
        let err = CheckedTimeline::new(&backwards).unwrap_err();
        assert!(
            err.to_string().contains("stream 1 runs from 2 ms to 1 ms"),
            "{err}"
        );
        assert!(CheckedTimeline::new(&timeline(vec![op(0, 0.0, f64::NAN)])).is_err());
    }

    #[test]
    fn an_operation_on_an_undeclared_stream_gets_its_own_row() {
        let t = timeline(vec![op(3, 0.0, 1.0)]);
        let checked = CheckedTimeline::new(&t).unwrap();
        assert_eq!(checked.rows(), 4);
        assert_eq!(gantt(checked).matches("class=\"row\"").count(), 4);
    }
}
