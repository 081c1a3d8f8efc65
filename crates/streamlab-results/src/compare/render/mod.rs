//! A [`Comparison`] written out: `report.md` and `report.html` from one list of `Block`s
//! (what changed first, then each experiment, the whole provenance last), the charts
//! beside them, and `comparison.json`.
mod json_file;

pub use json_file::{Counts, Totals, comparison_json, rule_text};

use super::{ComparedRow, ComparedSection, Comparison, change_text, changed, p_text, significant};
use crate::report::page::{Block, Lead, Link};
use crate::report::table::{self, Columns, Table};
use crate::report::{html, markdown};
use crate::saved::files;
use crate::verdict::percent;

/// Every file of the comparison: the charts, the pages and `comparison.json`.
pub fn files(c: &Comparison) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = (c.sections.iter())
        .flat_map(|s| &s.figures)
        .map(|f| (f.file().to_owned(), f.svg.clone()))
        .collect();
    out.push((files::REPORT_MD.to_owned(), markdown(c)));
    out.push((files::REPORT_HTML.to_owned(), html(c)));
    out.push((files::COMPARISON.to_owned(), comparison_json(c)));
    out
}

/// A table of `rows` with both values and their changes; `experiment` names each row's.
fn rows_table(
    c: &Comparison,
    caption: &str,
    rows: &[&ComparedRow],
    experiment: bool,
) -> Block<'static> {
    let (ha, hb) = heads(c);
    let noise = |n: Option<f64>| n.map_or("not measured".to_owned(), table::noise);
    let dash = || "–".to_owned();
    let controlled = |r: &&ComparedRow| {
        let j = r.verdicts.controlled;
        j.map_or_else(dash, |j| change_text(j.b_over_a, Some(j.verdict)))
    };
    let t = Columns::<&ComparedRow>::new()
        .then(experiment, |t| {
            t.show("experiment", |r| r.row.experiment.to_owned())
        })
        .show("row", |r| r.row.label.clone())
        .show("unit", |r| r.row.unit.to_owned())
        .show(ha, |r| significant(r.row.a.value))
        .show("noise A", move |r| noise(r.row.a.noise))
        .show(hb, |r| significant(r.row.b.value))
        .show("noise B", move |r| noise(r.row.b.noise))
        .show("B/A raw", |r| {
            change_text(r.verdicts.raw.b_over_a, r.raw_called())
        })
        .show("p", move |r| {
            r.verdicts.raw.p_value.map_or_else(dash, p_text)
        })
        .show("held against", move |r| {
            r.row.control.map_or_else(dash, |k| k.text().to_owned())
        })
        .show("B/A controlled", controlled)
        .table(Some(caption.to_owned()), rows);
    Block::Judged(t, rows.iter().map(|r| Some(r.verdicts.verdict())).collect())
}

/// The headings of the two sides' columns, as the provenance table names them.
fn heads(c: &Comparison) -> (String, String) {
    let side = |i: usize| c.header.header.get(i).cloned().unwrap_or_default();
    (side(1), side(2))
}

fn section_blocks<'a>(c: &Comparison, s: &'a ComparedSection) -> Vec<Block<'a>> {
    let (ha, hb) = heads(c);
    let mut out = vec![
        Block::Heading(2, s.name.to_owned(), Some(s.name.to_owned())),
        Block::Note("Verdicts".into(), s.summary_line()),
    ];
    if let Some((n, moved)) = s.machine_moved() {
        let by = percent(moved.abs());
        out.push(Block::Note(
            "The machine moved".into(),
            format!("by {by} (the median of {n} rows called changed raw that moved with their controls: the code did not change them, the machine did)"),
        ));
    }
    out.extend((s.notes.iter()).map(|(label, text)| Block::Note(label.clone(), text.clone())));
    for (label, rows) in &s.only {
        let items = rows.iter().map(|r| (None, r.clone())).collect();
        out.push(Block::Folded(
            format!("{label}: {} rows", rows.len()),
            vec![Block::List(items)],
        ));
    }
    let headline = "its headline, as each run's summary has it";
    let side_by_side = [
        (headline, "", &s.headlines),
        ("parameters that differ", "parameter", &s.params),
    ];
    for (caption, first, rows) in side_by_side.into_iter().filter(|(.., r)| !r.is_empty()) {
        let mut t = Table::new(Some(caption.into()), &[first, &ha, &hb]);
        t.rows = (rows.iter())
            .map(|(label, a, b)| vec![label.clone(), a.clone(), b.clone()])
            .collect();
        out.push(Block::whole(t));
    }
    let changed = changed(&s.rows);
    if !changed.is_empty() {
        let caption = "rows called changed, largest change first";
        out.push(rows_table(c, caption, &changed, false));
    }
    let all: Vec<&ComparedRow> = s.rows.iter().collect();
    let mut folded = vec![rows_table(c, "every row, medians", &all, false)];
    folded.extend(s.figures.iter().map(Block::Figure));
    out.push(Block::Folded(
        format!("every row of {} ({}) and its chart", s.name, s.rows.len()),
        folded,
    ));
    out
}

