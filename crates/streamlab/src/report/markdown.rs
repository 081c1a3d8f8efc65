//! `report.md`: the report as Markdown, with the charts and timelines referenced by their
//! SVG files' relative paths, so it reads well on GitHub next to the results.
use std::fmt::Write;

use super::document::{Document, Limits, Section, TIMELINE_NOTE, Table};

/// The whole report as Markdown.
pub fn render(doc: &Document) -> String {
    let mut out = String::from("# streamlab report\n\n");
    out += "Rendered from the saved JSON results in this folder.\n\n## Device\n\n";
    out += &pairs(&doc.device);
    out += "\n## Provenance\n\n";
    out += &pairs(&doc.provenance);
    if let Some(limits) = &doc.limits {
        out += &self::limits(limits);
    }
    for section in &doc.sections {
        out += &self::section(section);
    }
    out
}

/// `|` and line breaks would end a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn pairs(pairs: &[(String, String)]) -> String {
    let rows = pairs
        .iter()
        .map(|(k, v)| vec![k.clone(), v.clone()])
        .collect();
    table(&Table {
        caption: None,
        header: vec!["".into(), "".into()],
        rows,
    })
}

fn limits(l: &Limits) -> String {
    format!(
        "\n## Measured physical limits\n\n{}\n\n{}",
        l.note,
        table(&l.table)
    )
}

fn table(t: &Table) -> String {
    let line = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
        format!("| {} |\n", cells.join(" | "))
    };
    let mut out = t
        .caption
        .as_ref()
        .map_or(String::new(), |c| format!("**{}**\n\n", cell(c)));
    out += &line(&t.header);
    out += &line(&vec!["---".to_owned(); t.header.len()]);
    for row in &t.rows {
        out += &line(row);
    }
    out
}

fn section(s: &Section) -> String {
    let mut out = format!("\n## {}\n\n", s.title);
    if !s.parameters.is_empty() {
        let _ = writeln!(out, "Parameters: {}\n", s.parameters);
    }
    for (label, text) in &s.notes {
        let _ = writeln!(out, "**{label}.** {text}\n");
    }
    let _ = writeln!(out, "**Verification.** {}\n", s.verification);
    for f in &s.charts {
        let _ = writeln!(out, "![{}]({})\n", f.title, f.file);
    }
    for (i, t) in s.tables.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out += &table(t);
    }
    if !s.timelines.is_empty() {
        let _ = writeln!(out, "\n### Timelines\n\n{TIMELINE_NOTE}\n");
    }
    for t in &s.timelines {
        let _ = writeln!(
            out,
            "![{}]({})\n\nTrace for chrome://tracing or ui.perfetto.dev: [{}]({})\n",
            t.figure.title, t.figure.file, t.trace_file, t.trace_file
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cannot_break_the_table() {
        let t = Table {
            caption: Some("c".into()),
            header: vec!["a".into(), "b".into()],
            rows: vec![vec!["x|y".into(), "1\n2".into()]],
        };
        assert_eq!(
            table(&t),
            "**c**\n\n| a | b |\n| --- | --- |\n| x\\|y | 1 2 |\n"
        );
    }
}
