//! `report.html`: one self-contained page (inline CSS and SVG, no scripts, nothing
//! fetched) with the same content as `report.md`.
use std::fmt::Write;

use super::document::Document;
use super::glossary::{Linker, TERMS};
use super::section::{Section, TIMELINE_NOTE, TimelineFigure, shared_source, trace_note};
use super::table::Table;
use crate::derived::trace::Outcome;

pub(crate) const STYLE: &str = "
body { font-family: Helvetica, Arial, sans-serif; color: #222; max-width: 1100px;
       margin: 2em auto; padding: 0 1em; line-height: 1.45; }
h1 { border-bottom: 2px solid #4e79a7; padding-bottom: .2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: .4em 0 1em; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; }
th { background: #f0f3f7; }
.scroll { max-width: 100%; max-height: 440px; overflow: auto; display: inline-block; }
.caption { font-style: italic; margin: 1em 0 0; }
figure { margin: 1.2em 0; }
figure svg { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 13px; color: #555; }
.banner { background: #fff3e0; border-left: 4px solid #e65100; padding: .6em .9em; }
.note { background: #f6f8fa; border-left: 4px solid #222; padding: .4em .8em; }
.passed { color: #2e7d32; font-weight: bold; }
.failed { color: #c62828; font-weight: bold; }
.params { font-size: 13px; color: #555; }
";

/// Tables longer than this scroll inside a box.
const SCROLL_ROWS: usize = 20;

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
    if !doc.header.is_empty() {
        body += "<table class=\"header\">\n";
        for (k, v) in &doc.header {
            let _ = writeln!(
                body,
                "<tr><th>{}</th><td>{}</td></tr>",
                escape(k),
                escape(v)
            );
        }
        body += "</table>\n";
    }
    if let Some(h) = &doc.headlines {
        body += "<h2 id=\"headlines\">Headlines</h2>\n";
        body += &table(h);
    }
    if !doc.sections.is_empty() {
        body += "<p>New to these terms? The <a href=\"#glossary\">glossary</a> at the end \
            explains each, and the report links it where a term is first used.</p>\n";
        body += "<h2>Contents</h2>\n<ul>\n";
        for s in &doc.sections {
            let _ = writeln!(
                body,
                "<li><a href=\"#{}\">{}</a></li>",
                s.id,
                escape(&s.title)
            );
        }
        if doc.has_timelines() {
            body += "<li><a href=\"#reading-the-timelines\">Reading the timelines</a></li>\n";
        }
        body += "<li><a href=\"#glossary\">Glossary</a></li>\n</ul>\n";
    }
    let mut linker = Linker::default();
    for s in &doc.sections {
        body += &section(s, &mut linker);
    }
    if doc.has_timelines() {
        let _ = writeln!(
            body,
            "<section id=\"reading-the-timelines\">\n<h2>Reading the timelines</h2>\n<p>{}</p>\n<p>{}</p>\n</section>",
            prose(&mut linker, TIMELINE_NOTE),
            prose(&mut linker, &trace_note())
        );
    }
    if !doc.sections.is_empty() {
        body += &glossary();
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>streamlab report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n"
    )
}

fn table(t: &Table) -> String {
    let mut out = String::new();
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "<p class=\"caption\">{}</p>", escape(c));
    }
    let scroll = t.rows.len() > SCROLL_ROWS;
    if scroll {
        out += "<div class=\"scroll\">";
    }
    out += "<table>\n<tr>";
    for h in &t.header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out += "</tr>\n";
    for row in &t.rows {
        out += "<tr>";
        for c in row {
            let _ = write!(out, "<td>{}</td>", escape(c));
        }
        out += "</tr>\n";
    }
    out += "</table>";
    if scroll {
        out += "</div>";
    }
    out + "\n"
}

/// An SVG document as an inline element: everything before `<svg` dropped.
pub(crate) fn inline(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |i| &svg[i..])
}

/// `text` escaped, each term linked to the glossary where the report first uses it.
fn prose(linker: &mut Linker, text: &str) -> String {
    linker.link(text, escape, |term, anchor| {
        format!("<a href=\"#{anchor}\">{}</a>", escape(term))
    })
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
            escape(t.meaning)
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
            "<p class=\"verdict\"><strong>Verdict.</strong> {}</p>",
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
        let _ = writeln!(out, "<li>{}</li>", escape(&note));
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
            escape(&c.detail)
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
