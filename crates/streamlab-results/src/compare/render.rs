//! A [`Comparison`] written out: `report.md` (GitHub-flavoured Markdown, a row called
//! changed in bold), `report.html` (one self-contained page, such a row classed `faster`
//! or `slower` and coloured, with the same text marker so it reads without colour), the
//! charts beside them, and `comparison.json`: every compared row with its verdicts, the
//! counts, the margins and the rule's measured false-call rate.
//!
//! Both pages open with what changed: the totals, the changed rows, the provenance that
//! differs; then each experiment, its changed rows first and the rest folded; the whole
//! provenance last, folded. Both are written from one list of [`Block`]s.
use std::fmt::Write;

use serde::Serialize;

use super::judge::{Judgement, Margins};
use super::rows::ControlKind;
use super::{ComparedRow, ComparedSection, Comparison, SideFacts, p_text, significant};
use crate::derived::summary::{Entries, Json};
use crate::experiment::json;
use crate::report::html::{STYLE, escape, inline};
use crate::report::markdown::cell;
use crate::report::section::Figure;
use crate::report::table::{self, Table, num};
use crate::saved::{KernelSet, files};
use crate::verdict::Verdict;

/// Every file of the comparison: the charts, then `report.md`, `report.html` and
/// `comparison.json`.
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

/// How many rows got each verdict.
#[derive(Debug, Default, Serialize)]
pub struct Counts {
    pub rows: usize,
    pub changed: usize,
    pub faster: usize,
    pub slower: usize,
    pub same: usize,
    pub too_noisy: usize,
    pub not_comparable: usize,
}

impl Counts {
    fn add(&mut self, v: Verdict) {
        self.rows += 1;
        self.changed += usize::from(v.changed());
        match v {
            Verdict::Faster => self.faster += 1,
            Verdict::Slower => self.slower += 1,
            Verdict::Same => self.same += 1,
            Verdict::TooNoisy => self.too_noisy += 1,
            Verdict::NotComparable => self.not_comparable += 1,
        }
    }
}

/// The counts of a comparison's (or a section's) rows: raw, controlled (rows with a
/// control), and what the rows say of the code.
#[derive(Debug, Default, Serialize)]
pub struct Totals {
    /// Raw verdicts: what the machine and the code did (a row the machine moved counted
    /// the same: see `moved_with_machine`).
    pub raw: Counts,
    /// Controlled verdicts, over the rows with a control: what the code did.
    pub controlled: Counts,
    /// The controlled verdict where there is one, else the raw one: what `--fail-on`
    /// reads.
    pub verdict: Counts,
    /// Rows called changed raw that moved with their control.
    pub moved_with_machine: usize,
}

impl Totals {
    pub fn of<'a>(rows: impl IntoIterator<Item = &'a ComparedRow>) -> Totals {
        let mut t = Totals::default();
        for r in rows {
            t.raw.add(if r.verdicts.moved_with_machine() {
                Verdict::Same
            } else {
                r.raw()
            });
            if let Some(c) = r.verdicts.controlled {
                t.controlled.add(c.verdict);
            }
            t.verdict.add(r.verdicts.verdict());
            t.moved_with_machine += usize::from(r.verdicts.moved_with_machine());
        }
        t
    }

    /// "3 of 617 rows changed (1 faster, 2 slower); 32 moved with the machine; raw 35 of
    /// 617 called changed, controlled 1 of 198".
    pub fn line(&self) -> String {
        let mut line = format!(
            "{} of {} rows changed ({} faster, {} slower)",
            self.verdict.changed, self.verdict.rows, self.verdict.faster, self.verdict.slower
        );
        if self.moved_with_machine > 0 {
            let _ = write!(line, "; {} moved with the machine", self.moved_with_machine);
        }
        let _ = write!(
            line,
            "; raw {} of {} called changed, controlled {} of {}",
            self.raw.changed, self.raw.rows, self.controlled.changed, self.controlled.rows
        );
        line
    }
}

