//! `report.html`: one self-contained page (inline CSS and SVG, no scripts, nothing
//! fetched) with the same content as `report.md`.
use std::fmt::Write;

use super::document::Document;
use super::document::{FINDINGS_KEY, Findings, Printer};
use super::fit::UNDER;
use super::glossary::{Linker, TERMS};
use super::section::{Section, TIMELINE_NOTE, TimelineFigure, shared_source, trace_note};
use super::table::Table;
use crate::derived::trace::Outcome;

pub(crate) const STYLE: &str = "
body { font-family: Helvetica, Arial, sans-serif; color: #222; max-width: 1240px;
       margin: 2em auto; padding: 0 1em; line-height: 1.45; }
h1 { border-bottom: 2px solid #4e79a7; padding-bottom: .2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: .4em 0 1em; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; }
th { background: #f0f3f7; position: sticky; top: 0; }
td { vertical-align: top; }
.noise { color: #666; font-size: 12px; white-space: nowrap; }
.part { font-size: 13px; color: #555; margin: .6em 0 0; }
.key { font-size: 13px; margin: .2em 0; }
details { margin: .2em 0 1em; }
summary { cursor: pointer; color: #4e79a7; }
.caption { font-style: italic; margin: 1em 0 0; }
figure { margin: 1.2em 0; }
figure svg { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 13px; color: #555; }
.lede { font-size: 15px; color: #444; margin-top: -.4em; }
.findings li { margin: .25em 0; }
.provenance { font-size: 13px; }
.banner { background: #fff3e0; border-left: 4px solid #e65100; padding: .6em .9em; }
.note { background: #f6f8fa; border-left: 4px solid #222; padding: .4em .8em; }
.passed { color: #2e7d32; font-weight: bold; }
.failed { color: #c62828; font-weight: bold; }
.params { font-size: 13px; color: #555; }
code { font-size: 90%; background: #f3f3f3; padding: 0 .2em; }
";

/// Text with `&`, `<`, `>` and `"` escaped.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The whole report as one HTML page.
pub fn render(doc: &Document) -> String {
    let mut body = String::from("<h1>streamlab report</h1>\n");
    if let Some(banner) = &doc.banner {
        let _ = writeln!(
            body,
            "<p class=\"banner\" id=\"incomplete\"><strong>Incomplete run.</strong> {}</p>",
            escape(banner)
        );
    }
    if !doc.missing.is_empty() {
        let _ = writeln!(
            body,
            "<p class=\"banner\" id=\"missing\"><strong>Not in this folder.</strong> {}</p>",
            escape(&super::markdown::missing_note(&doc.missing))
        );
    }
    if let Some(lede) = &doc.lede {
        let _ = writeln!(body, "<p class=\"lede\">{}</p>", escape(lede));
    }
    if let Some(f) = &doc.findings {
        body += &findings(f, &doc.sections);
    }
    if !doc.header.is_empty() {
        body += "<details class=\"provenance\"><summary>Where and how it ran: the GPU, the compilers, the driver, the command line</summary>\n<table class=\"header\">\n";
        for (k, v) in &doc.header {
            let _ = writeln!(
                body,
                "<tr><th>{}</th><td>{}</td></tr>",
                escape(k),
                escape(v)
            );
        }
        body += "</table>\n</details>\n";
    }
    body += &doc.body(&PRINTER);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>streamlab report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n"
    )
}

/// What the run found: how many results passed their checks, each experiment's finding
/// (linked to its section), and the table of numbers with what its columns mean.
fn findings(f: &Findings, sections: &[Section]) -> String {
    let checked = if f.verified == f.results {
        format!(
            "<span class=\"passed\">All {} results verified</span>: every output check passed (each experiment's check is in its section).",
            f.results
        )
    } else {
        format!(
            "<span class=\"failed\">{} of {} results FAILED verification</span>: their numbers are not to be trusted.",
            f.results - f.verified,
            f.results
        )
    };
    let mut out = format!("<h2 id=\"findings\">What this run found</h2>\n<p>{checked}</p>\n");
    for (stem, why) in &f.held_back {
        let _ = writeln!(
            out,
            "<p class=\"banner\"><strong>GPU held back</strong> during {}: {}.</p>",
            escape(stem),
            escape(why)
        );
    }
    if let Some(line) = f.clocks_unknown_line() {
        let _ = writeln!(out, "<p>{}.</p>", escape(&line));
    }
    out += "<ul class=\"findings\">\n";
    for (name, finding) in &f.words {
        let name = escape(name);
        let _ = match sections.iter().any(|s| s.id == name) {
            true => writeln!(
                out,
                "<li><a href=\"#{name}\"><strong>{name}</strong></a>: {}</li>",
                self::words(finding)
            ),
            false => writeln!(
                out,
                "<li><strong>{name}</strong>: {}</li>",
                self::words(finding)
            ),
        };
    }
    out += "</ul>\n";
    out += &table(&f.table);
    let _ = writeln!(out, "<p class=\"params\">{}</p>", escape(FINDINGS_KEY));
    out
}

/// A table as it shows on the page: noise under its value, split into parts that fit
/// the page; a long one gives the rows that carry its finding, then itself whole,
/// folded.
fn table(t: &Table) -> String {
    let mut out = String::new();
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "<p class=\"caption\">{}</p>", escape(c));
    }
    let shown = t.on_page();
    match &shown.key {
        Some((lead, key)) => {
            let _ = writeln!(out, "<p class=\"key\">{}</p>", escape(lead));
            out += &parts(key);
            let _ = writeln!(
                out,
                "<details><summary>{}</summary>\n{}</details>",
                escape(&shown.every),
                parts(&shown.all)
            );
        }
        None => out += &parts(&shown.all),
    }
    out
}

/// Each of `parts` as a table.
fn parts(parts: &[Table]) -> String {
    let mut out = String::new();
    for part in parts {
        if let Some(c) = &part.caption {
            let _ = writeln!(out, "<p class=\"part\">{}</p>", escape(c));
        }
        out += &rows(part, |_| "", |c| format!("<td>{}</td>", cell(c)));
    }
    out
}

/// `t`'s header and rows as an HTML table: row `i`'s `<tr>` with the attributes
/// `attributes(i)`, each value as `td` gives it (escaped, in its `<td>`).
pub fn rows(
    t: &Table,
    attributes: impl Fn(usize) -> &'static str,
    td: impl Fn(&str) -> String,
) -> String {
    let mut out = "<table>\n<thead><tr>".to_owned();
    for h in &t.header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out += "</tr></thead>\n<tbody>\n";
    for (i, row) in t.rows.iter().enumerate() {
        let _ = write!(out, "<tr{}>", attributes(i));
        for c in row {
            out += &td(c);
        }
        out += "</tr>\n";
    }
    out + "</tbody></table>\n"
}

/// A cell: its value, and its noise under it where it has one.
fn cell(c: &str) -> String {
    match c.split_once(UNDER) {
        Some((value, noise)) => format!(
            "{}<br><span class=\"noise\">{}</span>",
            escape(value),
            escape(noise)
        ),
        None => escape(c),
    }
}

/// An SVG document as an inline element: everything before `<svg` dropped.
pub(crate) fn inline(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |i| &svg[i..])
}

/// `text` escaped, each term linked to the glossary where the report first uses it.
fn prose(linker: &mut Linker, text: &str) -> String {
    linker.link(text, words, |term, anchor| {
        format!("<a href=\"#{anchor}\">{}</a>", escape(term))
    })
}

/// Text escaped, each span between backticks (a name in code) set as code.
pub fn words(text: &str) -> String {
    (text.split('`').enumerate())
        .map(|(i, part)| match i % 2 {
            0 => escape(part),
            _ => format!("<code>{}</code>", escape(part)),
        })
        .collect()
}

/// The report's body as HTML ([`Document::body`]).
const PRINTER: Printer = Printer {
    contents,
    section,
    reading_timelines,
    glossary,
};

/// The line pointing to the glossary, and the contents.
fn contents(entries: &[(&str, &str)]) -> String {
    let mut out = String::from(
        "<p>New to these terms? The <a href=\"#glossary\">glossary</a> at the end \
         explains each, and the report links it where a term is first used.</p>\n\
         <h2>Contents</h2>\n<ul>\n",
    );
    for (title, id) in entries {
        let _ = writeln!(out, "<li><a href=\"#{id}\">{}</a></li>", escape(title));
    }
    out + "</ul>\n"
}

/// How to read the timelines.
fn reading_timelines(linker: &mut Linker) -> String {
    format!(
        "<section id=\"reading-the-timelines\">\n<h2>Reading the timelines</h2>\n<p>{}</p>\n<p>{}</p>\n</section>\n",
        prose(linker, TIMELINE_NOTE),
        prose(linker, &trace_note())
    )
}

/// The glossary, every term with its anchor.
fn glossary() -> String {
    let mut out = String::from("<section id=\"glossary\">\n<h2>Glossary</h2>\n<dl>\n");
    for t in TERMS {
        let _ = writeln!(
            out,
            "<dt id=\"{}\">{}</dt><dd>{}</dd>",
            t.anchor,
            escape(t.spelling),
            words(t.meaning)
        );
    }
    out + "</dl>\n</section>\n"
}

fn section(s: &Section, linker: &mut Linker) -> String {
    let mut out = format!(
        "<section id=\"{}\">\n<h2>{}</h2>\n<p>{}</p>\n",
        s.id,
        escape(&s.title),
        prose(linker, &s.about)
    );
    if let Some(v) = &s.verdict {
        let _ = writeln!(
            out,
            "<p class=\"verdict\"><strong>Finding.</strong> {}</p>",
            prose(linker, v)
        );
    }
    if !s.complete {
        out += "<p class=\"banner\"><strong>Incomplete:</strong> the run stopped before every configuration of this experiment was measured.</p>\n";
    }
    let _ = writeln!(
        out,
        "<p class=\"params\">Parameters: {}</p>",
        escape(&s.parameters)
    );
    for (label, text) in &s.notes {
        let _ = writeln!(
            out,
            "<p class=\"note\"><strong>{}.</strong> {}</p>",
            escape(label),
            prose(linker, text)
        );
    }
    let (passed, detail) = &s.verification;
    let _ = writeln!(
        out,
        "<p>Verification: <span class=\"{}\">{}</span> {}</p>",
        if *passed { "passed" } else { "failed" },
        if *passed { "passed" } else { "FAILED" },
        escape(detail)
    );
    for t in &s.tables {
        out += &table(t);
    }
    for f in &s.figures {
        let _ = writeln!(
            out,
            "<figure>{}<figcaption>{} (<a href=\"{}\">{}</a>)</figcaption></figure>",
            inline(&f.svg),
            escape(f.title()),
            f.file(),
            f.file()
        );
    }
    if !s.timelines.is_empty() {
        let shared = shared_source(&s.timelines);
        out += "<h3>Timelines</h3>\n<p>How to read them and what their checks mean: \
            <a href=\"#reading-the-timelines\">reading the timelines</a>.</p>\n";
        if let Some(source) = shared {
            let _ = writeln!(out, "<p>Times from {}.</p>", escape(source));
        }
        for t in &s.timelines {
            out += &timeline(t, shared.is_none());
        }
    }
    out + "</section>\n"
}

/// One timeline, saying where its times come from when the section did not.
fn timeline(t: &TimelineFigure, source: bool) -> String {
    let source = match source {
        true => format!("Times from {}. ", escape(t.checks.source.description())),
        false => String::new(),
    };
    let mut out = format!(
        "<h4>{}</h4>\n<figure class=\"timeline\">{}<figcaption>{source}<a href=\"{}\">Chrome trace</a> (chrome://tracing or ui.perfetto.dev)</figcaption></figure>\n<ul>\n",
        escape(&t.title),
        inline(&t.svg),
        t.trace_file
    );
    for note in t.notes() {
        let _ = writeln!(out, "<li>{}</li>", words(&note));
    }
    for c in &t.checks.checks {
        let (class, mark) = match c.outcome {
            Outcome::Passed => ("passed", "passed"),
            Outcome::Failed => ("failed", "FAILED"),
            Outcome::NotApplicable => ("params", "not applicable"),
        };
        let _ = writeln!(
            out,
            "<li>{} (<span class=\"{class}\">{mark}</span>): {}</li>",
            escape(&c.name),
            words(&c.detail)
        );
    }
    for r in &t.retraced {
        let _ = writeln!(
            out,
            "<li>an earlier trace of this schedule was dropped: {}</li>",
            escape(r)
        );
    }
    out + "</ul>\n"
}
