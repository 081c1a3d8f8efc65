//! A [`Comparison`] written out: `report.md` (GitHub-flavoured Markdown, a row called
//! changed in bold), `report.html` (one self-contained page, such a row classed `faster`
//! or `slower` and coloured, with the same text marker so it reads without colour), the
//! charts beside them, and `comparison.json`: every compared row with its verdict, the
//! counts per experiment, and the rule.
use std::fmt::Write;

use serde::Serialize;

use super::{ComparedRow, Comparison, MarkedTable, SideFacts};
use crate::derived::summary::{Entries, Json};
use crate::experiment::json;
use crate::report::html::{STYLE, escape, inline};
use crate::report::markdown::cell;
use crate::report::table::Table;
use crate::saved::{KernelSet, files};
use crate::verdict::{Rule, Verdict};

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
struct Counts {
    rows: usize,
    changed: usize,
    faster: usize,
    slower: usize,
    same: usize,
    too_noisy: usize,
    not_comparable: usize,
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

/// One compared row in `comparison.json`.
#[derive(Serialize)]
struct RowFile<'a> {
    label: &'a str,
    unit: &'a str,
    a: f64,
    b: f64,
    noise_a: Option<f64>,
    noise_b: Option<f64>,
    b_over_a: Option<f64>,
    p_value: Option<f64>,
    /// The smallest |B/A − 1| called a change for this row.
    min_effect: f64,
    verdict: Verdict,
}

/// The rule, as `comparison.json` states it.
#[derive(Serialize)]
struct RuleFile<'a> {
    test: &'static str,
    #[serde(flatten)]
    rule: &'a Rule,
    text: String,
}

#[derive(Serialize)]
struct ComparisonFile<'a> {
    a: &'a SideFacts,
    b: &'a SideFacts,
    rule: RuleFile<'a>,
    /// Over every experiment.
    totals: Counts,
    /// Per experiment: its counts, then its rows by kernel set and key.
    experiments: Json,
    only_in_a: Vec<&'static str>,
    only_in_b: Vec<&'static str>,
}

