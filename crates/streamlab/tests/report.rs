//! The report rendered from saved JSON: the committed H100 results, the same folder without
//! the files later runs added, and a small sincos fixture, each rendered into a scratch
//! copy. Checks that every chart and timeline is well-formed SVG with the expected bars
//! and rows, that each trace matches its timeline, that `report.md` links every SVG, that
//! headless Chromium shows every inline chart, and that the limits, the Rust-against-CUDA
//! C++ comparison and one efficiency per configuration are there, with a spot-checked
//! efficiency recomputed here from the raw means.
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use streamlab::report::document::{Document, EFFICIENCY, Section, Table};
use streamlab::report::{self, chart, json::SavedRun};
use streamlab::results::{
    DeviceInfo, OpKind, Provenance, SincosOverlapResult, SincosPoint, SincosVariant, Timeline,
    TimelineOp, Verification, files,
};
use streamlab::stats::Series;

const CHROMIUM: &str = "/usr/bin/chromium";

/// A fresh, empty scratch folder.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("streamlab-report-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The committed H100 JSON results copied into a scratch folder.
fn h100_copy(name: &str) -> PathBuf {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/results/h100");
    let dir = scratch(name);
    for entry in std::fs::read_dir(&results).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    dir
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Parse `name` as XML with an `<svg>` root; the number of elements of each class.
fn svg_classes(dir: &Path, name: &str) -> std::collections::HashMap<String, usize> {
    let text = read(dir, name);
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg", "{name}");
    let title = doc.descendants().find(|n| n.has_tag_name("title"));
    assert!(
        title.and_then(|t| t.text()).is_some_and(|t| !t.is_empty()),
        "{name} has no title"
    );
    let mut counts = std::collections::HashMap::new();
    for node in doc.descendants() {
        if let Some(class) = node.attribute("class") {
            *counts.entry(class.to_owned()).or_insert(0) += 1;
        }
    }
    counts
}

fn count(classes: &std::collections::HashMap<String, usize>, class: &str) -> usize {
    classes.get(class).copied().unwrap_or(0)
}

/// The `data-value` of every element of `class` in `name`.
fn values(dir: &Path, name: &str, class: &str) -> Vec<f64> {
    let text = read(dir, name);
    let doc = roxmltree::Document::parse(&text).unwrap();
    doc.descendants()
        .filter(|n| n.attribute("class") == Some(class))
        .filter_map(|n| n.attribute("data-value"))
        .map(|v| v.parse().unwrap())
        .collect()
}

/// Gantt and trace of `timelines`, under `<stem>-timeline[-N].svg` / `<stem>-trace[-N].json`.
fn check_timelines(dir: &Path, stem: &str, timelines: &[&Timeline]) -> usize {
    for (i, t) in timelines.iter().enumerate() {
        let suffix = if timelines.len() == 1 {
            String::new()
        } else {
            format!("-{}", i + 1)
        };
        let gantt = svg_classes(dir, &format!("{stem}-timeline{suffix}.svg"));
        assert_eq!(
            count(&gantt, "row"),
            t.streams,
            "{stem}{suffix}: one row per stream"
        );
        assert_eq!(
            count(&gantt, "op"),
            t.ops.len(),
            "{stem}{suffix}: one bar per op"
        );
        check_trace(&read(dir, &format!("{stem}-trace{suffix}.json")), t);
    }
    timelines.len()
}

/// One named track per stream, one complete event per op with its duration in µs.
fn check_trace(text: &str, t: &Timeline) {
    let doc: Value = serde_json::from_str(text).unwrap();
    assert_eq!(doc["displayTimeUnit"], "ms");
    let events = doc["traceEvents"].as_array().unwrap();
    let tracks: Vec<&Value> = events.iter().filter(|e| e["ph"] == "M").collect();
    assert_eq!(
        tracks.len(),
        t.streams,
        "{}: thread_name per stream",
        t.title
    );
    for (i, track) in tracks.iter().enumerate() {
        assert_eq!(track["name"], "thread_name");
        assert_eq!(track["tid"], i + 1);
        assert_eq!(track["args"]["name"], format!("stream {}", i + 1));
    }
    let complete: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(complete.len(), t.ops.len(), "{}", t.title);
    for (event, op) in complete.iter().zip(&t.ops) {
        for key in ["name", "cat", "ts", "dur", "pid", "tid"] {
            assert!(!event[key].is_null(), "{}: event lacks {key}", t.title);
        }
        let dur = event["dur"].as_f64().unwrap();
        assert!((dur - (op.end_ms - op.start_ms) * 1000.0).abs() < 1.0);
        assert!((event["ts"].as_f64().unwrap() - op.start_ms * 1000.0).abs() < 1.0);
        assert_eq!(event["tid"], op.stream + 1);
    }
    let durations: f64 = complete.iter().map(|e| e["dur"].as_f64().unwrap()).sum();
    let ops: f64 = t
        .ops
        .iter()
        .map(|op| (op.end_ms - op.start_ms) * 1000.0)
        .sum();
    assert!(
        (durations - ops).abs() < t.ops.len().max(1) as f64,
        "{}: durations {durations} µs, ops {ops} µs",
        t.title
    );
}

/// Check every file the report of `dir` should hold; the number of SVG files.
fn check_outputs(dir: &Path) -> usize {
    let run = SavedRun::load(dir).unwrap();
    let mut svgs = 0;
    if let Some(r) = &run.matmul_streams {
        let c = svg_classes(dir, "matmul-streams.svg");
        assert_eq!(count(&c, "bar"), r.points.len(), "one bar per stream count");
        assert_eq!(count(&c, "whisker"), r.points.len());
        assert_eq!(
            count(&c, "marker"),
            r.points.len(),
            "the model at every count"
        );
        let means: Vec<f64> = r.points.iter().map(|p| p.time.summary.mean).collect();
        assert_eq!(values(dir, "matmul-streams.svg", "bar"), means);
        svgs += 1 + check_timelines(
            dir,
            "matmul-streams",
            &r.timeline.iter().collect::<Vec<_>>(),
        );
    }
    if let Some(r) = &run.memcpy_kernel {
        let counts = chart::memcpy_stream_counts(r);
        let speedup = svg_classes(dir, "memcpy-kernel-speedup.svg");
        assert_eq!(
            count(&speedup, "series"),
            counts.len() + 1,
            "a line per count + ideal"
        );
        let first = r.rows.iter().filter(|row| row.streams == counts[0]).count();
        let breakdown = svg_classes(dir, "memcpy-kernel-breakdown.svg");
        assert_eq!(
            count(&breakdown, "bar"),
            3 * first,
            "HtoD, kernel, DtoH per cycles"
        );
        svgs += 2 + check_timelines(dir, "memcpy-kernel", &r.timeline.iter().collect::<Vec<_>>());
    }
    if let Some(r) = &run.sincos_overlap {
        let c = svg_classes(dir, "sincos-overlap.svg");
        let counts = chart::sincos_stream_counts(r);
        assert_eq!(
            count(&c, "bar"),
            3 * counts.len(),
            "3 variants per stream count"
        );
        let bound = r.htod_alone.summary.mean.max(r.dtoh_alone.summary.mean);
        let mut levels = vec![bound];
        let summary = run.summary.as_ref().and_then(|s| s.bounds.as_ref());
        let rate = (run.bounds.as_ref().map(|b| b.bidirectional_gbps))
            .or(summary.map(|b| b.bidirectional_gbps));
        if let Some(rate) = rate {
            levels.push(2.0 * (r.params.elements * 4) as f64 / (rate * 1e6));
        }
        assert_eq!(values(dir, "sincos-overlap.svg", "level"), levels);
        svgs += 1 + check_timelines(
            dir,
            "sincos-overlap",
            &r.timelines.iter().collect::<Vec<_>>(),
        );
    }
    if let Some(c) = &run.kernel_comparison {
        let chart = svg_classes(dir, "kernel-comparison.svg");
        assert_eq!(
            count(&chart, "bar"),
            2 * c.kernels.len(),
            "Rust and CUDA C++ per case"
        );
        assert_eq!(
            count(&chart, "whisker"),
            2 * c.kernels.len(),
            "quartiles per bar"
        );
        let medians: Vec<f64> = (c.kernels.iter().map(|k| k.rust_quartiles.median))
            .chain(c.kernels.iter().map(|k| k.cuda_quartiles.median))
            .collect();
        assert_eq!(values(dir, "kernel-comparison.svg", "bar"), medians);
        let text = read(dir, "kernel-comparison.svg");
        for words in ["ms", "Rust", "CUDA C++", "median"] {
            assert!(text.contains(words), "the comparison chart lacks {words:?}");
        }
        svgs += 1;
    } else {
        assert!(!dir.join("kernel-comparison.svg").exists());
    }
    check_markdown(dir, svgs);
    check_html(dir, svgs);
    svgs
}

/// `report.md` links exactly the SVG files written, each present.
fn check_markdown(dir: &Path, svgs: usize) {
    let md = read(dir, "report.md");
    let links: Vec<&str> = md
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .filter(|target| target.ends_with(".svg"))
        .collect();
    assert_eq!(links.len(), svgs, "report.md links every SVG once");
    for link in links {
        assert!(!link.contains('/') && dir.join(link).is_file(), "{link}");
    }
    for words in [
        "## Device",
        "## Provenance",
        "**Bound.**",
        "**Verification.**",
    ] {
        assert!(md.contains(words), "report.md lacks {words}");
    }
}

/// `report.html` inlines every SVG, fetches nothing and runs no script.
fn check_html(dir: &Path, svgs: usize) {
    let html = read(dir, "report.html");
    assert_eq!(
        html.matches("<svg ").count(),
        svgs,
        "one inline <svg> per chart"
    );
    for banned in ["<script", "src=\"http", "href=\"http", "@import", "<link "] {
        assert!(!html.contains(banned), "report.html contains {banned}");
    }
}

/// The DOM headless Chromium builds from `report.html`; `None` without Chromium.
fn chromium_dom(dir: &Path) -> Option<String> {
    if !Path::new(CHROMIUM).exists() {
        eprintln!("skipped: chromium not installed (cargo xtask setup installs it)");
        return None;
    }
    let profile = scratch(&format!("chromium-{}", dir.file_name()?.to_string_lossy()));
    let output = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", dir.join("report.html").display()))
        .output()
        .expect("chromium runs");
    let _ = std::fs::remove_dir_all(&profile);
    assert!(output.status.success(), "chromium failed: {output:?}");
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn check_dom(dir: &Path, svgs: usize) {
    let Some(dom) = chromium_dom(dir) else {
        return;
    };
    assert_eq!(
        dom.matches("<svg ").count(),
        svgs,
        "Chromium shows every chart"
    );
    let html = read(dir, "report.html");
    for title in html
        .split("<title>")
        .skip(2)
        .filter_map(|t| t.split("</title>").next())
    {
        assert!(dom.contains(title), "Chromium lost the chart {title:?}");
    }
}

#[test]
fn h100_results_render_every_chart_timeline_and_trace() {
    let dir = h100_copy("h100");
    report::render(&dir).unwrap();
    let run = SavedRun::load(&dir).unwrap();
    assert!(run.matmul_streams.is_some() && run.memcpy_kernel.is_some());
    let svgs = check_outputs(&dir);
    assert!(svgs >= 6, "only {svgs} SVG files");
    check_dom(&dir, svgs);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The number in `column` (a header prefix) of every row of `t`.
fn column(t: &Table, prefix: &str) -> Vec<f64> {
    let i = t
        .column(prefix)
        .unwrap_or_else(|| panic!("no column {prefix:?} in {:?}", t.header));
    (t.rows.iter())
        .map(|row| {
            let cell = row[i].trim_end_matches('×');
            cell.parse()
                .unwrap_or_else(|_| panic!("{prefix}: {:?} is not a number", row[i]))
        })
        .collect()
}

/// The row of `t` whose first cells are `key`.
fn row<'a>(t: &'a Table, key: &[&str]) -> &'a [String] {
    (t.rows.iter())
        .find(|row| row.iter().zip(key).all(|(cell, k)| cell == k))
        .unwrap_or_else(|| panic!("no row {key:?}"))
}

fn cell(t: &Table, row: &[String], prefix: &str) -> f64 {
    row[t.column(prefix).unwrap()].parse().unwrap()
}

/// Every configuration row has one efficiency, a finite number above 0.
fn check_efficiency(section: &Section, configurations: usize) {
    let t = &section.tables[0];
    assert_eq!(
        t.rows.len(),
        configurations,
        "{}: one row per configuration",
        section.id
    );
    let values = column(t, EFFICIENCY);
    assert_eq!(values.len(), configurations);
    for e in values {
        assert!(e.is_finite() && e > 0.0, "{}: efficiency {e}", section.id);
    }
}

/// The pipeline bound of three engines written out: each engine's busy time plus the
/// work before it in the first chunk and after it in the last one, over `chunks`.
fn three_engine_bound(h: f64, k: f64, d: f64, chunks: f64) -> f64 {
    let rest = |busy: f64| busy + (h + k + d - busy) / chunks;
    rest(h).max(rest(k)).max(rest(d))
}

#[test]
fn h100_report_has_limits_comparison_and_an_efficiency_per_configuration() {
    let dir = h100_copy("sections");
    let run = SavedRun::load(&dir).unwrap();
    let (Some(bounds), Some(comparison)) = (&run.bounds, &run.kernel_comparison) else {
        panic!("docs/results/h100 lacks bounds.json or kernel-comparison.json");
    };
    let cuda = &run.cuda;
    assert!(cuda.matmul_streams.is_some() && cuda.memcpy_kernel.is_some());
    let sincos_cuda = cuda
        .sincos_overlap
        .as_ref()
        .expect("sincos-overlap-cuda.json");
    let doc = Document::new(&run).unwrap();

    let limits = doc.limits.as_ref().expect("limits from bounds.json");
    assert_eq!(limits.table.rows.len(), 5, "HtoD, DtoH, both, DtoD, launch");
    assert!(
        limits.table.rows[0][1].ends_with("MiB"),
        "sizes: {:?}",
        limits.table.rows[0]
    );
    assert_eq!(
        limits.table.rows[2][2],
        format!("{:.3} ms", bounds.bidirectional_ms)
    );

    let versus = doc
        .section("rust-against-cuda")
        .expect("the comparison section");
    let kernels = &versus.tables[0];
    assert_eq!(
        kernels.rows.len(),
        comparison.kernels.len(),
        "one row per kernel case"
    );
    for (row, k) in kernels.rows.iter().zip(&comparison.kernels) {
        assert_eq!(row[0], k.kernel);
        assert_eq!(
            cell(kernels, row, "Rust median"),
            (k.rust_quartiles.median * 1e4).round() / 1e4
        );
        assert_eq!(
            cell(kernels, row, "CUDA C++ median"),
            (k.cuda_quartiles.median * 1e4).round() / 1e4
        );
        let ratio = cell(kernels, row, "Rust / CUDA");
        assert!((ratio - k.rust_quartiles.median / k.cuda_quartiles.median).abs() < 2e-3);
        assert!(row.last().unwrap().starts_with("passed"));
    }
    let experiments = &versus.tables[1];
    let ratios = run
        .summary
        .as_ref()
        .and_then(|s| s.experiment_rust_over_cuda.as_ref())
        .unwrap();
    let expected = [
        ratios.matmul_streams,
        ratios.memcpy_kernel,
        ratios.sincos_overlap,
    ];
    let shown = column(experiments, "Rust / CUDA");
    assert_eq!(shown.len(), 3, "one row per experiment");
    for (shown, expected) in shown.iter().zip(expected) {
        assert!((shown - expected.unwrap()).abs() < 5e-4);
    }
    assert!(
        experiments
            .rows
            .iter()
            .all(|r| r[2].contains("ms") || r[2].contains('×'))
    );

    let matmul = run.matmul_streams.as_ref().unwrap();
    let section = doc.section("matmul-streams").unwrap();
    check_efficiency(section, matmul.points.len());
    let t = &section.tables[0];
    let last = matmul.points.last().unwrap();
    let r = row(t, &[&last.streams.to_string()]);
    let one_stream = matmul.points[0].time.summary.mean;
    let model = one_stream * (16f64 / last.streams as f64).ceil() / 16.0;
    assert!((cell(t, r, EFFICIENCY) - model / last.time.summary.mean).abs() < 6e-4);
    assert_eq!(column(t, "CUDA C++").len(), matmul.points.len());

    let memcpy = run.memcpy_kernel.as_ref().unwrap();
    let section = doc.section("memcpy-kernel").unwrap();
    check_efficiency(section, memcpy.rows.len());
    let t = &section.tables[0];
    let spot = &memcpy.rows[memcpy.rows.len() / 2];
    let r = row(t, &[&spot.streams.to_string(), &spot.cycles.to_string()]);
    let mean = |s: &streamlab::stats::Series| s.summary.mean;
    let bound = three_engine_bound(
        mean(&spot.htod),
        mean(&spot.kernel),
        mean(&spot.dtoh),
        spot.streams as f64,
    );
    assert!((cell(t, r, "pipeline bound") - bound).abs() < 6e-4);
    assert!((cell(t, r, EFFICIENCY) - bound / mean(&spot.concurrent)).abs() < 6e-4);

    let sincos = run.sincos_overlap.as_ref().unwrap();
    let section = doc.section("sincos-overlap").unwrap();
    check_efficiency(section, 1 + sincos.points.len());
    let t = &section.tables[0];
    let spot = (sincos.points.iter())
        .find(|p| p.variant == SincosVariant::Async2 && p.streams == 4)
        .unwrap();
    let r = row(t, &["asynchronous 2", "4"]);
    let (h, k, d) = (
        mean(&sincos.htod_alone),
        mean(&sincos.kernel_alone),
        mean(&sincos.dtoh_alone),
    );
    let bound = three_engine_bound(h, k, d, 4.0);
    assert!((cell(t, r, EFFICIENCY) - bound / mean(&spot.time)).abs() < 6e-4);
    assert!((cell(t, r, "copy-engine bound") - h.max(d) / mean(&spot.time)).abs() < 6e-4);
    let cuda_spot = (sincos_cuda.points.iter())
        .find(|p| p.variant == SincosVariant::Async2 && p.streams == 4)
        .unwrap();
    assert!((cell(t, r, "CUDA C++") - mean(&cuda_spot.time)).abs() < 6e-4);
    let sequential = row(t, &["sequential", "1"]);
    assert!(
        (cell(t, sequential, EFFICIENCY) - (h + k + d) / mean(&sincos.sequential)).abs() < 6e-4
    );

    report::render(&dir).unwrap();
    let md = read(&dir, "report.md");
    let html = read(&dir, "report.html");
    for words in [
        "Measured physical limits",
        "Rust kernels against CUDA C++",
        "both directions at once",
        "efficiency (pipeline bound / mean)",
        "efficiency (bound / concurrent)",
        "efficiency (model / mean)",
        "real floor",
    ] {
        assert!(md.contains(words), "report.md lacks {words:?}");
        assert!(html.contains(words), "report.html lacks {words:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The H100 folder as a run from before bounds and CUDA C++ twins wrote it.
#[test]
fn a_folder_without_bounds_or_cuda_results_still_renders() {
    let dir = h100_copy("old");
    for name in [
        files::BOUNDS,
        files::KERNEL_COMPARISON,
        files::MATMUL_STREAMS_CUDA,
        files::MEMCPY_KERNEL_CUDA,
        files::SINCOS_OVERLAP_CUDA,
    ] {
        std::fs::remove_file(dir.join(name)).unwrap();
    }
    let mut summary: Value = serde_json::from_str(&read(&dir, files::SUMMARY)).unwrap();
    let fields = summary.as_object_mut().unwrap();
    for key in [
        "bounds",
        "rust_over_cuda",
        "cuda_experiments",
        "experiment_rust_over_cuda",
    ] {
        fields.remove(key);
    }
    std::fs::write(dir.join(files::SUMMARY), summary.to_string()).unwrap();

    report::render(&dir).unwrap();
    let svgs = check_outputs(&dir);
    let md = read(&dir, "report.md");
    for absent in [
        "Measured physical limits",
        "Rust kernels against CUDA C++",
        "CUDA C++ mean",
    ] {
        assert!(
            !md.contains(absent),
            "report.md shows {absent:?} without its data"
        );
    }
    let doc = Document::new(&SavedRun::load(&dir).unwrap()).unwrap();
    assert_eq!(doc.sections.len(), 3, "the three experiments only");
    for section in &doc.sections {
        for e in column(&section.tables[0], EFFICIENCY) {
            assert!(e.is_finite() && e > 0.0);
        }
    }
    check_dom(&dir, svgs);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_cuda_file_measured_with_rust_kernels_is_refused() {
    let dir = scratch("mislabelled");
    let result = sincos_fixture();
    write_fixture(&dir, &result);
    let text = serde_json::to_string(&result).unwrap();
    std::fs::write(dir.join(files::SINCOS_OVERLAP_CUDA), text).unwrap();
    let err = report::render(&dir).unwrap_err().to_string();
    assert!(
        err.contains("sincos-overlap-cuda.json") && err.contains("\"rust\""),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rendering_twice_gives_the_same_files() {
    let dir = h100_copy("twice");
    report::render(&dir).unwrap();
    let first = read(&dir, "report.html");
    report::render(&dir).unwrap();
    assert_eq!(first, read(&dir, "report.html"));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn series(ms: &[f64]) -> Series {
    Series::new(ms.to_vec()).unwrap()
}

fn op(stream: usize, kind: OpKind, start_ms: f64, end_ms: f64) -> TimelineOp {
    TimelineOp {
        stream,
        kind,
        start_ms,
        end_ms,
    }
}

/// Two streams, two stream counts, two traced variants.
fn sincos_fixture() -> SincosOverlapResult {
    let point = |variant, streams, ms: f64| SincosPoint {
        variant,
        streams,
        time: series(&[ms, ms + 0.1]),
    };
    let timeline = |title: &str| Timeline {
        title: title.into(),
        streams: 2,
        ops: vec![
            op(0, OpKind::HtoD, 0.0, 0.5),
            op(0, OpKind::Kernel, 0.5, 0.6),
            op(1, OpKind::HtoD, 0.5, 1.0),
            op(0, OpKind::DtoH, 0.6, 1.1),
            op(1, OpKind::Kernel, 1.0, 1.1),
            op(1, OpKind::DtoH, 1.1, 1.6),
        ],
    };
    SincosOverlapResult {
        params: streamlab::experiments::sincos_overlap::Params {
            streams: 2,
            stream_counts: vec![1, 2],
            ..Default::default()
        },
        device: DeviceInfo {
            ordinal: 0,
            name: "Test GPU <&>".into(),
            compute_capability: (9, 0),
            sm_count: 2,
            copy_engines: 2,
            concurrent_kernels: true,
            total_memory_bytes: 1 << 30,
            driver_cuda_version: "13.0".into(),
            pcie_link: None,
        },
        provenance: Provenance {
            streamlab_version: "0.1.0".into(),
            started_utc: "2026-01-01T00:00:00Z".into(),
            ptx_target: "sm_90".into(),
            kernels: "rust".into(),
        },
        sequential: series(&[2.0, 2.2]),
        points: vec![
            point(SincosVariant::Async1, 1, 2.0),
            point(SincosVariant::Async2, 1, 2.0),
            point(SincosVariant::Async1, 2, 1.6),
            point(SincosVariant::Async2, 2, 1.5),
        ],
        htod_alone: series(&[1.0]),
        kernel_alone: series(&[0.2]),
        dtoh_alone: series(&[1.1]),
        verification: Verification {
            passed: true,
            checked: 8,
            mismatches: 0,
            max_abs_error: 1e-7,
            detail: "all 8 elements within 1e-6".into(),
        },
        timelines: vec![timeline("fixture async 1"), timeline("fixture async 2")],
    }
}

fn write_fixture(dir: &Path, result: &SincosOverlapResult) {
    let text = serde_json::to_string(result).unwrap();
    std::fs::write(dir.join(files::SINCOS_OVERLAP), text).unwrap();
}

/// A `summary.json` holding only the device, provenance and measured bounds.
fn write_summary_with_bounds(dir: &Path, result: &SincosOverlapResult) {
    let summary = serde_json::json!({
        "device": result.device,
        "provenance": result.provenance,
        "experiments": {},
        "bounds": {
            "h2d_ms": 2.43, "d2h_ms": 2.44, "h2d_gbps": 55.2, "d2h_gbps": 55.0,
            "bidirectional_gbps": 101.0, "d2d_gbps": 2900.0, "launch_us": 2.5
        },
    });
    std::fs::write(dir.join(files::SUMMARY), summary.to_string()).unwrap();
}

#[test]
fn a_sincos_result_alone_renders_its_chart_bound_and_both_timelines() {
    let dir = scratch("sincos");
    let result = sincos_fixture();
    write_fixture(&dir, &result);
    write_summary_with_bounds(&dir, &result);
    report::render(&dir).unwrap();
    assert_eq!(check_outputs(&dir), 3);
    let md = read(&dir, "report.md");
    assert!(md.contains("## Measured physical limits"), "{md}");
    assert!(
        md.contains("| host to device alone (pinned) | – | 2.430 ms | – | 55.2 GB/s |"),
        "limits from summary.json:\n{md}"
    );
    assert!(
        md.contains("= 1.100 ms"),
        "copy-engine bound missing:\n{md}"
    );
    assert!(
        md.contains("asynchronous 2 with 2 streams, 1.550 ms"),
        "{md}"
    );
    assert!(read(&dir, "report.html").contains("Test GPU &lt;&amp;&gt;"));
    check_dom(&dir, 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_backwards_timeline_is_an_error_not_a_panic() {
    let dir = scratch("backwards");
    let mut result = sincos_fixture();
    result.timelines[1].ops[2].end_ms = 0.1;
    write_fixture(&dir, &result);
    let err = report::render(&dir).unwrap_err();
    assert!(err.to_string().contains("fixture async 2"), "{err}");
    assert!(!dir.join("report.html").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
