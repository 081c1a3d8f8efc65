//! The drawings as SVG: marks and colours per model value, axes, ticks and labels, bad
//! data skipped; the heat maps' and timelines' tests are in [`maps`].
use super::*;
use crate::report::chart::{Level, LineSeries, PALETTE, XAxis, YScale};
use crate::report::figures;
use crate::saved::timeline::Engine;

/// How plotters writes a model colour.
fn hex(c: Color) -> String {
    c.to_ascii_uppercase()
}

fn parse(svg: &str) -> roxmltree::Document<'_> {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc
}

fn count(svg: &str, tag: &str, attribute: &str, value: &str) -> usize {
    parse(svg)
        .descendants()
        .filter(|n| n.has_tag_name(tag) && n.attribute(attribute) == Some(value))
        .count()
}

/// The `tag` elements drawn in `color`: stroked for a `polyline`, else filled.
fn marks(svg: &str, tag: &str, color: &str) -> usize {
    let attribute = if tag == "polyline" { "stroke" } else { "fill" };
    count(svg, tag, attribute, color)
}

fn texts(svg: &str) -> Vec<String> {
    parse(svg)
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_owned())
        .collect()
}

fn occurrences(svg: &str, text: &str) -> usize {
    texts(svg).iter().filter(|t| *t == text).count()
}

/// The `rect`s filled with `fill`, as [x, y, width, height].
fn rects(svg: &str, fill: &str) -> Vec<[i64; 4]> {
    let number = |n: roxmltree::Node, a| n.attribute(a).and_then(|v| v.parse().ok()).unwrap();
    (parse(svg).descendants())
        .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(fill))
        .map(|n| ["x", "y", "width", "height"].map(|a| number(n, a)))
        .collect()
}

fn line(name: &str, color: Color, points: &[(f64, f64)]) -> LineSeries {
    figures::line(name, color, false, points.to_vec())
}

/// A level drawn in "#222222".
fn level(name: &str, y: f64) -> Level {
    Level {
        name: name.into(),
        color: "#222222",
        y,
    }
}

fn categories(n: usize) -> XAxis {
    XAxis::Categories((0..n).map(|i| format!("cat {i}")).collect())
}

fn model() -> Chart {
    let (x, y) = (categories(3), YScale::Linear);
    figures::blank("Throughput by size".into(), "size", "GB/s", x, y)
}