/// One compared row in `comparison.json`.
#[derive(Serialize)]
struct RowFile<'a> {
    label: &'a str,
    unit: &'a str,
    a: f64,
    b: f64,
    noise_a: Option<f64>,
    noise_b: Option<f64>,
    /// The raw change and its verdict, against the experiment's spread between machines.
    b_over_a: Option<f64>,
    p_value: Option<f64>,
    spread: f64,
    verdict: Verdict,
    /// What it was held against, and the controlled change with its verdict.
    control: Option<ControlKind>,
    controlled_b_over_a: Option<f64>,
    controlled_p_value: Option<f64>,
    controlled_spread: Option<f64>,
    controlled_verdict: Option<Verdict>,
    moved_with_machine: bool,
}

#[derive(Serialize)]
struct RuleFile<'a> {
    text: String,
    min_change: f64,
    false_discovery_rate: f64,
    false_calls: FalseCalls,
    margins: &'a Margins,
}

/// The largest share of rows called changed on an A/A pair left out of the fit.
#[derive(Serialize)]
struct FalseCalls {
    raw: f64,
    controlled: f64,
}

#[derive(Serialize)]
struct ComparisonFile<'a> {
    a: &'a SideFacts,
    b: &'a SideFacts,
    rule: RuleFile<'a>,
    /// Over every experiment.
    totals: Totals,
    /// Per experiment: its counts, then its rows by kernel set and key.
    experiments: Json,
    only_in_a: Vec<&'static str>,
    only_in_b: Vec<&'static str>,
}

/// The rule in words, with its margins' measured false-call rate.
pub fn rule_text(c: &Comparison) -> String {
    let floor = if c.min_change > 0.0 {
        format!(
            " A change under {} (--min-change) is never called.",
            crate::verdict::percent(c.min_change)
        )
    } else {
        String::new()
    };
    format!(
        "Runs are the unit: a row's change ln(B/A) is held against the spread s that rows of its experiment show between two machines of one kind running one build (fitted on A/A pairs) together with the two runs' own noise w of the row, p = P(|Z| ≥ |ln(B/A)| / √(s² + w²)), and the rows called changed are chosen over the whole comparison at once by the Benjamini–Hochberg procedure at a {:.0}% false-discovery rate. A row not called is the same where its own noise is within its experiment's spread, else too noisy to say. Raw verdicts judge the row alone (what the machine and the code did); controlled ones the row over its control measured in the same run (its C++ twin, the link's probes, the launch probe: what the code did), against the spread of such ratios. Measured false-call rate: {}.{floor}",
        100.0 * super::judge::FDR,
        c.margins.false_call_text()
    )
}