/// `comparison.json`: every compared row by experiment, kernel set and key (a JSON
/// object at each level, so `/experiments/bounds/rust/dtod/verdict` names one verdict),
/// with each experiment's and the whole comparison's counts.
pub fn comparison_json(c: &Comparison) -> String {
    let mut totals = Counts::default();
    let mut experiments = Entries::default();
    for s in &c.sections {
        let mut counts = Counts::default();
        let mut sets = Entries::default();
        for set in [KernelSet::Rust, KernelSet::Cuda] {
            let rows: Vec<&ComparedRow> = s.rows.iter().filter(|r| r.set == set).collect();
            if rows.is_empty() {
                continue;
            }
            let mut keyed = Entries::default();
            for r in rows {
                counts.add(r.judged.verdict);
                totals.add(r.judged.verdict);
                keyed.push(
                    &r.key,
                    json(&RowFile {
                        label: &r.label,
                        unit: r.unit,
                        a: r.a,
                        b: r.b,
                        noise_a: r.noise_a,
                        noise_b: r.noise_b,
                        b_over_a: r.judged.b_over_a,
                        p_value: r.judged.p_value,
                        min_effect: r.judged.min_effect,
                        verdict: r.judged.verdict,
                    }),
                );
            }
            sets.push(set_key(set), Json::Object(keyed));
        }
        let mut entry = match json(&counts) {
            Json::Object(e) => e,
            _ => unreachable!("counts serialise as an object"),
        };
        entry.0.extend(sets.0);
        experiments.push(s.name, Json::Object(entry));
    }
    let only = |side: &str| {
        (c.only.iter())
            .find(|o| o.side == side)
            .map(|o| o.names.clone())
            .unwrap_or_default()
    };
    let file = ComparisonFile {
        a: &c.sides[0],
        b: &c.sides[1],
        rule: RuleFile {
            test: "Mann–Whitney U, two-sided",
            rule: &c.rule,
            text: c.rule.describe(),
        },
        totals,
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

fn md_row(cells: &[String]) -> String {
    let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
    format!("| {} |\n", cells.join(" | "))
}

fn md_table(t: &Table, verdicts: Option<&[Option<Verdict>]>) -> String {
    let mut out = String::new();
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "*{c}*\n");
    }
    out += &md_row(&t.header);
    let _ = writeln!(out, "|{}", " --- |".repeat(t.header.len()));
    for (i, row) in t.rows.iter().enumerate() {
        let beyond = verdicts.and_then(|c| c[i]).is_some_and(Verdict::changed);
        let row: Vec<String> = (row.iter().enumerate())
            .map(|(j, c)| {
                if beyond && j + 1 == row.len() {
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

/// The comparison as Markdown.
pub fn markdown(c: &Comparison) -> String {
    let mut out = format!("# {}\n\n", c.title);
    for b in &c.banners {
        let _ = writeln!(out, "> **Incomplete run.** {b}\n");
    }
    out += &md_table(&c.header, None);
    let _ = writeln!(out, "**Verdicts.** {}\n", c.rule.describe());
    for o in &c.only {
        let _ = writeln!(out, "**Only in {}:** {}\n", o.heading, o.names.join(", "));
    }
    if !c.sections.is_empty() {
        out += "## Contents\n\n";
        for s in &c.sections {
            let _ = writeln!(out, "- [{}](#{}) ({})", s.name, s.name, s.summary_line());
        }
        out += "\n";
    }
    for s in &c.sections {
        let _ = writeln!(out, "<a id=\"{}\"></a>\n\n## {}\n", s.name, s.name);
        for (label, text) in &s.notes {
            let _ = writeln!(out, "**{label}.** {text}\n");
        }
        for t in &s.tables {
            out += &md_table(&t.table, Some(&t.verdicts));
        }
        for f in &s.figures {
            let _ = writeln!(out, "![{}]({})\n", f.title(), f.file());
        }
    }
    out
}

const COMPARE_STYLE: &str = "
tr.slower td.verdict { color: #b35806; font-weight: bold; }
tr.faster td.verdict { color: #1f5fa8; font-weight: bold; }
tr.slower, tr.faster { background: #fffbe6; }
";

fn html_table(t: &Table, verdicts: Option<&[Option<Verdict>]>) -> String {
    let mut out = String::new();
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "<p class=\"caption\">{}</p>", escape(c));
    }
    out += "<table>\n<tr>";
    for h in &t.header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out += "</tr>\n";
    for (i, row) in t.rows.iter().enumerate() {
        let class = match verdicts.and_then(|c| c[i]) {
            Some(Verdict::Slower) => " class=\"slower\"",
            Some(Verdict::Faster) => " class=\"faster\"",
            _ => "",
        };
        let _ = write!(out, "<tr{class}>");
        for (j, c) in row.iter().enumerate() {
            let last = verdicts.is_some() && j + 1 == row.len();
            let td = if last {
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

/// The comparison as one HTML page.
pub fn html(c: &Comparison) -> String {
    let mut body = format!("<h1>{}</h1>\n", escape(&c.title));
    for b in &c.banners {
        let _ = writeln!(
            body,
            "<p class=\"banner\"><strong>Incomplete run.</strong> {}</p>",
            escape(b)
        );
    }
    body += &html_table(&c.header, None);
    let _ = writeln!(
        body,
        "<p class=\"note\"><strong>Verdicts.</strong> {}</p>",
        escape(&c.rule.describe())
    );
    for o in &c.only {
        let _ = writeln!(
            body,
            "<p class=\"note\"><strong>Only in {}:</strong> {}</p>",
            escape(&o.heading),
            escape(&o.names.join(", "))
        );
    }
    if !c.sections.is_empty() {
        body += "<h2>Contents</h2>\n<ul>\n";
        for s in &c.sections {
            let _ = writeln!(
                body,
                "<li><a href=\"#{}\">{}</a> ({})</li>",
                s.name,
                s.name,
                s.summary_line()
            );
        }
        body += "</ul>\n";
    }
    for s in &c.sections {
        let _ = writeln!(body, "<section id=\"{}\">\n<h2>{}</h2>", s.name, s.name);
        for (label, text) in &s.notes {
            let _ = writeln!(
                body,
                "<p class=\"note\"><strong>{}.</strong> {}</p>",
                escape(label),
                escape(text)
            );
        }
        for MarkedTable { table, verdicts } in &s.tables {
            body += &html_table(table, Some(verdicts));
        }
        for f in &s.figures {
            let _ = writeln!(
                body,
                "<figure>{}<figcaption>{} (<a href=\"{}\">{}</a>)</figcaption></figure>",
                inline(&f.svg),
                escape(f.title()),
                f.file(),
                f.file()
            );
        }
        body += "</section>\n";
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{}</title>\n<style>{STYLE}{COMPARE_STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(&c.title)
    )
}