/// Each experiment's spread between two machines, and the rows it was fitted on.
fn margins(c: &Comparison) -> Block<'static> {
    let m = &c.margins;
    let rows = |s: &ComparedSection| m.experiments.get(s.name).map(|e| e.rows.to_string());
    let t = Columns::<ComparedSection>::new()
        .show("experiment", |s| s.name.to_owned())
        .show("raw", |s| percent(m.spread(s.name, false)))
        .show("controlled", |s| percent(m.spread(s.name, true)))
        .show("rows", move |s| rows(s).unwrap_or_else(|| "pooled".into()))
        .table(Some("each experiment's spread between two machines (one standard deviation of ln B/A), raw and controlled, and the rows it was fitted on".into()), &c.sections);
    Block::whole(t)
}

/// The comparison's first notes, (label, text): what was compared, the rows judged
/// alone, those held against a control, and the totals with the rule's false-call rate.
pub fn notes(c: &Comparison) -> [(&'static str, String); 4] {
    let totals = Totals::of(c.rows());
    let [alone, controlled] = totals.headlines();
    let false_calls = c.margins.false_call_text();
    let in_all = format!(
        "{}. The rule's measured false-call rate: {false_calls}.",
        totals.line()
    );
    [
        ("What was compared", c.identity()),
        ("The machine", alone),
        ("The code", controlled),
        ("In all", in_all),
    ]
}

/// The experiments whose rows moved with the machine, as a note: (label, text).
pub fn moved_with_machine(c: &Comparison) -> Option<(String, String)> {
    let moved: Vec<String> = (c.sections.iter())
        .filter_map(|s| {
            let (n, by) = s.machine_moved()?;
            Some(format!("{}: {n} rows, by {}", s.name, percent(by.abs())))
        })
        .collect();
    let label = "Moved with the machine (not counted as changes)";
    (!moved.is_empty()).then(|| (label.to_owned(), moved.join("; ")))
}

fn blocks(c: &Comparison) -> Vec<Block<'_>> {
    let mut out = vec![Block::Title(c.title.clone())];
    out.extend((c.banners.iter()).map(|b| Block::Banner("Incomplete run.".into(), b.clone())));
    out.extend(notes(c).map(|(label, text)| Block::Note(label.into(), text)));
    let changed = changed(c.rows());
    if !changed.is_empty() {
        let caption = "every row called changed, largest change first";
        out.push(rows_table(c, caption, &changed, true));
    }
    if let Some((label, text)) = moved_with_machine(c) {
        out.push(Block::Note(label, text));
    }
    let caption = "provenance that differs (the whole of it is at the end)";
    out.push(Block::whole(Table {
        caption: Some(caption.into()),
        rows: (c.header.rows.iter())
            .filter(|r| r[1] != r[2])
            .cloned()
            .collect(),
        ..c.header.clone()
    }));
    for o in &c.only {
        out.push(Block::Note(
            format!("Only in {}", o.heading),
            o.names.join(", "),
        ));
    }
    if !c.sections.is_empty() {
        out.push(Block::Heading(2, "Experiments".into(), None));
        out.push(Block::List(
            (c.sections.iter())
                .map(|s| Lead::item(s.name, Some(Link::here(s.name)), false, s.summary_line()))
                .collect(),
        ));
    }
    for s in &c.sections {
        out.extend(section_blocks(c, s));
    }
    out.push(Block::Heading(
        2,
        "How rows are judged".into(),
        Some("rule".into()),
    ));
    out.push(Block::Note("Rule".into(), rule_text(c)));
    out.push(margins(c));
    out.push(Block::Folded(
        "the whole provenance of both runs".into(),
        vec![Block::whole(c.header.clone())],
    ));
    out
}

/// The comparison as Markdown.
pub fn markdown(c: &Comparison) -> String {
    markdown::page(&blocks(c))
}

/// What the comparison's page adds to the report's style.
const COMPARE_STYLE: &str = "
tr.slower td.verdict { color: #b35806; font-weight: bold; }
tr.faster td.verdict { color: #1f5fa8; font-weight: bold; }
tr.slower, tr.faster { background: #fffbe6; }
details { margin: 0.5em 0 1em; }
summary { cursor: pointer; color: #1f5fa8; }
";

/// The comparison as one HTML page.
pub fn html(c: &Comparison) -> String {
    html::page(COMPARE_STYLE, &blocks(c))
}
