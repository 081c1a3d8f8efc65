//! What a reader sees of every recorded run (`tests/runs/` and the committed
//! `docs/results/`): printed output keeps to 100 columns; no page has an inner scroll
//! box, raw Markdown, or a table wider than the page; a long table shows the rows that
//! carry its finding first and folds the rest; the main page's first screen says what
//! the run found (one row per experiment) before the provenance, which is folded away.
use std::path::{Path, PathBuf};

use streamlab_results::report::fit::{
    LONG_ROWS, PAGE_PX, TERMINAL_COLUMNS, Width, page_parts, page_width,
};
use streamlab_results::report::html;
use streamlab_results::run::SavedRun;
use streamlab_results::run::report::{document, tables};

/// Every recorded run with a report: the test runs and the committed results.
fn runs() -> Vec<(PathBuf, SavedRun)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("tests/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.push(root.join("../../docs/results/h100"));
    dirs.push(root.join("../../docs/results/h200"));
    dirs.sort();
    let runs: Vec<_> = (dirs.into_iter())
        .filter_map(|d| SavedRun::load(&d).ok().map(|r| (d, r)))
        .filter(|(_, r)| r.held().next().is_some())
        .collect();
    assert!(runs.len() >= 5, "recorded runs found: {}", runs.len());
    runs
}

/// The lines of `text` wider than `max` characters.
fn too_wide(text: &str, max: usize) -> Vec<String> {
    (text.lines())
        .filter(|l| l.chars().count() > max)
        .map(str::to_owned)
        .collect()
}

#[test]
fn printed_output_keeps_to_100_columns_unless_asked_wide() {
    let mut wide_lines = 0;
    for (dir, run) in runs() {
        let printed = tables(&run, Width::TERMINAL);
        let over = too_wide(&printed, TERMINAL_COLUMNS);
        assert!(
            over.is_empty(),
            "{}: {} lines over 100 columns, e.g. {:?}",
            dir.display(),
            over.len(),
            over.first()
        );
        wide_lines += too_wide(&tables(&run, Width::Wide), TERMINAL_COLUMNS).len();
    }
    assert!(wide_lines > 0, "--wide prints every column side by side");
}

#[test]
fn each_kernel_sets_printed_block_is_captioned_and_filled() {
    for (dir, run) in runs() {
        let printed = tables(&run, Width::Wide);
        for block in printed.split("\nsincos-overlap").skip(1) {
            let block = block.split("\nverification").next().unwrap();
            let cuda = block.starts_with(" (CUDA C++ kernels)");
            assert_eq!(
                block.contains("the blog's lines (medians, CUDA C++ kernels)"),
                cuda,
                "{}: the blog's lines name the kernels of their block",
                dir.display()
            );
            if block.contains("C++ kernels  ") {
                let header = block.lines().find(|l| l.starts_with("variant")).unwrap();
                let at = header.find("C++ kernels").unwrap();
                for row in block.lines().filter(|l| l.starts_with("asynchronous")) {
                    let cell = row.get(at..at + 6).unwrap_or("").trim();
                    assert!(
                        !cell.starts_with('–'),
                        "{}: an empty C++ cell: {row}",
                        dir.display()
                    );
                }
            }
        }
    }
}

#[test]
fn no_page_has_an_inner_scroll_box_or_raw_markdown() {
    for (dir, run) in runs() {
        let doc = document(&run).unwrap();
        for (_, page) in doc.pages() {
            no_scroll_box_or_markdown(&dir, &html::page("", &page));
        }
    }
}

fn no_scroll_box_or_markdown(dir: &Path, page: &str) {
    for forbidden in ["overflow", "max-height", "class=\"scroll\""] {
        assert!(
            !page.contains(forbidden),
            "{}: {forbidden} on the page",
            dir.display()
        );
    }
    let text: String = page
        .split('<')
        .map(|t| t.split_once('>').map_or(t, |(_, after)| after))
        .collect();
    assert!(
        !text.contains('`'),
        "{}: a raw backtick shows",
        dir.display()
    );
    assert!(
        !text.contains("**"),
        "{}: raw bold markers show",
        dir.display()
    );
}

#[test]
fn no_table_is_wider_than_the_page_and_long_ones_lead_with_their_key_rows() {
    let mut folded = 0;
    for (dir, run) in runs() {
        let doc = document(&run).unwrap();
        for s in &doc.sections {
            for t in &s.tables {
                for part in page_parts(t) {
                    let width: f64 = (0..part.header.len()).map(|i| page_width(&part, i)).sum();
                    let labels: f64 = (0..part.label_columns).map(|i| page_width(&part, i)).sum();
                    let one_column = part.header.len() <= part.label_columns + 1;
                    assert!(
                        width <= PAGE_PX || one_column,
                        "{}: {}: a part {width:.0} px wide, labels {labels:.0} px: {:?}",
                        dir.display(),
                        s.id,
                        part.header
                    );
                }
                if t.rows.len() > LONG_ROWS {
                    assert!(
                        t.folds(),
                        "{}: {}: a table of {} rows without the rows that carry its finding ({:?})",
                        dir.display(),
                        s.id,
                        t.rows.len(),
                        t.caption
                    );
                    folded += 1;
                }
            }
        }
    }
    assert!(folded > 0, "the recorded runs have long tables");
}

#[test]
fn the_first_screen_says_what_the_run_found_before_the_provenance() {
    for (dir, run) in runs() {
        let doc = document(&run).unwrap();
        let page = html::page("", &doc.pages()[0].1);
        let found = page
            .find("What this run found")
            .unwrap_or_else(|| panic!("{}: no findings", dir.display()));
        let provenance = page.find("Where and how it ran").unwrap();
        let pages = page.find("Each experiment's page").unwrap();
        assert!(
            found < provenance && provenance < pages,
            "{}",
            dir.display()
        );
        let f = doc.findings.as_ref().unwrap();
        let held: Vec<&str> = (run.held())
            .filter(|h| {
                h.analyses()
                    .iter()
                    .any(|a| a.set == streamlab_results::saved::KernelSet::Rust)
            })
            .map(|h| h.name())
            .collect();
        let rows: Vec<&str> = f.table.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(rows, held, "{}: one row per experiment", dir.display());
        for row in &f.table.rows {
            assert_eq!(row.len(), 6);
            assert!(["yes", "yes, both kernel sets", "FAILED"].contains(&row[5].as_str()));
        }
        assert!(
            f.words.len() >= held.len() - 1,
            "{}: a finding per experiment",
            dir.display()
        );
        for (name, words) in &f.words {
            assert!(words.ends_with('.') && words.len() < 400, "{name}: {words}");
        }
    }
}
