//! Traced timelines as a Gantt model (a row per stream, then a row per engine, so that
//! work one engine runs one after another shows as such) and as Chrome trace-event JSON
//! with the same tracks, which chrome://tracing and ui.perfetto.dev open.
//!
//! An operation's execution is drawn on its stream's row and on its engine's row; the
//! wait between when it could have started and when its engine started it is drawn
//! lighter, on its stream's row only, and named `queued` in the trace.
use serde_json::{Value, json};

use super::chart::{Gantt, GanttBar, GanttMark, Track};
use crate::derived::trace::Break;
use crate::saved::timeline::{Engine, OpKind, Timeline, TimelineOp};

/// Waits shorter than this (a microsecond) are not drawn.
const MIN_QUEUED_MS: f64 = 0.001;

/// A timeline whose operations all have finite times with `start <= end`, or the first
/// operation that does not.
pub fn check(t: &Timeline) -> Result<(), String> {
    let Some(op) = t.ops.iter().find(|op| {
        !op.start_ms.is_finite()
            || !op.end_ms.is_finite()
            || op.end_ms < op.start_ms
            || op.ready_ms.is_some_and(|r| !r.is_finite())
    }) else {
        return Ok(());
    };
    let (kind, stream) = (op.kind.label(), op.stream + 1);
    let (title, start, end) = (&t.title, op.start_ms, op.end_ms);
    Err(format!(
        "timeline {title:?}: a {kind} on stream {stream} runs from {start} ms to {end} ms"
    ))
}

/// The rows: every stream an operation uses (at least the declared count), the lanes
/// beyond them (the NULL stream, the host), then the engines its operations ran on (a
/// timeline of kernels alone has no copy-engine rows); on a timeline of several GPUs,
/// each GPU's streams and then its engines, GPU by GPU, and the lanes last.
pub fn tracks(t: &Timeline) -> Vec<Track> {
    let drawn = |track: &Track| t.ops.iter().any(|op| rows(t, op).contains(track));
    if !t.devices.is_empty() {
        return (t.devices.iter())
            .flat_map(|g| {
                let streams = (0..g.streams).map(move |s| Track::GpuStream(g.ordinal, s));
                let engines = Engine::ALL.map(|e| Track::GpuEngine(g.ordinal, e));
                streams.chain(engines.into_iter().filter(drawn))
            })
            .chain(t.other_lanes.iter().map(|&l| Track::Lane(l)))
            .collect();
    }
    let streams = (t.ops.iter())
        .filter(|op| t.lane(op.stream).is_none())
        .map(|op| op.stream + 1)
        .max()
        .unwrap_or(0)
        .max(t.streams);
    (0..streams)
        .map(Track::Stream)
        .chain(t.other_lanes.iter().map(|&l| Track::Lane(l)))
        .chain(Engine::ALL.map(Track::Engine).into_iter().filter(drawn))
        .collect()
}

/// The row of `op`'s stream or lane (its GPU's stream on a timeline of several).
fn row(t: &Timeline, op: &TimelineOp) -> Track {
    if let Some((gpu, s)) = t.gpu_stream(op.stream) {
        return Track::GpuStream(gpu, s);
    }
    t.lane(op.stream)
        .map_or(Track::Stream(op.stream), Track::Lane)
}

/// The rows `op` is drawn on: its stream's or lane's, and its engine's where it has one
/// (its GPU's engine on a timeline of several).
fn rows(t: &Timeline, op: &TimelineOp) -> Vec<Track> {
    let gpu = t.gpu_of(op);
    let engine = op.kind.engine().map(|e| match gpu {
        Some(gpu) if !t.devices.is_empty() => Track::GpuEngine(gpu, e),
        _ => Track::Engine(e),
    });
    std::iter::once(row(t, op)).chain(engine).collect()
}

/// The wait before `op`, if it waited.
fn queued(op: &TimelineOp) -> Option<(f64, f64)> {
    op.ready_ms
        .filter(|&ready| op.start_ms - ready >= MIN_QUEUED_MS)
        .map(|ready| (ready, op.start_ms))
}

