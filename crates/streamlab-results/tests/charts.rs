//! Every chart the recorded runs produce reads: no text of a chart, timeline or heat map
//! overlaps another text or leaves the canvas. Each text's box is computed from the SVG
//! as a viewer lays it out (its anchor, its baseline shift, its rotation) with the widths
//! of DejaVu Sans ([`streamlab_results::report::text`]); the reports' charts and the
//! comparisons' charts of the runs in `tests/runs/` are all checked.
use std::path::Path;

use streamlab_results::compare::{self, ComparedRun};
use streamlab_results::report::text;
use streamlab_results::run::SavedRun;
use streamlab_results::run::report::document;

/// Pixels of overlap or overflow forgiven (rounding of positions).
const SLACK: f64 = 0.5;

#[derive(Debug, Clone)]
struct TextBox {
    text: String,
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl TextBox {
    fn overlaps(&self, other: &TextBox) -> bool {
        self.x0 + SLACK < other.x1
            && other.x0 + SLACK < self.x1
            && self.y0 + SLACK < other.y1
            && other.y0 + SLACK < self.y1
    }
}

fn number(node: roxmltree::Node, name: &str) -> f64 {
    node.attribute(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("<{}> without a numeric {name}", node.tag_name().name()))
}

/// The boxes of every non-empty text of `svg`, and the canvas' size.
fn boxes(svg: &str) -> (Vec<TextBox>, f64, f64) {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    let root = doc.root_element();
    let (width, height) = (number(root, "width"), number(root, "height"));
    let mut out = Vec::new();
    for node in doc.descendants().filter(|n| n.has_tag_name("text")) {
        let content = node.text().unwrap_or("").trim().to_owned();
        if content.is_empty() {
            continue;
        }
        let (x, y, px) = (
            number(node, "x"),
            number(node, "y"),
            number(node, "font-size"),
        );
        let w = text::width(&content, px);
        let x0 = match node.attribute("text-anchor") {
            Some("middle") => x - w / 2.0,
            Some("end") => x - w,
            _ => x,
        };
        // The em box, from the baseline shift plotters writes for each vertical anchor.
        let y0 = match node.attribute("dy") {
            Some("0.76em") => y,
            Some("-0.5ex") => y - px,
            _ => y - px / 2.0,
        };
        let (dx0, dx1, dy0, dy1) = (x0 - x, x0 + w - x, y0 - y, y0 + px - y);
        let rotation = node
            .attribute("transform")
            .and_then(|t| t.strip_prefix("rotate("))
            .and_then(|t| t.split(',').next())
            .and_then(|a| a.trim().parse::<f64>().ok());
        let (bx0, bx1, by0, by1) = match rotation {
            None => (dx0, dx1, dy0, dy1),
            // (dx, dy) turns to (dy, −dx).
            Some(a) if (a - 270.0).abs() < 1e-9 => (dy0, dy1, -dx1, -dx0),
            // (dx, dy) turns to (−dy, dx).
            Some(a) if (a - 90.0).abs() < 1e-9 => (-dy1, -dy0, dx0, dx1),
            Some(a) => panic!("a text turned by {a}°"),
        };
        out.push(TextBox {
            text: content,
            x0: x + bx0,
            y0: y + by0,
            x1: x + bx1,
            y1: y + by1,
        });
    }
    (out, width, height)
}

/// What is wrong with `svg`'s text, one line each.
fn faults(name: &str, svg: &str) -> Vec<String> {
    let (boxes, width, height) = boxes(svg);
    let mut out = Vec::new();
    for (i, b) in boxes.iter().enumerate() {
        if b.x0 < -SLACK || b.y0 < -SLACK || b.x1 > width + SLACK || b.y1 > height + SLACK {
            out.push(format!(
                "{name}: {:?} leaves the canvas ({:.0}..{:.0} × {:.0}..{:.0})",
                b.text, b.x0, b.x1, b.y0, b.y1
            ));
        }
        for other in &boxes[i + 1..] {
            if b.overlaps(other) {
                out.push(format!("{name}: {:?} overlaps {:?}", b.text, other.text));
            }
        }
    }
    out
}

/// Every chart of the report of recorded run `run`, by file name.
fn report_charts(run: &Path) -> Vec<(String, String)> {
    let doc = document(&SavedRun::load(run).unwrap()).unwrap();
    let mut out = Vec::new();
    for s in &doc.sections {
        out.extend((s.figures.iter()).map(|f| (f.file().to_owned(), f.svg.clone())));
        out.extend((s.timelines.iter()).map(|t| (t.file.clone(), t.svg.clone())));
    }
    out
}

fn runs() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/runs");
    let mut runs: Vec<_> = (std::fs::read_dir(dir).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    runs.sort();
    runs
}

#[test]
fn no_text_of_any_chart_overlaps_or_leaves_the_canvas() {
    let mut charts = Vec::new();
    let runs = runs();
    for run in &runs {
        let name = run.file_name().unwrap().to_string_lossy().into_owned();
        charts
            .extend((report_charts(run).into_iter()).map(|(f, svg)| (format!("{name}/{f}"), svg)));
    }
    for pair in runs.windows(2) {
        let a = ComparedRun::load("A", &pair[0]).unwrap();
        let b = ComparedRun::load("B", &pair[1]).unwrap();
        let c = compare::compare(&a, &b, 0.0);
        for f in c.sections.iter().flat_map(|s| &s.figures) {
            charts.push((
                format!("{} vs {}/{}", a.name(), b.name(), f.file()),
                f.svg.clone(),
            ));
        }
    }
    assert!(charts.len() > 100, "only {} charts", charts.len());
    let all: Vec<String> = (charts.iter())
        .flat_map(|(name, svg)| faults(name, svg))
        .collect();
    assert!(all.is_empty(), "{} faults:\n{}", all.len(), all.join("\n"));
}

#[test]
fn the_box_check_finds_overlap_and_clipping() {
    let svg = r#"<svg width="100" height="50" xmlns="http://www.w3.org/2000/svg">
<text x="10" y="10" dy="0.76em" text-anchor="start" font-size="12">left words</text>
<text x="30" y="12" dy="0.76em" text-anchor="start" font-size="12">over</text>
<text x="95" y="40" dy="0.5ex" text-anchor="start" font-size="12">out</text>
<text x="5" y="30" dy="0.76em" text-anchor="middle" font-size="12" transform="rotate(270, 5, 30)">up</text>
</svg>"#;
    let found = faults("t", svg);
    assert!(
        found
            .iter()
            .any(|f| f.contains("\"left words\" overlaps \"over\"")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|f| f.contains("\"out\" leaves the canvas")),
        "{found:?}"
    );
    assert_eq!(found.len(), 2, "{found:?}");
    // Turned text: "up" runs upwards, centred on (5, 30); its box is thin and tall.
    let (b, _, _) = boxes(svg);
    let up = &b[3];
    assert!(up.x1 - up.x0 < up.y1 - up.y0, "{up:?}");
}

/// Where a timeline's bars are named wrong: each bar (a `<rect>` with a title, in drawing
/// order, matched to the model's bars) must sit on the row of the label nearest to it, and
/// that label must name the bar's own track; and every track must be named.
fn misnamed(name: &str, t: &streamlab_results::report::section::TimelineFigure) -> Vec<String> {
    use streamlab_results::report::plot::gantt::drawn;
    let doc = roxmltree::Document::parse(&t.svg).expect("well-formed SVG");
    let labels: Vec<(String, f64)> = (doc.descendants())
        .filter(|n| n.has_tag_name("text") && n.attribute("text-anchor") == Some("end"))
        .map(|n| (n.text().unwrap_or("").trim().to_owned(), number(n, "y")))
        .collect();
    let rects: Vec<f64> = (doc.descendants())
        .filter(|n| n.has_tag_name("rect") && n.children().any(|c| c.has_tag_name("title")))
        .map(|n| number(n, "y") + number(n, "height") / 2.0)
        .collect();
    let bars = drawn(&t.gantt);
    let mut out = Vec::new();
    if rects.len() != bars.len() {
        out.push(format!(
            "{name}: {} bars drawn, {} in the model",
            rects.len(),
            bars.len()
        ));
    }
    for track in &t.gantt.tracks {
        if !labels.iter().any(|(l, _)| *l == track.label()) {
            out.push(format!("{name}: {} is not named", track.label()));
        }
    }
    for (y, bar) in rects.iter().zip(bars) {
        let nearest = (labels.iter()).min_by(|a, b| (a.1 - y).abs().total_cmp(&(b.1 - y).abs()));
        match nearest {
            Some((label, ly)) if *label == bar.track.label() && (ly - y).abs() < 11.0 => {}
            other => out.push(format!(
                "{name}: a bar of {} sits by the label {:?}",
                bar.track.label(),
                other.map(|o| &o.0)
            )),
        }
    }
    out
}

#[test]
fn every_timeline_row_is_named_and_every_bar_sits_on_its_named_row() {
    let mut checked = 0;
    let mut all = Vec::new();
    for run in runs() {
        let doc = document(&SavedRun::load(&run).unwrap()).unwrap();
        for t in doc.sections.iter().flat_map(|s| &s.timelines) {
            all.extend(misnamed(&format!("{}/{}", run.display(), t.file), t));
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} timelines");
    assert!(all.is_empty(), "{} faults:\n{}", all.len(), all.join("\n"));
}

#[test]
fn the_row_check_finds_a_bar_by_another_rows_label() {
    let run = runs().into_iter().next().unwrap();
    let doc = document(&SavedRun::load(&run).unwrap()).unwrap();
    let mut t = (doc.sections.iter().flat_map(|s| &s.timelines))
        .find(|t| t.gantt.tracks.len() > 4)
        .unwrap()
        .clone();
    assert!(misnamed("t", &t).is_empty());
    // The SMs and the DtoH copy engine swap names, as a drawing that shifts its labels by
    // a row would show them.
    t.svg = t
        .svg
        .replace(">\nSMs\n<", ">\nSWAP\n<")
        .replace(">\nDtoH copy engine\n<", ">\nSMs\n<")
        .replace(">\nSWAP\n<", ">\nDtoH copy engine\n<");
    let found = misnamed("t", &t);
    assert!(
        found
            .iter()
            .any(|f| f.contains("a bar of SMs sits by the label Some(\"DtoH copy engine\")")),
        "{found:?}"
    );
}