/// `comparison.json`: every compared row by experiment, kernel set and key (a JSON
/// object at each level, so `/experiments/bounds/rust/dtod/verdict` names one verdict),
/// with each experiment's and the whole comparison's counts.
pub fn comparison_json(c: &Comparison) -> String {
    let mut experiments = Entries::default();
    for s in &c.sections {
        let mut sets = Entries::default();
        for set in [KernelSet::Rust, KernelSet::Cuda] {
            let rows: Vec<&ComparedRow> = s.rows.iter().filter(|r| r.set() == set).collect();
            if rows.is_empty() {
                continue;
            }
            let mut keyed = Entries::default();
            for r in rows {
                let (raw, controlled) = (r.verdicts.raw, r.verdicts.controlled);
                keyed.push(
                    r.key(),
                    json(&RowFile {
                        label: r.label(),
                        unit: r.row.unit,
                        a: r.row.a.value,
                        b: r.row.b.value,
                        noise_a: r.row.a.noise,
                        noise_b: r.row.b.noise,
                        b_over_a: raw.b_over_a,
                        p_value: raw.p_value,
                        spread: raw.spread,
                        verdict: raw.verdict,
                        control: r.row.control,
                        controlled_b_over_a: controlled.and_then(|c| c.b_over_a),
                        controlled_p_value: controlled.and_then(|c| c.p_value),
                        controlled_spread: controlled.map(|c| c.spread),
                        controlled_verdict: controlled.map(|c| c.verdict),
                        moved_with_machine: r.verdicts.moved_with_machine(),
                    }),
                );
            }
            sets.push(set_key(set), Json::Object(keyed));
        }
        let mut entry = match json(&Totals::of(&s.rows)) {
            Json::Object(e) => e,
            _ => unreachable!("counts serialise as an object"),
        };
        // The raw counts at the section's top level, as every comparison has them.
        if let Json::Object(raw) = json(&Totals::of(&s.rows).raw) {
            entry.0.extend(raw.0);
        }
        entry.0.extend(sets.0);
        experiments.push(s.name, Json::Object(entry));
    }
    let only = |side: &str| {
        (c.only.iter())
            .find(|o| o.side == side)
            .map(|o| o.names.clone())
            .unwrap_or_default()
    };
    let (raw, controlled) = c.margins.false_calls();
    let file = ComparisonFile {
        a: &c.sides[0],
        b: &c.sides[1],
        rule: RuleFile {
            text: rule_text(c),
            min_change: c.min_change,
            false_discovery_rate: super::judge::FDR,
            false_calls: FalseCalls { raw, controlled },
            margins: &c.margins,
        },
        totals: Totals::of(c.rows()),
        experiments: Json::Object(experiments),
        only_in_a: only("A"),
        only_in_b: only("B"),
    };
    crate::folder::to_json(files::COMPARISON, &file).expect("a comparison serialises")
}

/// The key of a kernel set in `comparison.json`.
fn set_key(set: KernelSet) -> &'static str {
    match set {
        KernelSet::Rust => "rust",
        KernelSet::Cuda => "cuda",
    }
}

