//! Heat maps and timelines as SVG: cells, values, colours, marks and contours; bars,
//! labels and the source note.
use super::super::gantt::nice_ceil;
use super::super::heat::cell_text;
use super::super::heat::heat_color;
use super::*;
use crate::report::chart::{GanttBar, GanttMark, Track, kind_color, queued_color};
use crate::saved::timeline::{OpKind, TraceSource};

fn heat() -> HeatMap {
    HeatMap {
        title: "Overlap pays off".into(),
        x_label: "streams".into(),
        y_label: "size".into(),
        columns: vec!["1".into(), "2".into(), "4".into()],
        rows: vec!["small".into(), "large".into()],
        values: vec![
            vec![Some(0.8), Some(1.37), None],
            vec![Some(1.1), Some(2.0), Some(0.5)],
        ],
        threshold: 1.0,
        contour: Some("pay-off line"),
        unit: "×",
        marked: vec![(0, 1), (1, 2), (5, 5)],
    }
}

fn cell_rects(svg: &str) -> usize {
    let doc = parse(svg);
    let skip = ["#FFFFFF", "#DDDDDD", "none"];
    doc.descendants()
        .filter(|n| {
            n.has_tag_name("rect") && !skip.contains(&n.attribute("fill").unwrap_or("none"))
        })
        .count()
}

#[test]
fn heat_map_cells_values_colours_contours_and_missing() {
    let h = heat();
    let svg = heat_map(&h);
    assert_eq!(cell_rects(&svg), 5);
    assert_eq!(marks(&svg, "rect", "#DDDDDD"), 1);
    let labels = "Overlap pays off|0.80×|1.37×|1.10×|2.00×|0.50×|–|small|large|1|2|4";
    for text in labels.split('|') {
        assert_eq!(occurrences(&svg, text), 1, "{text}");
    }
    // Row 0 is on top.
    let y_of = |text: &str| {
        let doc = parse(&svg);
        let node = (doc.descendants()).find(|n| n.text().map(str::trim) == Some(text));
        let y = node.unwrap().attribute("y");
        y.unwrap().parse::<f64>().unwrap()
    };
    assert!(y_of("small") < y_of("large"));
    // The two marked cells inside the grid, plus the legend swatch; (5, 5) is ignored.
    assert_eq!(marks(&svg, "polyline", "#5B1A8C"), 2 + 1);
    // Edges between ≥ 1 and < 1: (0,0)|(0,1), (1,1)|(1,2), (0,0)/(1,0); (0,1)/(1,1) are
    // both above and (0,2) is missing. Plus the legend swatch.
    assert_eq!(marks(&svg, "polyline", "#1F1F1F"), 3 + 1);
    assert_eq!(occurrences(&svg, "pay-off line"), 1);
    // Colours are two-sided, values written in their unit.
    let range = (0.5, 2.0);
    let (above, _) = heat_color(2.0, 1.0, range);
    let (below, _) = heat_color(0.5, 1.0, range);
    assert!(above.1 > above.0 && above.1 > above.2, "green: {above:?}");
    assert!(below.0 > below.1 && below.0 > below.2, "red: {below:?}");
    let (weak, t) = heat_color(1.1, 1.0, range);
    assert!(t < 0.5 && weak.1 > above.1, "weaker is lighter");
    let flat = [(1.0, (1.0, 1.0)), (f64::NAN, range)].map(|(t, r)| heat_color(1.0, t, r).1);
    assert_eq!(flat, [0.5, 0.5]);
    let units = ["×", "{:.1}×", "{} ms"].map(|unit| cell_text(1.368, unit));
    assert_eq!(units, ["1.37×", "1.4×", "1.37 ms"]);
    let plain = ["", "{:.x}"].map(|unit| cell_text(2.0, unit));
    assert_eq!(plain, ["2.00", "2.00"]);
    // A heat map with no contour names none.
    // Every cell above the threshold: no edge to draw, so the legend names no line; and
    // a map that draws no line at all, whatever its cells.
    let (mut all_above, mut no_line) = (heat(), heat());
    (all_above.threshold, all_above.marked, no_line.contour) = (0.1, vec![], None);
    for h in [all_above, no_line] {
        let svg = heat_map(&h);
        assert_eq!(marks(&svg, "polyline", "#1F1F1F"), 0);
        assert_eq!(occurrences(&svg, "pay-off line"), 0);
    }
    // An empty heat map renders.
    let h = HeatMap {
        columns: vec![],
        rows: vec![],
        values: vec![],
        marked: vec![(0, 0)],
        ..heat()
    };
    let svg = heat_map(&h);
    assert_eq!(occurrences(&svg, "no data"), 1);
    assert_eq!(cell_rects(&svg), 0);
    let ragged = HeatMap {
        values: vec![vec![Some(f64::NAN)]],
        ..heat()
    };
    assert_eq!(cell_rects(&heat_map(&ragged)), 0);
    assert_eq!(marks(&heat_map(&ragged), "rect", "#DDDDDD"), 6);
    // Tick labels are short.
    let ticks = [0.0, 1000.0, 0.125, 2.5, -0.2, 3e7].map(tick);
    assert_eq!(ticks, ["0", "1000", "0.125", "2.5", "-0.2", "3.0e7"]);
    let binary = [512.0, 1024.0, 3.0 * 1048576.0, 1536.0, f64::INFINITY].map(tick_binary);
    assert_eq!(binary, ["512", "1Ki", "3Mi", "1536", "inf"]);
}

