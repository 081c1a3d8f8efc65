//! The report rendered from recorded results: the committed H100 run renders again to the
//! same files (every result's JSON and CSV byte for byte, the summary, the charts and
//! the report); every chart and timeline is well-formed SVG with one mark per value of its
//! model; each HTML page shows every figure and table in a browser, the main page in at
//! most 12 screens and each experiment's in at most 15; an incomplete run says so at the
//! top; a broken timeline is an error, not a panic.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use streamlab_results::experiments::sincos_overlap::SincosOverlap;
use streamlab_results::report::ReportError;
use streamlab_results::report::chart::{kind_color, queued_color};
use streamlab_results::report::figures::Drawing;
use streamlab_results::report::fit::page_parts;
use streamlab_results::report::page::Block;
use streamlab_results::report::section::TimelineFigure;
use streamlab_results::report::table::Table;
use streamlab_results::run::SavedRun;
use streamlab_results::run::report::{document, render};
use streamlab_results::saved::IssueOrder;
use streamlab_results::saved::KernelSet;

const CHROMIUM: &str = "/usr/bin/chromium";

fn h100() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/results/h100")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("streamlab-report-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The committed results' JSON files copied into a scratch folder.
fn h100_copy(name: &str) -> PathBuf {
    let dir = scratch(name);
    for entry in std::fs::read_dir(h100()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json")
            && !path.to_string_lossy().contains("-trace-")
        {
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    dir
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    (std::fs::read_dir(dir).unwrap())
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_committed_h100_report_renders_again_to_the_same_files() {
    let run = SavedRun::load(&h100()).unwrap();
    let out = scratch("rerender");
    let written = render(&run, &out, false, &|| true).unwrap();
    let rendered = files(&out);
    assert_eq!(rendered.len(), written);
    let committed = files(&h100());
    for name in committed.keys() {
        let result = name.ends_with(".csv") || name.ends_with(".json");
        assert!(
            !result || rendered.contains_key(name),
            "{name} is not written again"
        );
    }
    for (name, contents) in &rendered {
        let before = committed
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not committed"));
        assert!(
            before == contents,
            "{name} differs from the committed one: render docs/results/h100 again"
        );
    }
    let report = String::from_utf8(rendered["report.md"].clone()).unwrap();
    for section in [
        "sincos-overlap",
        "matmul-streams",
        "memcpy-kernel",
        "kernel-concurrency",
        "launch-overhead",
        "graph-overlap",
        "overlap-map",
        "mapped",
        "compare-kernels",
        "bounds",
    ] {
        for ext in ["md", "html"] {
            let page = format!("{section}.{ext}");
            assert!(rendered.contains_key(&page), "no page {page}");
            assert!(
                report.contains(&format!("]({section}.md)")),
                "{section} not linked"
            );
        }
    }
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn the_report_opens_with_the_answer_to_each_question_from_the_run() {
    let run = SavedRun::load(&h100()).unwrap();
    let out = scratch("answer");
    render(&run, &out, false, &|| true).unwrap();
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let answer = report.find("## The answer").expect("the answer");
    let found = report.find("## What this run found").expect("the findings");
    assert!(answer < found, "the answer comes first");
    let lines: Vec<&str> = (report[answer..found].lines())
        .filter(|l| l.starts_with("- "))
        .collect();
    let asked = [
        ("What Rust costs", "compare-kernels"),
        ("When streams pay off", "overlap-map"),
        ("What breaks the overlap most", "concurrency-breaks"),
    ];
    assert_eq!(lines.len(), asked.len(), "{lines:?}");
    for (line, (question, section)) in lines.iter().zip(asked) {
        assert!(
            line.starts_with(&format!("- [**{question}**]({section}.md): ")),
            "{line}"
        );
    }
    // Each sentence's numbers are the run's.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let breaks = &summary["experiments"]["concurrency-breaks"];
    let over = breaks["costliest_over_clean"].as_f64().unwrap();
    assert!(
        lines[2].contains(&format!("takes {over:.2}×")),
        "{}",
        lines[2]
    );
    let first = &summary["experiments"]["overlap-map"]["crossovers"][0];
    let from = first["measured"].as_u64().unwrap();
    assert!(
        lines[1].contains(&format!(
            "with {} streams from 2^{} floats",
            first["streams"],
            from.trailing_zeros()
        )),
        "{}",
        lines[1]
    );
    let kernels: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("compare-kernels.json")).unwrap())
            .unwrap();
    // The worst over every shape and cache state, L2 flushed or not.
    let worst = (kernels["derived"]["sweep"].as_array().unwrap().iter())
        .filter(|k| k["measure"]["form"] == "tuned")
        .map(|k| k["worst"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(
        lines[0].contains(&format!("and {worst:.2}× at the worst shape timed")),
        "{}",
        lines[0]
    );
    std::fs::remove_dir_all(&out).unwrap();
}

/// The report's pages in `dir` with the extension `ext`, by file name, the main one
/// first.
fn pages(dir: &Path, ext: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = (files(dir).into_iter())
        .filter(|(name, _)| name.ends_with(ext))
        .map(|(name, bytes)| (name, String::from_utf8(bytes).unwrap()))
        .collect();
    out.sort_by_key(|(name, _)| !name.starts_with("report."));
    out
}

#[test]
fn a_newcomer_finds_each_term_explained_and_linked_where_first_used() {
    let run = SavedRun::load(&h100()).unwrap();
    let out = scratch("glossary");
    render(&run, &out, false, &|| true).unwrap();
    for ext in [".md", ".html"] {
        let pages = pages(&out, ext);
        assert!(pages.len() > 10, "a page per experiment");
        let main = &pages[0].1;
        let glossary =
            (main.find("id=\"glossary\"")).unwrap_or_else(|| panic!("report{ext} has no glossary"));
        let link = |anchor: &str| match ext {
            ".md" => format!("](report.md#{anchor})"),
            _ => format!("<a href=\"report.html#{anchor}\">"),
        };
        // Every term the glossary explains is used, and linked to it, where a page first
        // uses it, and no page links a term twice.
        for t in streamlab_results::report::glossary::TERMS.iter() {
            assert!(
                main[glossary..].contains(&format!("id=\"{}\"", t.anchor)),
                "{}",
                t.spelling
            );
            let linked = (pages.iter())
                .map(|(name, page)| (name, page.matches(&link(&t.anchor)).count()))
                .collect::<Vec<_>>();
            assert!(
                linked.iter().any(|(_, n)| *n == 1),
                "report{ext}: {} never linked",
                t.spelling
            );
            assert!(linked.iter().all(|(_, n)| *n <= 1), "{linked:?}");
        }
        for (name, page) in &pages[1..] {
            // How to read a timeline said once on a page with timelines, where their
            // times come from once per section.
            let timelines = page.contains("### Timelines") || page.contains("<h3>Timelines");
            let read = page
                .matches("no two copies of one direction overlap")
                .count();
            assert_eq!(read, usize::from(timelines), "{name}");
            assert_eq!(
                page.matches("Times from ").count(),
                usize::from(timelines),
                "{name}"
            );
            assert!(
                page.contains(&link("").replace('#', "")),
                "{name}: no way back"
            );
        }
    }
    let md = std::fs::read_to_string(out.join("sincos-overlap.md")).unwrap();
    assert!(
        md.contains("(CUDA C++ kernels)\n"),
        "C++ timelines not told apart"
    );
    assert!(
        !md.contains(" checks passed; "),
        "a fold of folds read out raw"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

fn parse(svg: &str) -> roxmltree::Document<'_> {
    roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("not well-formed SVG: {e}"))
}

/// `rect` elements filled with `color` (a model's `#rrggbb`).
fn rects(doc: &roxmltree::Document, color: &str) -> usize {
    let fill = color.to_uppercase();
    (doc.descendants())
        .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(fill.as_str()))
        .count()
}

#[test]
fn every_figure_is_svg_with_a_mark_per_value_of_its_model() {
    let doc = document(&SavedRun::load(&h100()).unwrap()).unwrap();
    let (mut charts, mut timelines) = (0, 0);
    for section in &doc.sections {
        for figure in &section.figures {
            let svg = parse(&figure.svg);
            match &figure.model.drawing {
                Drawing::Chart(chart) => {
                    let colors: Vec<&str> = chart.bars.iter().map(|b| b.color).collect();
                    for bars in &chart.bars {
                        assert_eq!(
                            colors.iter().filter(|&&c| c == bars.color).count(),
                            1,
                            "{}",
                            figure.file()
                        );
                        let positive =
                            matches!(chart.y_scale, streamlab_results::report::chart::YScale::Log);
                        let drawn = (bars.values.iter())
                            .filter(|v| v.is_finite() && (!positive || **v > 0.0))
                            .count();
                        assert_eq!(
                            rects(&svg, bars.color),
                            drawn,
                            "{}: {}",
                            figure.file(),
                            bars.name
                        );
                    }
                    for line in &chart.lines {
                        let stroke = line.color.to_uppercase();
                        let drawn = (svg.descendants())
                            .filter(|n| n.attribute("stroke") == Some(stroke.as_str()))
                            .count();
                        assert!(
                            drawn >= 1,
                            "{}: line {} not drawn",
                            figure.file(),
                            line.name
                        );
                    }
                }
                Drawing::HeatMap(map) => {
                    let cells = map.rows.len() * map.columns.len();
                    let written: usize = (svg.descendants())
                        .filter(|n| n.has_tag_name("text"))
                        .filter_map(|n| n.text().map(str::trim))
                        .filter(|t| {
                            *t == "–"
                                || t.strip_suffix(map.unit)
                                    .is_some_and(|v| v.parse::<f64>().is_ok())
                        })
                        .count();
                    assert_eq!(written, cells, "{}: one value per cell", figure.file());
                }
            }
            charts += 1;
        }
        for t in &section.timelines {
            let svg = parse(&t.svg);
            for kind in streamlab_results::saved::timeline::OpKind::ALL {
                for (queued, color) in [(false, kind_color(kind)), (true, queued_color(kind))] {
                    let bars = (t.gantt.bars.iter())
                        .filter(|b| b.kind == kind && b.queued == queued)
                        .count();
                    assert_eq!(
                        rects(&svg, color),
                        bars,
                        "{}: {kind:?} queued {queued}",
                        t.file
                    );
                }
            }
            let trace: serde_json::Value = serde_json::from_str(&t.trace).unwrap();
            assert_eq!(trace["source"], t.checks.source.label());
            timelines += 1;
        }
    }
    assert!(
        charts >= 13 && timelines >= 6,
        "{charts} charts, {timelines} timelines"
    );
}

#[test]
fn every_result_has_its_bound_beside_it_and_no_row_sits_below_it() {
    let run = SavedRun::load(&h100()).unwrap();
    let doc = document(&run).unwrap();
    for id in [
        "sincos-overlap",
        "memcpy-kernel",
        "graph-overlap",
        "mapped",
        "kernel-concurrency",
    ] {
        let section = doc.sections.iter().find(|s| s.id == id).unwrap();
        let bound_columns = |t: &Table| -> Vec<usize> {
            (t.header.iter().enumerate())
                .filter(|(_, h)| h.to_lowercase().contains("bound") && !h.contains("speedup"))
                // Only traced rows have an engine bound; marks are words.
                .filter(|(_, h)| !h.contains("traced") && !h.starts_with("against"))
                .map(|(i, _)| i)
                .collect()
        };
        let tables: Vec<&Table> = section
            .tables
            .iter()
            .filter(|t| !bound_columns(t).is_empty())
            .collect();
        assert!(!tables.is_empty(), "{id}: no table with a bound");
        for t in tables {
            for i in bound_columns(t) {
                for row in &t.rows {
                    assert!(
                        row[i].parse::<f64>().is_ok_and(|v| v > 0.0),
                        "{id}: {} {:?}",
                        t.header[i],
                        row[i]
                    );
                }
            }
        }
    }
    let summary = run.summary.as_ref().unwrap();
    if let Some(s) = summary.experiment("sincos-overlap") {
        let variant: IssueOrder = serde_json::from_value(s["best_async_variant"].clone()).unwrap();
        let best_over_bound = s["best_over_bound"].as_f64().unwrap();
        let streams = s["best_async_streams"].as_u64().unwrap().to_string();
        let sincos = doc
            .sections
            .iter()
            .find(|s| s.id == "sincos-overlap")
            .unwrap();
        let table = sincos
            .tables
            .iter()
            .find(|t| t.column("against its bounds").is_some())
            .unwrap();
        // A row that beat its bound as built sits at its lowered bound, never below; a
        // row under its bound says so.
        let efficiency = table.column("efficiency").unwrap();
        let mark = table.column("against its bounds").unwrap();
        for row in &table.rows {
            let e: f64 = row[efficiency].parse().unwrap();
            assert!(e <= 1.01, "{row:?}");
            if row[mark].contains("lowered") {
                assert_eq!(row[efficiency], "1.000", "{row:?}");
            }
            if e > 1.0 {
                assert!(row[mark].starts_with("under its bound"), "{row:?}");
            }
        }
        let traced = table.column("busiest bound (traced)").unwrap();
        let headline = (table.rows.iter())
            .find(|r| r[0] == variant.label() && r[1] == streams)
            .expect("the headline row");
        assert_ne!(headline[traced], "–", "{headline:?}");
        assert!(
            s["best_async_noise"].as_f64().is_some_and(f64::is_finite),
            "{s}"
        );
        assert!(
            best_over_bound >= 0.99,
            "best async {best_over_bound} of its bound"
        );
    }
}

/// What the browser shows of the page `file` in `dir` at 1400×1000: its DOM and its
/// height in screens. The page is copied with a script that records its height.
fn in_browser(dir: &Path, file: &str, profile: &Path) -> (String, f64) {
    let page = std::fs::read_to_string(dir.join(file)).unwrap();
    let measured = dir.join(format!("measured-{file}"));
    let script = "<script>document.body.setAttribute('data-height', \
                  document.documentElement.scrollHeight)</script></body>";
    std::fs::write(&measured, page.replace("</body>", script)).unwrap();
    let output = std::process::Command::new(CHROMIUM)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg("--window-size=1400,1000")
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("file://{}", measured.display()))
        .output()
        .expect("chromium runs");
    assert!(output.status.success(), "chromium failed: {output:?}");
    std::fs::remove_file(&measured).unwrap();
    let dom = String::from_utf8_lossy(&output.stdout).into_owned();
    let height = (dom.split_once("data-height=\""))
        .and_then(|(_, rest)| rest.split('"').next())
        .and_then(|h| h.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("{file}: no height"));
    (dom, height / 1000.0)
}

/// How many inline SVGs and HTML tables `blocks` show.
fn shown(blocks: &[Block]) -> (usize, usize) {
    let mut out = (0, 0);
    for b in blocks {
        let (svgs, tables) = match b {
            Block::Figure(_) => (1, 0),
            Block::Timeline(..) => (1, 0),
            Block::Table(t) => (0, page_parts(t).len() * if t.folds() { 2 } else { 1 }),
            Block::Facts(_) | Block::Judged(..) => (0, 1),
            Block::Part(_, inner) | Block::Folded(_, inner) => shown(inner),
            _ => (0, 0),
        };
        out = (out.0 + svgs, out.1 + tables);
    }
    out
}

#[test]
fn every_page_shows_its_figures_and_tables_in_a_browser_and_reads_in_a_few_screens() {
    if !Path::new(CHROMIUM).exists() {
        eprintln!("skipped: chromium not installed (cargo xtask setup installs it)");
        return;
    }
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/results");
    for committed in [h100(), results.join("h200"), results.join("h200x2")] {
        let run = SavedRun::load(&committed).unwrap();
        let doc = document(&run).unwrap();
        let out = scratch("browser");
        render(&run, &out, false, &|| true).unwrap();
        let profile = scratch("chromium-profile");
        for (i, (stem, blocks)) in doc.pages().iter().enumerate() {
            let (dom, screens) = in_browser(&out, &format!("{stem}.html"), &profile);
            let most = if i == 0 { 12.0 } else { 15.0 };
            assert!(
                screens <= most,
                "{}: {stem}.html is {screens:.1} screens of 1400×1000, past {most}",
                committed.display()
            );
            let (svgs, tables) = shown(blocks);
            assert_eq!(dom.matches("<svg").count(), svgs, "{stem}: inline SVGs");
            assert_eq!(dom.matches("<table").count(), tables, "{stem}: tables");
            assert!(!dom.contains("Incomplete run."), "{stem}");
            if i > 0 {
                assert!(dom.contains(&format!("<section id=\"{stem}\">")), "{stem}");
            }
        }
        let _ = std::fs::remove_dir_all(&out);
        let _ = std::fs::remove_dir_all(&profile);
    }
}

#[test]
fn an_interrupted_run_says_so_at_the_top_of_both_reports() {
    let dir = h100_copy("interrupted");
    let path = dir.join("summary.json");
    let mut summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    summary["complete"] = false.into();
    summary["interrupted_by"] = "SIGTERM".into();
    summary["steps_not_run"] = serde_json::json!(["mapped"]);
    std::fs::write(&path, summary.to_string()).unwrap();
    std::fs::remove_file(dir.join("mapped.json")).unwrap();
    render(&SavedRun::load(&dir).unwrap(), &dir, true, &|| true).unwrap();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let banner = md.lines().nth(2).unwrap();
    assert!(
        banner.starts_with("> **Incomplete run.**")
            && banner.contains("SIGTERM")
            && banner.contains("mapped"),
        "{banner}"
    );
    assert!(!md.contains("<a id=\"mapped\">"));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<p class=\"banner\"><strong>Incomplete run.</strong>"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn one_experiment_alone_renders_its_section_and_no_cpp_columns_without_the_cpp_run() {
    let dir = scratch("alone");
    std::fs::copy(
        h100().join("sincos-overlap.json"),
        dir.join("sincos-overlap.json"),
    )
    .unwrap();
    let run = SavedRun::load(&dir).unwrap();
    let doc = document(&run).unwrap();
    assert_eq!(doc.sections.len(), 1);
    assert!(doc.banner.is_none());
    let f = doc.findings.as_ref().unwrap();
    assert_eq!(f.table.rows.len(), 1);
    assert_eq!(f.table.rows[0][3], "–", "no Rust / C++ without the C++ run");
    let s = &doc.sections[0];
    assert_eq!(s.id, "sincos-overlap");
    assert!(!s.figures.is_empty() && !s.timelines.is_empty());
    assert!(
        s.tables.iter().all(|t| t.column("C++ kernels").is_none()),
        "no C++ columns without the C++ run"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_backwards_timeline_is_an_error_not_a_panic() {
    let mut run = SavedRun::load(&h100()).unwrap();
    assert!(run.edit::<SincosOverlap>(KernelSet::Rust, |sincos| {
        let op = &mut sincos.timelines[0].ops[0];
        op.end_ms = op.start_ms - 1.0;
    }));
    match document(&run) {
        Err(ReportError::Invalid(message)) => assert!(message.contains("runs from"), "{message}"),
        other => panic!(
            "expected an invalid-timeline error, got {:?}",
            other.map(|_| ())
        ),
    }
}

#[test]
fn a_missing_experiment_is_named_in_the_report_and_stays_named() {
    let dir = h100_copy("missing");
    std::fs::remove_file(dir.join("mapped.json")).unwrap();
    let run = SavedRun::load(&dir).unwrap();
    assert_eq!(run.missing(), ["mapped (mapped.json)"]);
    render(&run, &dir, true, &|| true).unwrap();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        md.contains("> **Not in this folder.** mapped (mapped.json): "),
        "{}",
        &md[..600]
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<p class=\"banner\"><strong>Not in this folder.</strong>"));
    // The summary written again keeps the headline, so the next render names it too.
    let again = SavedRun::load(&dir).unwrap();
    assert_eq!(again.missing(), ["mapped (mapped.json)"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_render_stopped_part_way_leaves_the_folder_as_it_was() {
    let dir = h100_copy("stopped");
    let before = files(&dir);
    let run = SavedRun::load(&dir).unwrap();
    let asked = std::cell::Cell::new(0);
    let err = render(&run, &dir, true, &|| {
        asked.set(asked.get() + 1);
        asked.get() <= 20
    })
    .unwrap_err();
    assert!(
        matches!(err, ReportError::Stopped { written: 20, .. }),
        "{err}"
    );
    assert_eq!(files(&dir), before, "the folder changed");
    let fresh = dir.with_extension("fresh");
    let _ = render(&run, &fresh, false, &|| false).unwrap_err();
    assert!(!fresh.exists(), "a stopped render created its folder");
    let beside: Vec<_> = std::fs::read_dir(dir.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("streamlab-report-stopped") && n.ends_with(".partial"))
        .collect();
    assert!(beside.is_empty(), "{beside:?} left behind");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_report_never_replaces_another_runs_results() {
    let run = SavedRun::load(&h100()).unwrap();
    let other = h100_copy("other-run");
    let err = render(&run, &other, false, &|| true).unwrap_err();
    assert!(err.to_string().contains("summary.json"), "{err}");
    assert!(other.join("summary.json").exists() && other.join("mapped.json").exists());
    std::fs::remove_dir_all(&other).unwrap();
}

#[test]
fn a_remedys_timeline_that_looks_like_the_clean_one_is_a_line_and_still_a_file() {
    let run = SavedRun::load(&h100()).unwrap();
    let out = scratch("collapsed");
    render(&run, &out, false, &|| true).unwrap();
    let report = std::fs::read_to_string(out.join("concurrency-breaks.md")).unwrap();
    let collapsed: Vec<&str> = (report.lines())
        .filter(|l| l.contains("as the clean one's: the remedy runs as fast as clean"))
        .collect();
    assert!(!collapsed.is_empty(), "no remedy's timeline collapsed");
    for line in collapsed {
        let file = line.rsplit('(').next().unwrap().trim_end_matches(").*");
        assert!(file.starts_with("concurrency-breaks-timeline-"), "{line}");
        assert!(out.join(file).is_file(), "{file} is not written");
        assert!(
            !report.contains(&format!("]({file})")),
            "{file} is drawn too"
        );
    }
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_break_is_marked_only_where_it_cost_time_and_its_operation_is_boxed_on_its_row() {
    let run = SavedRun::load(&h100()).unwrap();
    let doc = document(&run).unwrap();
    let section = (doc.sections.iter())
        .find(|s| s.id == "concurrency-breaks")
        .unwrap();
    let found = |t: &&TimelineFigure| !t.checks.breaks.is_empty();
    let marked: Vec<&TimelineFigure> = (section.timelines.iter())
        .filter(|t| !t.gantt.marks.is_empty())
        .collect();
    assert!(!marked.is_empty(), "no break marked");
    // Breaks found on a schedule that costs no time over clean are not marked:
    // the copy on the NULL stream among non-blocking streams, and the remedies.
    assert!(
        section.timelines.iter().filter(found).count() > marked.len(),
        "every break found is marked"
    );
    for t in &marked {
        assert!(
            t.gantt.marks.iter().all(|m| m.track.is_some()),
            "{}: a break's operation not on its row",
            t.title
        );
    }
    // The timelines of one section share one time scale: their axes end alike.
    let axis_end = |t: &TimelineFigure| {
        let after = t.svg.split_once("time (ms)").unwrap().1;
        (after.split("<text").skip(1))
            .map(|x| {
                x.split('>')
                    .nth(1)
                    .unwrap_or("")
                    .trim_end_matches("</text")
                    .trim()
            })
            .map_while(|x| x.parse::<f64>().ok())
            .last()
            .unwrap()
    };
    let ends: Vec<f64> = section.timelines.iter().map(axis_end).collect();
    assert!(ends.iter().all(|e| *e == ends[0]), "{ends:?}");
}