/// What a page is made of, rendered the same way into Markdown and HTML.
enum Block<'a> {
    Title(String),
    Heading(String, Option<&'static str>),
    Banner(String),
    Note(String, String),
    Table(Table, Vec<Option<Verdict>>),
    Figure(&'a Figure),
    /// Shown one click down: a summary line and what it hides.
    Folded(String, Vec<Block<'a>>),
    List(Vec<String>),
}

/// A judgement as a table cell: "1.034 ▲ slower" ("–" without a ratio).
fn judged(j: Option<Judgement>) -> String {
    match j {
        Some(Judgement {
            b_over_a: Some(r),
            verdict,
            ..
        }) => format!("{} {}", num(r, 3), verdict.text()),
        Some(j) => j.verdict.text().to_owned(),
        None => "–".into(),
    }
}

/// A table of `rows`: each with both values, their noise, and its raw and controlled
/// change and verdict; `experiment` prefixes the row's name where rows of several
/// experiments share it.
fn rows_table(
    caption: String,
    rows: &[&ComparedRow],
    heads: (&str, &str),
    experiment: bool,
) -> Block<'static> {
    let mut header = vec![
        "row",
        "unit",
        heads.0,
        "noise A",
        heads.1,
        "noise B",
        "B/A raw",
        "p",
        "held against",
        "B/A controlled",
    ];
    if experiment {
        header.insert(0, "experiment");
    }
    let mut t = Table::new(Some(caption), &header);
    let mut verdicts = Vec::new();
    let noise = |n: Option<f64>| n.map_or("not measured".to_owned(), table::noise);
    for r in rows {
        let mut cells = vec![
            r.label().to_owned(),
            r.row.unit.to_owned(),
            significant(r.row.a.value),
            noise(r.row.a.noise),
            significant(r.row.b.value),
            noise(r.row.b.noise),
            judged(Some(r.verdicts.raw)),
            r.verdicts.raw.p_value.map_or("–".into(), p_text),
            r.row.control.map_or("–".into(), |k| k.text().to_owned()),
            judged(r.verdicts.controlled),
        ];
        if experiment {
            cells.insert(0, r.row.experiment.to_owned());
        }
        t.rows.push(cells);
        verdicts.push(Some(r.verdicts.verdict()));
    }
    Block::Table(t, verdicts)
}

fn heads(c: &Comparison) -> (String, String) {
    let side = |i: usize| {
        let h = &c.header.header;
        h.get(i + 1).cloned().unwrap_or_default()
    };
    (side(0), side(1))
}

fn section_blocks<'a>(c: &Comparison, s: &'a ComparedSection) -> Vec<Block<'a>> {
    let (ha, hb) = heads(c);
    let mut out = vec![Block::Heading(s.name.to_owned(), Some(s.name))];
    out.push(Block::Note("Verdicts".into(), s.summary_line()));
    if let Some((n, moved)) = s.machine_moved() {
        out.push(Block::Note(
            "The machine moved".into(),
            format!(
                "by {} (the median of {n} rows called changed raw that moved with their controls: the code did not change them, the machine did)",
                crate::verdict::percent(moved.abs())
            ),
        ));
    }
    for (label, text) in &s.notes {
        out.push(Block::Note(label.clone(), text.clone()));
    }
    if !s.headlines.is_empty() {
        let mut t = Table::new(
            Some("its headline, as each run's summary has it".into()),
            &["", &ha, &hb],
        );
        for (label, a, b) in &s.headlines {
            t.rows.push(vec![label.clone(), a.clone(), b.clone()]);
        }
        let n = t.rows.len();
        out.push(Block::Table(t, vec![None; n]));
    }
    if !s.params.is_empty() {
        let mut t = Table::new(
            Some("parameters that differ".into()),
            &["parameter", &ha, &hb],
        );
        for (k, a, b) in &s.params {
            t.rows.push(vec![k.clone(), a.clone(), b.clone()]);
        }
        let n = t.rows.len();
        out.push(Block::Table(t, vec![None; n]));
    }
    let changed = s.changed();
    if !changed.is_empty() {
        out.push(rows_table(
            "rows called changed, largest change first".into(),
            &changed,
            (&ha, &hb),
            false,
        ));
    }
    let all: Vec<&ComparedRow> = s.rows.iter().collect();
    let mut folded = vec![rows_table(
        "every row, medians".into(),
        &all,
        (&ha, &hb),
        false,
    )];
    folded.extend(s.figures.iter().map(Block::Figure));
    out.push(Block::Folded(
        format!("every row of {} ({}) and its chart", s.name, s.rows.len()),
        folded,
    ));
    out
}