fn bar(track: Track, kind: OpKind, queued: bool, start_ms: f64, end_ms: f64) -> GanttBar {
    GanttBar {
        track,
        kind,
        queued,
        start_ms,
        end_ms,
        title: format!("{kind:?} from {start_ms} ms"),
    }
}

fn timeline() -> Gantt {
    let (s0, s1) = (Track::Stream(0), Track::Stream(1));
    Gantt {
        title: "sincos-overlap, 2 streams".into(),
        source: TraceSource::Cupti,
        tracks: [s0, s1]
            .into_iter()
            .chain(Engine::ALL.map(Track::Engine))
            .collect(),
        bars: vec![
            bar(s0, OpKind::HtoD, false, 0.0, 1.0),
            bar(s0, OpKind::Kernel, false, 1.0, 2.5),
            bar(s0, OpKind::DtoH, false, 2.5, 3.0),
            bar(s1, OpKind::HtoD, true, 0.0, 1.0),
            bar(s1, OpKind::HtoD, false, 1.0, 2.0),
            bar(s1, OpKind::Kernel, false, 2.5, 3.7),
            bar(Track::Engine(Engine::HtoD), OpKind::HtoD, false, 0.0, 2.0),
            bar(Track::Engine(Engine::Sms), OpKind::Kernel, false, 1.0, 3.7),
            bar(Track::Engine(Engine::DtoH), OpKind::DtoH, false, 2.5, 3.0),
        ],
        marks: Vec::new(),
        span_ms: 0.0,
    }
}