/// Every interval of `t` as (operation, row, whether a wait, start and end): each
/// operation's wait on its stream's row where it waited, then its run on each of its rows.
fn intervals(t: &Timeline) -> impl Iterator<Item = (&TimelineOp, Track, bool, (f64, f64))> {
    t.ops.iter().flat_map(move |op| {
        let wait = queued(op).map(|w| (op, row(t, op), true, w));
        let ran = (rows(t, op).into_iter()).map(move |r| (op, r, false, (op.start_ms, op.end_ms)));
        wait.into_iter().chain(ran)
    })
}

/// What `op` is, in a few words: its call (or kind), its row and its iteration.
fn named(t: &Timeline, op: &TimelineOp) -> String {
    let what = op.call.as_deref().unwrap_or(op.kind.label());
    let iteration = (t.iterations > 1).then(|| format!(", iteration {}", op.iteration + 1));
    let iteration = iteration.unwrap_or_default();
    format!("{what} on {}{iteration}", row(t, op).label())
}

/// The Gantt model of `t`, each bar titled with what it is, and `breaks` marked where
/// they started, each on the row of the operation to blame.
pub fn gantt(t: &Timeline, breaks: &[Break]) -> Gantt {
    let bars = intervals(t)
        .map(|(op, track, queued, (start_ms, end_ms))| {
            let (name, took) = (named(t, op), end_ms - start_ms);
            let title = match queued {
                true => format!("{name}: ready at {start_ms:.4} ms, waited {took:.4} ms to start"),
                false => format!("{name}: from {start_ms:.4} ms, took {took:.4} ms"),
            };
            GanttBar {
                track,
                kind: op.kind,
                queued,
                start_ms,
                end_ms,
                title,
            }
        })
        .collect();
    let marks = (breaks.iter())
        .map(|b| GanttMark {
            at_ms: b.start_ms,
            end_ms: b.end_ms,
            track: (t.ops.iter())
                .find(|op| {
                    op.kind == b.op && op.iteration == b.iteration && op.start_ms == b.start_ms
                })
                .map(|op| row(t, op)),
            label: b.short(),
        })
        .collect();
    let iterations = match t.iterations {
        1 => "one iteration".to_owned(),
        n => format!("{n} iterations back to back"),
    };
    Gantt {
        title: format!("{}: {iterations}", t.title),
        source: t.source,
        tracks: tracks(t),
        bars,
        marks,
        span_ms: 0.0,
    }
}

