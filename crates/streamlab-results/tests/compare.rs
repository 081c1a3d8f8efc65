//! Two recorded runs compared: the H100 and H200 runs render into one report with a
//! section per shared experiment and changes beyond noise marked in both formats; a run
//! compared with itself changes nothing; folders that are not complete results are
//! clear errors (or, for an incomplete run, marked), and nothing is written for them.
use std::path::{Path, PathBuf};

use streamlab_results::compare::{self, Change, CompareError, ComparedRun};

fn recorded(gpu: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/results")
        .join(gpu)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("streamlab-compare-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The recorded H100 results' JSON copied into a scratch folder, `summary.json` changed
/// by `edit`.
fn h100_with_summary(name: &str, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let dir = scratch(name);
    for entry in std::fs::read_dir(recorded("h100")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json")
            && !path.to_string_lossy().contains("-trace-")
        {
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    let path = dir.join("summary.json");
    let mut summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut summary);
    std::fs::write(&path, serde_json::to_string_pretty(&summary).unwrap()).unwrap();
    dir
}

fn load_error(dir: &Path) -> CompareError {
    match ComparedRun::load("A", dir) {
        Ok(_) => panic!("{} loaded", dir.display()),
        Err(err) => err,
    }
}

#[test]
fn the_h100_and_h200_runs_compare_with_changes_beyond_noise_marked_in_both_formats() {
    let out = scratch("gpus").join("report");
    let written =
        compare::write(&recorded("h100"), &recorded("h200"), Some(out.as_path())).unwrap();
    assert_eq!(written, out);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();

    let a = ComparedRun::load("A", &recorded("h100")).unwrap();
    let b = ComparedRun::load("B", &recorded("h200")).unwrap();
    let comparison = compare::compare(&a, &b);
    for name in [
        "bounds",
        "matmul-streams",
        "sincos-overlap",
        "memcpy-kernel",
    ] {
        let section = (comparison.sections.iter())
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no section for {name}"));
        let rows = (section.tables.iter())
            .find(|t| {
                t.table
                    .caption
                    .as_deref()
                    .unwrap()
                    .starts_with("Measured rows")
            })
            .unwrap_or_else(|| panic!("{name} has no table of measured rows"));
        assert!(!rows.table.rows.is_empty(), "{name}");
        assert!(
            md.contains(&format!("## {name}\n")),
            "{name} not in report.md"
        );
        assert!(
            html.contains(&format!("<section id=\"{name}\">")),
            "{name} not in the HTML"
        );
        for figure in &section.figures {
            assert!(
                out.join(figure.file()).exists(),
                "{} not written",
                figure.file()
            );
        }
    }
    assert_eq!(
        comparison.only.len(),
        1,
        "the H200 run lacks concurrency-breaks"
    );
    assert!(md.contains("**Only in A (h100):** concurrency-breaks"));

    let beyond = (comparison.sections.iter())
        .flat_map(|s| &s.tables)
        .flat_map(|t| t.changes.iter().flatten())
        .filter(|c| c.beyond())
        .count();
    assert!(beyond > 0, "the two GPUs differ beyond noise somewhere");
    assert!(
        md.contains("| **▲ beyond noise** |") || md.contains("| **▼ beyond noise** |"),
        "no bold marker in report.md"
    );
    assert!(
        html.contains("<tr class=\"up\">") || html.contains("<tr class=\"down\">"),
        "no marked row in report.html"
    );
    assert!(html.contains("<td class=\"change\">▲ beyond noise</td>"));
    assert!(md.contains("NVIDIA H100 80GB HBM3 | NVIDIA H200 |"));
    std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
}

#[test]
fn a_run_compared_with_itself_changes_nothing() {
    let a = ComparedRun::load("A", &recorded("h100")).unwrap();
    let b = ComparedRun::load("B", &recorded("h100")).unwrap();
    let comparison = compare::compare(&a, &b);
    assert!(comparison.only.is_empty() && comparison.banners.is_empty());
    let mut ratios = 0;
    for table in comparison.sections.iter().flat_map(|s| &s.tables) {
        assert!(
            table.changes.iter().flatten().all(|c| !c.beyond()),
            "{:?} marks a change",
            table.table.caption
        );
        if let Some(column) = table.table.column("B/A") {
            for row in &table.table.rows {
                assert!(
                    row[column] == "1.000" || row[column] == "–",
                    "{:?}: {row:?}",
                    table.table.caption
                );
                ratios += usize::from(row[column] == "1.000");
            }
        }
    }
    assert!(ratios > 100, "only {ratios} ratios");
    let md = compare::render::markdown(&comparison);
    assert!(!md.contains("beyond noise**"));
    assert!(!compare::render::html(&comparison).contains("class=\"up\""));
}

#[test]
fn a_summary_of_another_format_names_its_file_and_field() {
    let dir = h100_with_summary("old-format", |s| {
        s.as_object_mut().unwrap().remove("complete");
    });
    let err = load_error(&dir);
    let text = err.to_string();
    assert!(err.is_usage(), "{text}");
    assert!(
        text.contains("summary.json") && text.contains("`complete`"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1, "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn folders_that_are_not_results_are_clear_errors_and_nothing_is_written() {
    let empty = scratch("not-results");
    let out = empty.join("out");
    for (dir, expected) in [
        (empty.clone(), "holds no streamlab results"),
        (empty.join("missing"), "does not exist"),
    ] {
        let err = compare::write(&dir, &recorded("h100"), Some(out.as_path())).unwrap_err();
        assert!(
            err.is_usage() && err.to_string().contains(expected),
            "{err}"
        );
        let err = compare::write(&recorded("h100"), &dir, Some(out.as_path())).unwrap_err();
        assert!(err.to_string().contains(expected), "{err}");
        assert!(!out.exists(), "{} written", out.display());
    }
    let file = empty.join("file.txt");
    std::fs::write(&file, "x").unwrap();
    assert!(load_error(&file).to_string().contains("is not a folder"));
    std::fs::remove_dir_all(&empty).unwrap();

    let no_summary = h100_with_summary("no-summary", |_| {});
    std::fs::remove_file(no_summary.join("summary.json")).unwrap();
    let err = load_error(&no_summary);
    assert!(
        err.is_usage() && err.to_string().contains("has no summary.json"),
        "{err}"
    );
    std::fs::remove_dir_all(&no_summary).unwrap();
}

#[test]
fn an_incomplete_run_is_compared_and_marked() {
    let dir = h100_with_summary("incomplete", |s| {
        s["complete"] = false.into();
        s["interrupted_by"] = "SIGINT".into();
        s["steps_not_run"] = serde_json::json!(["overlap"]);
    });
    let a = ComparedRun::load("A", &recorded("h100")).unwrap();
    let b = ComparedRun::load("B", &dir).unwrap();
    let comparison = compare::compare(&a, &b);
    assert!(!comparison.sections.is_empty());
    let md = compare::render::markdown(&comparison);
    let html = compare::render::html(&comparison);
    let marked = "incomplete run (stopped by SIGINT; not run or not finished: overlap)";
    let banner = format!("{}: {marked}", b.heading());
    assert!(
        md.contains(&format!("> **Incomplete run.** {banner}")),
        "{md}"
    );
    assert!(md.contains(&format!("| Run | complete | {marked} |")));
    assert!(html.contains(&format!("<strong>Incomplete run.</strong> {banner}")));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_rule_marks_only_changes_past_both_noises() {
    assert_eq!(Change::of(100.0, Some(0.01), 103.0, Some(0.01)), Change::Up);
    assert_eq!(
        Change::of(100.0, Some(0.01), 102.0, Some(0.01)),
        Change::Within
    );
    assert_eq!(
        Change::of(100.0, Some(0.01), 97.0, Some(0.01)),
        Change::Down
    );
    assert_eq!(
        Change::of(100.0, None, 200.0, Some(0.01)),
        Change::NoiseNotMeasured
    );
}