#[test]
fn gantt_bars_labels_source_and_bad_bars() {
    let g = timeline();
    let svg = gantt(&g);
    // Shown beside a longer timeline, it keeps the longer one's scale.
    let longer = Gantt {
        span_ms: 20.0,
        ..timeline()
    };
    let tick = |svg: &str, t: &str| svg.contains(&format!(">\n{t}\n</text>"));
    assert!(!tick(&svg, "20") && tick(&gantt(&longer), "20"));
    assert_eq!(marks(&svg, "rect", &hex(kind_color(OpKind::HtoD))), 3);
    assert_eq!(marks(&svg, "rect", &hex(kind_color(OpKind::Kernel))), 3);
    assert_eq!(marks(&svg, "rect", &hex(kind_color(OpKind::DtoH))), 2);
    assert_eq!(marks(&svg, "rect", &hex(queued_color(OpKind::HtoD))), 1);
    for track in &g.tracks {
        assert_eq!(occurrences(&svg, &track.label()), 1, "{track:?}");
    }
    let labels = "sincos-overlap, 2 streams|GPU records (CUPTI)|HtoD|kernel|DtoH|time (ms)";
    for text in labels.split('|').chain(["ready, waiting to start"]) {
        assert_eq!(occurrences(&svg, text), 1, "{text}");
    }
    assert_eq!(marks(&svg, "polyline", "#777777"), 1, "one divider");
    // The axis ends just past the last end (3.7 ms), not at the next power of ten.
    assert_eq!((occurrences(&svg, "4"), occurrences(&svg, "5")), (0, 0));
    assert_eq!(occurrences(&svg, "3.5"), 1);
    // Every bar says what it is when pointed at.
    let doc = parse(&svg);
    let titled: Vec<&str> = (doc.descendants())
        .filter(|n| n.has_tag_name("rect"))
        .filter_map(|n| n.children().find(|c| c.has_tag_name("title")))
        .filter_map(|t| t.text())
        .collect();
    assert_eq!(titled.len(), g.bars.len());
    assert_eq!(titled[0], "HtoD from 0 ms");
    // Queued bars are drawn first, under the execution bars.
    let rects = (doc.descendants()).filter(|n| n.has_tag_name("rect"));
    let fills: Vec<&str> = rects.filter_map(|n| n.attribute("fill")).collect();
    let first = |c: Color| fills.iter().position(|f| *f == hex(c)).unwrap();
    assert!(first(queued_color(OpKind::HtoD)) < first(kind_color(OpKind::HtoD)));
    // Without queues or CUPTI.
    let mut g = timeline();
    g.source = TraceSource::Events;
    g.bars.retain(|b| !b.queued);
    // Bad bars: on a track the timeline lacks, not finite, backwards.
    let bad = [(7, 0.0, 1.0), (0, f64::NAN, 1.0), (0, 2.0, 1.0)];
    g.bars
        .extend(bad.map(|(s, start, end)| bar(Track::Stream(s), OpKind::HtoD, false, start, end)));
    let svg = gantt(&g);
    let events = "event brackets: queueing included (CUPTI unavailable)";
    assert_eq!(occurrences(&svg, events), 1);
    assert_eq!(occurrences(&svg, "ready, waiting to start"), 0);
    let htod = marks(&svg, "rect", &hex(kind_color(OpKind::HtoD)));
    assert_eq!(htod, 3, "bad bars skipped");
}

#[test]
fn breaks_are_marked_where_they_started_every_row_named_and_no_data_said() {
    let mut g = timeline();
    g.tracks.extend((2..32).map(Track::Stream));
    let mark = |at_ms: f64, track| GanttMark {
        at_ms,
        end_ms: at_ms + 1e-4,
        track,
        label: "HtoD on the NULL stream".into(),
    };
    // Two breaks a hair apart: the second's name moves right, not out of the chart.
    g.marks = vec![mark(1.0, Some(Track::Stream(0))), mark(1.01, None)];
    let svg = gantt(&g);
    assert_eq!(occurrences(&svg, "1: HtoD on the NULL stream"), 1);
    assert_eq!(occurrences(&svg, "2: HtoD on the NULL stream"), 1);
    assert_eq!(occurrences(&svg, "concurrency break"), 1);
    // The operation to blame is boxed on its row, wide enough to see, however short.
    let doc = parse(&svg);
    let widths: Vec<f64> = (doc.descendants())
        .filter(|n| n.has_tag_name("rect") && n.attribute("stroke") == Some("#B00020"))
        .map(|n| n.attribute("width").unwrap().parse().unwrap())
        .collect();
    let one_box = widths.len() == 1 && widths[0] >= 5.0;
    assert!(one_box, "box widths {widths:?}");
    for track in &g.tracks {
        assert_eq!(occurrences(&svg, &track.label()), 1, "{track:?}");
    }
    // An empty timeline renders.
    let g = Gantt {
        tracks: vec![],
        bars: vec![],
        ..timeline()
    };
    let svg = gantt(&g);
    assert_eq!(occurrences(&svg, "no data"), 1);
    let ends = [3.7, 2.0, 0.011, -1.0].map(nice_ceil);
    assert_eq!(ends, [5.0, 2.0, 0.02, 1.0]);
}
