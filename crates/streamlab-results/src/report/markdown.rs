//! `report.md`: the [`Document`] as GitHub-flavoured Markdown, with the charts and
//! timelines as images beside it and links to the Chrome traces.
use std::fmt::Write;

use super::document::FINDINGS_KEY;
use super::document::{Document, Printer};
use super::fit::UNDER;
use super::glossary::{Linker, TERMS};
use super::section::{Section, TIMELINE_NOTE, TimelineFigure, shared_source, trace_note};
use super::table::Table;
use crate::derived::trace::Outcome;

/// The whole report as Markdown.
pub fn render(doc: &Document) -> String {
    let mut out = String::from("# streamlab report\n\n");
    if let Some(banner) = &doc.banner {
        let _ = writeln!(out, "> **Incomplete run.** {banner}\n");
    }
    if !doc.missing.is_empty() {
        let _ = writeln!(
            out,
            "> **Not in this folder.** {}\n",
            missing_note(&doc.missing)
        );
    }
    if let Some(lede) = &doc.lede {
        let _ = writeln!(out, "{lede}\n");
    }
    if let Some(f) = &doc.findings {
        out += "## What this run found\n\n";
        if f.verified == f.results {
            let _ = writeln!(
                out,
                "**All {} results verified**: every output check passed (each experiment's check is in its section).\n",
                f.results
            );
        } else {
            let _ = writeln!(
                out,
                "**{} of {} results FAILED verification**: their numbers are not to be trusted.\n",
                f.results - f.verified,
                f.results
            );
        }
        for (stem, why) in &f.held_back {
            let _ = writeln!(out, "> **GPU held back** during {stem}: {why}.\n");
        }
        if let Some(line) = f.clocks_unknown_line() {
            let _ = writeln!(out, "{line}.\n");
        }
        for (name, words) in &f.words {
            let _ = writeln!(out, "- **{name}**: {words}");
        }
        out += "\n";
        out += &table(&f.table);
        let _ = writeln!(out, "{FINDINGS_KEY}\n");
    }
    if !doc.header.is_empty() {
        out += "<details><summary>Where and how it ran: the GPU, the compilers, the driver, the command line</summary>\n\n| | |\n| --- | --- |\n";
        for (k, v) in &doc.header {
            let _ = writeln!(out, "| {} | {} |", cell(k), cell(v));
        }
        out += "\n</details>\n\n";
    }
    out += &doc.body(&PRINTER);
    out
}

/// `text`, each term linked to the glossary where the report first uses it.
fn prose(linker: &mut Linker, text: &str) -> String {
    linker.link(text, str::to_owned, |term, anchor| {
        format!("[{term}](#{anchor})")
    })
}

/// The report's body as Markdown ([`Document::body`]).
const PRINTER: Printer = Printer {
    contents,
    section,
    reading_timelines,
    glossary,
};

/// The line pointing to the glossary, and the contents.
fn contents(entries: &[(&str, &str)]) -> String {
    let mut out = String::from(
        "New to these terms? The [glossary](#glossary) at the end explains each, and the \
         report links it where a term is first used.\n\n## Contents\n\n",
    );
    for (title, id) in entries {
        let _ = writeln!(out, "- [{title}](#{id})");
    }
    out + "\n"
}

/// How to read the timelines.
fn reading_timelines(linker: &mut Linker) -> String {
    format!(
        "<a id=\"reading-the-timelines\"></a>\n\n## Reading the timelines\n\n{}\n\n{}\n\n",
        prose(linker, TIMELINE_NOTE),
        prose(linker, &trace_note())
    )
}

/// The glossary, every term with its anchor.
fn glossary() -> String {
    let mut out = String::from("<a id=\"glossary\"></a>\n\n## Glossary\n\n");
    for t in TERMS {
        let _ = writeln!(
            out,
            "- <a id=\"{}\"></a>**{}**: {}",
            t.anchor, t.spelling, t.meaning
        );
    }
    out + "\n"
}