/// Chrome trace-event JSON of `t`: a `thread_name` track per row, a complete (`X`)
/// event per execution interval (named `HtoD`, `kernel` or `DtoH`) on its stream's and
/// its engine's track, and one named `queued` per wait; times in microseconds.
pub fn trace(t: &Timeline) -> String {
    let tracks = tracks(t);
    let tid = |track: Track| tracks.iter().position(|&x| x == track).unwrap_or(0) + 1;
    let mut events: Vec<Value> = (tracks.iter().enumerate())
        .map(|(i, track)| {
            json!({
                "name": "thread_name",
                "ph": "M",
                "pid": 1,
                "tid": i + 1,
                "args": { "name": track.label() },
            })
        })
        .collect();
    for (op, track, queued, (start, end)) in intervals(t) {
        let mut args = json!({
            "stream": match (t.gpu_stream(op.stream), t.lane(op.stream)) {
                (Some((_, s)), _) => json!(s + 1),
                (None, Some(lane)) => json!(lane.label()),
                (None, None) => json!(op.stream + 1),
            },
            "iteration": op.iteration + 1,
            "bytes": op.bytes,
        });
        if let Some(gpu) = t.gpu_of(op) {
            args["gpu"] = json!(gpu);
        }
        let cat = match op.kind {
            _ if queued => "queue",
            OpKind::Kernel => "kernel",
            OpKind::Host => "host",
            _ => "copy",
        };
        let name = match queued {
            true => "queued",
            false => op.call.as_deref().unwrap_or(op.kind.label()),
        };
        events.push(json!({
            "name": name,
            "cat": cat,
            "ph": "X",
            "ts": start * 1e3,
            "dur": (end - start) * 1e3,
            "pid": 1,
            "tid": tid(track),
            "args": args,
        }));
    }
    let doc = json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "source": t.source.label(),
    });
    serde_json::to_string_pretty(&doc).expect("a trace serialises")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::saved::timeline::{Lane, OpKind, TracedGpu};
    use crate::saved::{made_up_op, made_up_timeline};

    fn op(stream: usize, kind: OpKind, ready: f64, start: f64, end: f64) -> TimelineOp {
        TimelineOp {
            ready_ms: Some(ready),
            ..made_up_op(kind, stream, start, end)
        }
    }

    fn timeline() -> Timeline {
        let ops = vec![
            op(0, OpKind::HtoD, 0.0, 0.0, 1.0),
            op(1, OpKind::HtoD, 0.0, 1.0, 2.0),
            op(0, OpKind::Kernel, 1.0, 1.0, 1.5),
        ];
        made_up_timeline(2, ops, 2.0)
    }

    /// Two GPUs (ordinals 0 and 1), two streams each, asynchronous 2 over both at once:
    /// GPU 1's work 0.05 ms behind GPU 0's.
    fn two_gpus() -> Timeline {
        let mut ops = Vec::new();
        for k in 0..2 {
            let at = 0.05 * k as f64;
            let on = |stream: usize, kind, ready: f64, start: f64, end: f64| {
                op(2 * k + stream, kind, ready + at, start + at, end + at)
            };
            ops.extend([
                on(0, OpKind::HtoD, 0.0, 0.0, 1.0),
                on(1, OpKind::HtoD, 0.0, 1.0, 2.0),
                on(0, OpKind::Kernel, 1.0, 1.0, 1.5),
                on(1, OpKind::Kernel, 2.0, 2.0, 2.5),
                on(0, OpKind::DtoH, 1.5, 1.5, 2.5),
                on(1, OpKind::DtoH, 2.5, 2.5, 3.5),
            ]);
        }
        let streams = 2;
        Timeline {
            title: "multi-gpu-overlap, 2 GPUs".into(),
            streams: 4,
            devices: (0..2)
                .map(|ordinal| TracedGpu { ordinal, streams })
                .collect(),
            ops,
            ..timeline()
        }
    }

    /// The names of the tracks of a Chrome trace.
    fn track_names(doc: &Value) -> Vec<&str> {
        (doc["traceEvents"].as_array().unwrap().iter())
            .filter(|e| e["ph"] == "M")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn a_timeline_of_two_gpus_has_each_gpus_streams_and_engines_and_single_gpu_ones_stay() {
        let t = two_gpus();
        let g = gantt(&t, &[]);
        let labels: Vec<String> = g.tracks.iter().map(|t| t.label()).collect();
        let rows = [
            "stream 1",
            "stream 2",
            "HtoD copy engine",
            "SMs",
            "DtoH copy engine",
        ];
        let each_gpus = (0..2).flat_map(|gpu| rows.map(|r| format!("GPU {gpu} {r}")));
        assert_eq!(labels, each_gpus.collect::<Vec<_>>());
        // Each GPU's copies land on its own engine's row, none on the other's.
        let on = |track: Track| (g.bars.iter()).filter(move |b| b.track == track && !b.queued);
        assert_eq!(on(Track::GpuEngine(0, Engine::HtoD)).count(), 2);
        assert_eq!(on(Track::GpuEngine(1, Engine::DtoH)).count(), 2);
        assert!(on(Track::GpuEngine(1, Engine::Sms)).all(|b| b.start_ms >= 1.05));
        assert_eq!(on(Track::Engine(Engine::HtoD)).count(), 0);
        let queued: Vec<&GanttBar> = g.bars.iter().filter(|b| b.queued).collect();
        let waits: Vec<Track> = queued.iter().map(|b| b.track).collect();
        assert_eq!(waits, [Track::GpuStream(0, 1), Track::GpuStream(1, 1)]);
        assert!(queued[1].title.starts_with("HtoD on GPU 1 stream 2"));
        // The Chrome trace names the same rows and says each operation's GPU.
        let doc: Value = serde_json::from_str(&trace(&t)).unwrap();
        assert_eq!(track_names(&doc), labels);
        let last = &doc["traceEvents"].as_array().unwrap().last().unwrap()["args"];
        assert!(last["gpu"] == 1 && last["stream"] == 2, "{last}");
        // Three dividers between streams and engines, the one between the GPUs heavier.
        let svg = crate::report::plot::gantt(&g);
        let dividers = |width: u32| {
            svg.matches(&format!("stroke=\"#777777\" stroke-width=\"{width}\""))
                .count()
        };
        assert_eq!((dividers(2), dividers(4)), (2, 1));
        // A timeline of one GPU has its streams and the two engines its work ran on,
        // and its trace names no GPU.
        let one = timeline();
        assert_eq!(tracks(&one).len(), 2 + 2);
        assert!(!trace(&one).contains("\"gpu\""));
    }

    #[test]
    fn each_operation_is_drawn_on_its_rows_and_traced_on_the_same_tracks() {
        let g = gantt(&timeline(), &[]);
        // No copy out: no DtoH engine row.
        assert!(!g.tracks.contains(&Track::Engine(Engine::DtoH)));
        assert_eq!(g.tracks.len(), 2 + 2);
        let queued: Vec<&GanttBar> = g.bars.iter().filter(|b| b.queued).collect();
        assert_eq!(queued.len(), 1);
        let wait = (queued[0].track, queued[0].start_ms, queued[0].end_ms);
        assert_eq!(wait, (Track::Stream(1), 0.0, 1.0));
        let on_engine = |e| {
            (g.bars.iter())
                .filter(|b| b.track == Track::Engine(e))
                .count()
        };
        assert_eq!(Engine::ALL.map(on_engine), [2, 1, 0], "HtoD, SMs, DtoH");
        // The Chrome trace has the same tracks, and plain names.
        let doc: Value = serde_json::from_str(&trace(&timeline())).unwrap();
        assert_eq!(doc["source"], "cupti");
        assert_eq!(doc["displayTimeUnit"], "ms");
        let events = doc["traceEvents"].as_array().unwrap();
        let names = ["stream 1", "stream 2", "HtoD copy engine", "SMs"];
        assert_eq!(track_names(&doc), names);
        let complete: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(complete.len(), 3 * 2 + 1);
        assert_eq!(complete.iter().filter(|e| e["name"] == "queued").count(), 1);
        let htod = (complete.iter()).find(|e| e["name"] == "HtoD" && e["tid"] == 2);
        let htod = htod.unwrap();
        assert!(htod["ts"] == 1000.0 && htod["dur"] == 1000.0, "{htod}");
        // Backwards or non-finite operations are refused.
        let mut t = timeline();
        t.ops[0].end_ms = -1.0;
        let e = check(&t).unwrap_err();
        assert!(e.contains("stream 1 runs from 0 ms to -1 ms"), "{e}");
        t.ops[0].end_ms = f64::NAN;
        assert!(check(&t).is_err());
        assert!(check(&timeline()).is_ok());
        // Operations off the streams get their lane's row, and no engine row unless they have one.
        let mut t = timeline();
        t.other_lanes = vec![Lane::NullStream, Lane::Host];
        t.ops.push(op(2, OpKind::Memset, 2.0, 2.0, 2.5));
        t.ops.push(TimelineOp {
            call: Some("cuMemFree".into()),
            ..op(3, OpKind::Host, 2.5, 2.5, 3.0)
        });
        let g = gantt(&t, &[]);
        let streams = [Track::Stream(0), Track::Stream(1)];
        let lanes = [Lane::NullStream, Lane::Host].map(Track::Lane);
        let engines = [Engine::HtoD, Engine::Sms].map(Track::Engine);
        assert_eq!(g.tracks, [streams, lanes, engines].concat());
        let on = |track| {
            (g.bars.iter())
                .filter(|b| b.track == track)
                .map(|b| b.kind)
                .collect::<Vec<_>>()
        };
        assert_eq!(on(Track::Lane(Lane::NullStream)), [OpKind::Memset]);
        assert_eq!(on(Track::Lane(Lane::Host)), [OpKind::Host]);
        let doc: Value = serde_json::from_str(&trace(&t)).unwrap();
        let host = (doc["traceEvents"].as_array().unwrap().iter())
            .find(|e| e["cat"] == "host")
            .unwrap();
        let (name, stream) = (&host["name"], &host["args"]["stream"]);
        assert!(name == "cuMemFree" && stream == "host", "{host}");
    }
}