fn blocks(c: &Comparison) -> Vec<Block<'_>> {
    let (ha, hb) = heads(c);
    let totals = Totals::of(c.rows());
    let mut out = vec![Block::Title(c.title.clone())];
    out.extend(c.banners.iter().map(|b| Block::Banner(b.clone())));
    out.push(Block::Note(
        "What changed".into(),
        format!(
            "{}. The rule's measured false-call rate: {}.",
            totals.line(),
            c.margins.false_call_text()
        ),
    ));
    let mut changed: Vec<&ComparedRow> = (c.rows())
        .filter(|r| r.verdicts.verdict().changed())
        .collect();
    changed.sort_by(|a, b| b.size().total_cmp(&a.size()));
    if !changed.is_empty() {
        out.push(rows_table(
            "every row called changed, largest change first".into(),
            &changed,
            (&ha, &hb),
            true,
        ));
    }
    let moved: Vec<String> = (c.sections.iter())
        .filter_map(|s| {
            s.machine_moved().map(|(n, m)| {
                format!(
                    "{}: {n} rows, by {}",
                    s.name,
                    crate::verdict::percent(m.abs())
                )
            })
        })
        .collect();
    if !moved.is_empty() {
        out.push(Block::Note(
            "Moved with the machine (not counted as changes)".into(),
            moved.join("; "),
        ));
    }
    let differing = c.differing();
    let mut t = Table::new(
        Some("provenance that differs (the whole of it is at the end)".into()),
        &["", &ha, &hb],
    );
    for row in &differing {
        t.rows.push((*row).clone());
    }
    let n = t.rows.len();
    out.push(Block::Table(t, vec![None; n]));
    for o in &c.only {
        out.push(Block::Note(
            format!("Only in {}", o.heading),
            o.names.join(", "),
        ));
    }
    if !c.sections.is_empty() {
        out.push(Block::Heading("Experiments".into(), None));
        out.push(Block::List(
            (c.sections.iter())
                .map(|s| format!("[{}](#{}): {}", s.name, s.name, s.summary_line()))
                .collect(),
        ));
    }
    for s in &c.sections {
        out.extend(section_blocks(c, s));
    }
    out.push(Block::Heading("How rows are judged".into(), Some("rule")));
    out.push(Block::Note("Rule".into(), rule_text(c)));
    let mut margins = Table::new(
        Some("each experiment's spread between two machines (one standard deviation of ln B/A), raw and controlled, and the rows it was fitted on".into()),
        &["experiment", "raw", "controlled", "rows"],
    );
    for s in &c.sections {
        let m = c.margins.experiments.get(s.name);
        margins.rows.push(vec![
            s.name.to_owned(),
            crate::verdict::percent(c.margins.spread(s.name, false)),
            crate::verdict::percent(c.margins.spread(s.name, true)),
            m.map_or("pooled".into(), |m| m.rows.to_string()),
        ]);
    }
    let n = margins.rows.len();
    out.push(Block::Table(margins, vec![None; n]));
    let n = c.header.rows.len();
    out.push(Block::Folded(
        "the whole provenance of both runs".into(),
        vec![Block::Table(c.header.clone(), vec![None; n])],
    ));
    out
}

fn md_row(cells: &[String]) -> String {
    let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
    format!("| {} |\n", cells.join(" | "))
}

fn md_table(t: &Table, verdicts: &[Option<Verdict>]) -> String {
    let mut out = String::new();
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "*{c}*\n");
    }
    out += &md_row(&t.header);
    let _ = writeln!(out, "|{}", " --- |".repeat(t.header.len()));
    for (i, row) in t.rows.iter().enumerate() {
        let changed = verdicts
            .get(i)
            .copied()
            .flatten()
            .is_some_and(Verdict::changed);
        let row: Vec<String> = (row.iter())
            .map(|c| {
                if changed && c.contains(['▲', '▼']) {
                    format!("**{c}**")
                } else {
                    c.clone()
                }
            })
            .collect();
        out += &md_row(&row);
    }
    out + "\n"
}

fn md_blocks(blocks: &[Block], out: &mut String) {
    for b in blocks {
        match b {
            Block::Title(t) => {
                let _ = writeln!(out, "# {t}\n");
            }
            Block::Heading(h, anchor) => {
                if let Some(a) = anchor {
                    let _ = writeln!(out, "<a id=\"{a}\"></a>\n");
                }
                let _ = writeln!(out, "## {h}\n");
            }
            Block::Banner(text) => {
                let _ = writeln!(out, "> **Incomplete run.** {text}\n");
            }
            Block::Note(label, text) => {
                let _ = writeln!(out, "**{label}.** {text}\n");
            }
            Block::Table(t, v) => *out += &md_table(t, v),
            Block::Figure(f) => {
                let _ = writeln!(out, "![{}]({})\n", f.title(), f.file());
            }
            Block::Folded(summary, inner) => {
                let _ = writeln!(out, "<details><summary>{summary}</summary>\n");
                md_blocks(inner, out);
                out.push_str("</details>\n\n");
            }
            Block::List(items) => {
                for i in items {
                    let _ = writeln!(out, "- {i}");
                }
                out.push('\n');
            }
        }
    }
}