/// What the report says of results its run measured but its folder no longer holds.
pub(crate) fn missing_note(missing: &[String]) -> String {
    format!(
        "{}: this run's summary.json has a headline of each, but the folder holds no result file, so its section is not shown.",
        missing.join(", ")
    )
}

/// Text safe inside a table cell.
pub(crate) fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// A table as on the page ([`Table::on_page`]).
fn table(t: &Table) -> String {
    let mut out = String::new();
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "*{c}*\n");
    }
    let shown = t.on_page();
    match &shown.key {
        Some((lead, key)) => {
            let _ = writeln!(out, "{lead}\n");
            out += &parts(key);
            let _ = writeln!(
                out,
                "<details><summary>{}</summary>\n\n{}</details>\n",
                shown.every,
                parts(&shown.all)
            );
        }
        None => out += &parts(&shown.all),
    }
    out
}

/// Each of `parts` as a table, noise under its value.
fn parts(parts: &[Table]) -> String {
    let mut out = String::new();
    let cells = |row: &[String]| {
        (row.iter())
            .map(|c| cell(&c.replace(UNDER, "<br>")))
            .collect::<Vec<_>>()
            .join(" | ")
    };
    for part in parts {
        if let Some(c) = &part.caption {
            let _ = writeln!(out, "*{c}*\n");
        }
        let _ = writeln!(out, "| {} |", cells(&part.header));
        let _ = writeln!(out, "|{}", " --- |".repeat(part.header.len()));
        for row in &part.rows {
            let _ = writeln!(out, "| {} |", cells(row));
        }
        out += "\n";
    }
    out
}

fn section(s: &Section, linker: &mut Linker) -> String {
    let mut out = format!(
        "<a id=\"{}\"></a>\n\n## {}\n\n{}\n\n",
        s.id,
        s.title,
        prose(linker, &s.about)
    );
    if let Some(v) = &s.verdict {
        let _ = writeln!(out, "**Finding.** {}\n", prose(linker, v));
    }
    if !s.complete {
        out += "> **Incomplete:** the run stopped before every configuration of this experiment was measured.\n\n";
    }
    let _ = writeln!(out, "*Parameters:* {}\n", s.parameters);
    for (label, text) in &s.notes {
        let _ = writeln!(out, "**{label}.** {}\n", prose(linker, text));
    }
    let (passed, detail) = &s.verification;
    let _ = writeln!(
        out,
        "**Verification: {}.** {detail}\n",
        if *passed { "passed" } else { "FAILED" }
    );
    for t in &s.tables {
        out += &table(t);
    }
    for f in &s.figures {
        let _ = writeln!(out, "![{}]({})\n", f.title(), f.file());
    }
    if !s.timelines.is_empty() {
        let shared = shared_source(&s.timelines);
        out += "### Timelines\n\nHow to read them and what their checks mean: \
            [reading the timelines](#reading-the-timelines).\n\n";
        if let Some(source) = shared {
            let _ = writeln!(out, "Times from {source}.\n");
        }
        for t in &s.timelines {
            out += &timeline(t, shared.is_none());
        }
    }
    out
}

/// One timeline, saying where its times come from when the section did not.
fn timeline(t: &TimelineFigure, source: bool) -> String {
    let source = match source {
        true => format!("Times from {}. ", t.checks.source.description()),
        false => String::new(),
    };
    let mut out = format!(
        "#### {}\n\n{source}![{}]({})\n\n[Chrome trace]({}) (chrome://tracing or ui.perfetto.dev)\n\n",
        t.title, t.title, t.file, t.trace_file
    );
    for note in t.notes() {
        let _ = writeln!(out, "- {note}");
    }
    for c in &t.checks.checks {
        let mark = match c.outcome {
            Outcome::Passed => "passed",
            Outcome::Failed => "FAILED",
            Outcome::NotApplicable => "not applicable",
        };
        let _ = writeln!(out, "- {} ({mark}): {}", c.name, c.detail);
    }
    for r in &t.retraced {
        let _ = writeln!(out, "- an earlier trace of this schedule was dropped: {r}");
    }
    out + "\n"
}