#[test]
fn grouped_bars_in_upper_case_colours_and_ranges_that_do_not_hang() {
    let whiskers = vec![(0.8, 1.2), (1.9, 2.2), (2.5, 3.5)];
    let a = figures::bars("alone", PALETTE[0], vec![1.0, 2.0, 3.0], Some(whiskers));
    let b = figures::bars("together", PALETTE[1], vec![1.5, 2.5, 3.5], None);
    let c = Chart {
        bars: vec![a, b],
        ..model()
    };
    let svg = chart(&c);
    assert_eq!(PALETTE[0], "#4e79a7");
    assert!(svg.contains("fill=\"#4E79A7\"") && !svg.contains("#4e79a7"));
    let grey = RGBColor(0x80, 0x80, 0x80);
    let colors = ["#4E79A7", "nonsense", "#12345é"].map(rgb);
    assert_eq!(colors, [rgb("#4e79a7"), grey, grey]);
    assert_eq!(
        [0, 1].map(|i| marks(&svg, "rect", &hex(PALETTE[i]))),
        [3, 3]
    );
    // A stem and two caps per whisker, as plain lines: no ErrorBar circles.
    assert_eq!(marks(&svg, "polyline", "#333333"), 9);
    assert_eq!(count(&svg, "circle", "stroke", "#333333"), 0);
    for text in "Throughput by size|size|GB/s|cat 0|cat 1|cat 2|alone|together".split('|') {
        assert_eq!(occurrences(&svg, text), 1, "{text}");
    }
    // Side by side: in each slot the second series' bar starts where the first ends.
    let (first, second) = (rects(&svg, &hex(PALETTE[0])), rects(&svg, &hex(PALETTE[1])));
    for (a, b) in first.iter().zip(&second) {
        assert!((a[0] + a[2] - b[0]).abs() <= 1, "{a:?} {b:?}");
    }
    // Legend swatches are circles.
    assert_eq!(marks(&svg, "circle", &hex(PALETTE[0])), 1);
    // Degenerate and huge ranges do not hang.
    let huge = [(5.0, 5.0), (5.0, 5.0), (1e300, -1e300), (f64::MAX, 1.0)];
    let c = Chart {
        x: XAxis::Linear,
        lines: vec![line("l", PALETTE[0], &huge)],
        ..model()
    };
    assert_eq!(marks(&chart(&c), "circle", &hex(PALETTE[0])), 2);
    let scales = [YScale::Linear, YScale::Log].into_iter().cycle();
    for (v, y_scale) in [1e-300, 1e-150, -1e200, 1e200].into_iter().zip(scales) {
        let tiny = Chart {
            x: XAxis::Linear,
            y_scale,
            lines: vec![line("l", PALETTE[0], &[(v, v), (v, v)])],
            ..model()
        };
        assert_eq!(marks(&chart(&tiny), "circle", &hex(PALETTE[0])), 2, "{v}");
    }
    let points = [3.0, -2.0, 0.0, 1e-300].map(|v| (v, v));
    for (lo, hi) in points.into_iter().chain([(-1e200, 1e200)]) {
        for log in [false, true] {
            let a = Axis::fit(log, 10.0, !log, [lo, hi]);
            let ordered = a.lo.is_finite() && a.hi.is_finite() && a.lo < a.hi;
            assert!(ordered, "{lo} {hi} {a:?}");
            assert!(!log || a.lo > 0.0);
        }
    }
}

#[test]
fn lines_markers_levels_and_log_axes() {
    let dashed = figures::line("model", PALETTE[4], true, vec![(0.0, 1.0), (2.0, 3.0)]);
    let measured = [(0.0, 1.0), (1.0, 2.0), (2.0, 2.5)];
    let c = Chart {
        lines: vec![line("measured", PALETTE[0], &measured), dashed],
        levels: vec![level("peak", 4.0)],
        ..model()
    };
    let svg = chart(&c);
    // One polyline for the line, one for its legend swatch; a marker per point.
    assert_eq!(marks(&svg, "polyline", &hex(PALETTE[0])), 2);
    assert_eq!(marks(&svg, "circle", &hex(PALETTE[0])), 3);
    // Dashes: many short polylines.
    assert!(marks(&svg, "polyline", &hex(PALETTE[4])) > 5);
    assert_eq!(marks(&svg, "circle", &hex(PALETTE[4])), 0);
    assert!(marks(&svg, "polyline", "#222222") > 10);
    for text in ["measured", "model", "peak"] {
        assert_eq!(occurrences(&svg, text), 1, "{text}");
    }
    // The level spans the whole plot: its dashes reach both ends of the x axis.
    let doc = parse(&svg);
    let dashes = (doc.descendants())
        .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some("#222222"));
    let points = dashes.flat_map(|n| n.attribute("points").unwrap().split_whitespace());
    let xs: Vec<i64> = (points.map(|p| p.split(',').next().unwrap().parse().unwrap())).collect();
    let (lo, hi) = (xs.iter().min().unwrap(), xs.iter().max().unwrap());
    assert!(hi - lo > 400, "{lo}..{hi}");
    // Log axes skip values not positive; a log x axis has base-2 ticks.
    let decades = [(0.0, 0.0), (1.0, 100.0), (2.0, 1000.0)];
    let c = Chart {
        y_scale: YScale::Log,
        bars: vec![figures::bars("b", PALETTE[0], vec![0.0, 10.0, -1.0], None)],
        lines: vec![line("l", PALETTE[1], &decades)],
        levels: vec![level("zero", 0.0)],
        ..model()
    };
    let svg = chart(&c);
    assert_eq!(marks(&svg, "rect", &hex(PALETTE[0])), 1);
    assert_eq!(marks(&svg, "circle", &hex(PALETTE[1])), 2);
    let dashes = marks(&svg, "polyline", "#222222");
    assert_eq!(dashes, 3, "only the legend swatch's dashes");
    let ticks = texts(&svg);
    assert!(ticks.iter().any(|t| t == "1000"), "{ticks:?}");
    let powers = [(-1.0, 1.0), (0.0, 1.0), (1.0, 2.0), (64.0, 3.0)];
    let c = Chart {
        x: XAxis::Log,
        lines: vec![line("l", PALETTE[0], &powers)],
        ..model()
    };
    let svg = chart(&c);
    assert_eq!(marks(&svg, "circle", &hex(PALETTE[0])), 2);
    let ticks = texts(&svg);
    for t in ["1", "2", "4", "64"] {
        assert!(ticks.iter().any(|x| x == t), "{t} in {ticks:?}");
    }
}