/// The comparison as Markdown.
pub fn markdown(c: &Comparison) -> String {
    let mut out = String::new();
    md_blocks(&blocks(c), &mut out);
    out
}

const COMPARE_STYLE: &str = "
tr.slower td.verdict { color: #b35806; font-weight: bold; }
tr.faster td.verdict { color: #1f5fa8; font-weight: bold; }
tr.slower, tr.faster { background: #fffbe6; }
details { margin: 0.5em 0 1em; }
summary { cursor: pointer; color: #1f5fa8; }
";

fn html_table(t: &Table, verdicts: &[Option<Verdict>]) -> String {
    let mut out = String::new();
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "<p class=\"caption\">{}</p>", escape(c));
    }
    out += "<table>\n<thead><tr>";
    for h in &t.header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out += "</tr></thead>\n";
    for (i, row) in t.rows.iter().enumerate() {
        let class = match verdicts.get(i).copied().flatten() {
            Some(Verdict::Slower) => " class=\"slower\"",
            Some(Verdict::Faster) => " class=\"faster\"",
            _ => "",
        };
        let _ = write!(out, "<tr{class}>");
        for c in row {
            let td = if c.contains(['▲', '▼']) {
                "<td class=\"verdict\">"
            } else {
                "<td>"
            };
            let _ = write!(out, "{td}{}</td>", escape(c));
        }
        out += "</tr>\n";
    }
    out + "</table>\n"
}

/// A Markdown link `[text](#anchor)` as HTML, other text escaped.
fn html_text(text: &str) -> String {
    if let Some(rest) = text.strip_prefix('[')
        && let Some((name, rest)) = rest.split_once("](#")
        && let Some((anchor, rest)) = rest.split_once(')')
    {
        return format!("<a href=\"#{anchor}\">{}</a>{}", escape(name), escape(rest));
    }
    escape(text)
}

fn html_blocks(blocks: &[Block], out: &mut String) {
    for b in blocks {
        match b {
            Block::Title(t) => {
                let _ = writeln!(out, "<h1>{}</h1>", escape(t));
            }
            Block::Heading(h, anchor) => {
                let id = anchor.map_or(String::new(), |a| format!(" id=\"{a}\""));
                let _ = writeln!(out, "<h2{id}>{}</h2>", escape(h));
            }
            Block::Banner(text) => {
                let _ = writeln!(
                    out,
                    "<p class=\"banner\"><strong>Incomplete run.</strong> {}</p>",
                    escape(text)
                );
            }
            Block::Note(label, text) => {
                let _ = writeln!(
                    out,
                    "<p class=\"note\"><strong>{}.</strong> {}</p>",
                    escape(label),
                    escape(text)
                );
            }
            Block::Table(t, v) => *out += &html_table(t, v),
            Block::Figure(f) => {
                let _ = writeln!(
                    out,
                    "<figure>{}<figcaption>{} (<a href=\"{}\">{}</a>)</figcaption></figure>",
                    inline(&f.svg),
                    escape(f.title()),
                    f.file(),
                    f.file()
                );
            }
            Block::Folded(summary, inner) => {
                let _ = writeln!(out, "<details><summary>{}</summary>", escape(summary));
                html_blocks(inner, out);
                out.push_str("</details>\n");
            }
            Block::List(items) => {
                out.push_str("<ul>\n");
                for i in items {
                    let _ = writeln!(out, "<li>{}</li>", html_text(i));
                }
                out.push_str("</ul>\n");
            }
        }
    }
}

/// The comparison as one HTML page.
pub fn html(c: &Comparison) -> String {
    let mut body = String::new();
    html_blocks(&blocks(c), &mut body);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{}</title>\n<style>{STYLE}{COMPARE_STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(&c.title)
    )
}
