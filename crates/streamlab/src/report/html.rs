//! `report.html`: one self-contained page (inline CSS, inline SVG, no scripts, nothing
//! fetched) with the same content as `report.md`.
use std::fmt::Write;

use super::document::{Document, Figure, Section, TIMELINE_NOTE, Table};
use super::svg::escape;

const STYLE: &str = "
body { font-family: Helvetica, Arial, sans-serif; color: #222; max-width: 1100px;
       margin: 2em auto; padding: 0 1em; line-height: 1.45; }
h1 { border-bottom: 2px solid #4e79a7; padding-bottom: .2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 1em 0; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th { background: #f0f3f7; }
td:first-child, th:first-child, td.text { text-align: left; }
td:first-child { white-space: nowrap; }
.scroll, .plain { max-width: 100%; overflow-x: auto; display: inline-block; }
.scroll { max-height: 420px; overflow-y: auto; }
.caption { font-weight: bold; margin: 1em 0 0; }
figure { margin: 1.2em 0; }
figure svg { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 13px; color: #555; }
.bound { background: #f6f8fa; border-left: 4px solid #222; padding: .5em .8em; }
.passed { color: #2e7d32; font-weight: bold; }
.failed { color: #c62828; font-weight: bold; }
.params { font-size: 13px; color: #555; }
";

/// Tables longer than this scroll inside a box.
const SCROLL_ROWS: usize = 20;

/// The whole report as one HTML page.
pub fn render(doc: &Document) -> String {
    let mut body = String::from("<h1>streamlab report</h1>\n");
    body += "<p>Rendered from the saved JSON results in this folder.</p>\n";
    body += "<h2>Device</h2>\n";
    body += &pairs(&doc.device);
    body += "<h2>Provenance</h2>\n";
    body += &pairs(&doc.provenance);
    if let Some(limits) = &doc.limits {
        body += "<h2 id=\"limits\">Measured physical limits</h2>\n";
        let _ = writeln!(body, "<p>{}</p>", escape(&limits.note));
        body += &table(&limits.table);
    }
    for s in &doc.sections {
        body += &section(s);
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>streamlab report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n"
    )
}

fn pairs(pairs: &[(String, String)]) -> String {
    let mut out = String::from("<table>\n");
    for (k, v) in pairs {
        let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", escape(k), escape(v));
    }
    out + "</table>\n"
}

/// Whether a cell reads as a number with at most a unit or a range (right-aligned) rather
/// than words (left-aligned).
fn numeric(cell: &str) -> bool {
    let leads = cell
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit() || c == '–' || c == '-');
    leads && cell.split_whitespace().count() <= 4
}

fn table(t: &Table) -> String {
    let row = |tag: &str, cells: &[String]| {
        let cells: Vec<String> = cells
            .iter()
            .map(|c| {
                let class = if tag == "td" && !numeric(c) {
                    " class=\"text\""
                } else {
                    ""
                };
                format!("<{tag}{class}>{}</{tag}>", escape(c))
            })
            .collect();
        format!("<tr>{}</tr>\n", cells.concat())
    };
    let class = if t.rows.len() > SCROLL_ROWS {
        "scroll"
    } else {
        "plain"
    };
    let mut out = t.caption.as_ref().map_or(String::new(), |c| {
        format!("<p class=\"caption\">{}</p>\n", escape(c))
    });
    let _ = writeln!(out, "<div class=\"{class}\"><table>");
    out += &row("th", &t.header);
    for r in &t.rows {
        out += &row("td", r);
    }
    out + "</table></div>\n"
}

fn figure(f: &Figure) -> String {
    format!(
        "<figure>\n{}<figcaption>{} (<a href=\"{file}\">{file}</a>)</figcaption>\n</figure>\n",
        f.svg,
        escape(&f.title),
        file = escape(&f.file),
    )
}

fn section(s: &Section) -> String {
    let (class, verdict) = if s.passed {
        ("passed", "verified")
    } else {
        ("failed", "verification FAILED")
    };
    let mut out = format!("<h2 id=\"{}\">{}</h2>\n", escape(s.id), escape(&s.title));
    if !s.parameters.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"params\">Parameters: {}</p>",
            escape(&s.parameters)
        );
    }
    for (label, text) in &s.notes {
        let _ = writeln!(
            out,
            "<p class=\"bound\"><strong>{}.</strong> {}</p>",
            escape(label),
            escape(text)
        );
    }
    let _ = writeln!(
        out,
        "<p><span class=\"{class}\">{verdict}</span> {}</p>",
        escape(&s.verification)
    );
    out.extend(s.charts.iter().map(figure));
    out.extend(s.tables.iter().map(table));
    if !s.timelines.is_empty() {
        let _ = writeln!(out, "<h3>Timelines</h3>\n<p>{}</p>", escape(TIMELINE_NOTE));
    }
    for t in &s.timelines {
        out += &figure(&t.figure);
        let _ = writeln!(
            out,
            "<p>Trace for chrome://tracing or ui.perfetto.dev: <a href=\"{0}\">{0}</a></p>",
            escape(&t.trace_file)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_align_right_and_words_left() {
        for cell in [
            "2.440",
            "1.00×",
            "–",
            "2.429 – 2.459 ms",
            "55.0 GB/s in total",
        ] {
            assert!(numeric(cell), "{cell}");
        }
        for cell in [
            "sequential",
            "passed (1536 elements)",
            "1 stream 116.700 ms, 16 streams",
        ] {
            assert!(!numeric(cell), "{cell}");
        }
    }
}