#[test]
fn bad_values_are_skipped_and_empty_or_degenerate_charts_render() {
    let whiskers = vec![(0.5, f64::NAN), (1.0, 2.0), (1.0, 2.0), (1.5, 2.5)];
    let values = vec![1.0, f64::NAN, f64::INFINITY, 2.0];
    let b = figures::bars("b", PALETTE[0], values, Some(whiskers));
    let nan = (1.0, f64::NAN);
    let points = [(0.0, 1.0), nan, (2.0, 2.0), (3.0, f64::NEG_INFINITY)];
    let c = Chart {
        x: categories(4),
        bars: vec![b],
        lines: vec![line("l", PALETTE[1], &points)],
        levels: vec![level("nan", f64::NAN)],
        ..model()
    };
    let svg = chart(&c);
    assert_eq!(marks(&svg, "rect", &hex(PALETTE[0])), 2);
    assert_eq!(marks(&svg, "polyline", "#333333"), 3, "one usable whisker");
    assert_eq!(marks(&svg, "circle", &hex(PALETTE[1])), 2);
    // The NaN splits the line: two single points, no segment (the legend's only).
    assert_eq!(marks(&svg, "polyline", &hex(PALETTE[1])), 1);
    assert!(!svg.contains("NaN") && !svg.contains("inf"));
    // An empty chart renders its axes and a note.
    for x in [categories(0), XAxis::Linear, XAxis::Log] {
        for y_scale in [YScale::Linear, YScale::Log] {
            let c = Chart {
                x: x.clone(),
                y_scale,
                ..model()
            };
            let svg = chart(&c);
            assert_eq!(occurrences(&svg, "no data"), 1);
            assert_eq!(occurrences(&svg, "Throughput by size"), 1);
            assert!(marks(&svg, "polyline", "#000000") > 0, "axes");
        }
    }
    let only_bad = Chart {
        bars: vec![figures::bars("b", PALETTE[0], vec![f64::NAN], None)],
        ..model()
    };
    assert_eq!(occurrences(&chart(&only_bad), "no data"), 1);
    // Every category is labelled.
    for n in [1, 2, 7, 12, 25] {
        let values = (0..n).map(|i| i as f64).collect();
        let c = Chart {
            x: categories(n),
            bars: vec![figures::bars("b", PALETTE[0], values, None)],
            ..model()
        };
        let svg = chart(&c);
        let texts = texts(&svg);
        for i in 0..n {
            // Whole on one line, or wrapped at its space where slots are narrow.
            let whole = occurrences(&svg, &format!("cat {i}"));
            let wrapped = texts.contains(&"cat".to_owned()) && texts.contains(&i.to_string());
            assert!(whole == 1 || (whole == 0 && wrapped), "{n} categories: {i}");
        }
        assert_eq!(marks(&svg, "rect", &hex(PALETTE[0])), n);
    }
}

mod maps;
