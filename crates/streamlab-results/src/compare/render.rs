//! A [`Comparison`] written out: `report.md` (GitHub-flavoured Markdown, a change beyond
//! noise in bold), `report.html` (one self-contained page, such a row classed `up` or
//! `down` and coloured, with the same text marker so it reads without colour) and the
//! charts beside them.
use std::fmt::Write;

use super::{Change, ComparedSection, Comparison, MarkedTable, RULE};
use crate::report::html::{STYLE, escape, inline};
use crate::report::markdown::cell;
use crate::report::table::Table;
use crate::saved::files;

/// Every file of the comparison: the charts, then `report.md` and `report.html`.
pub fn files(c: &Comparison) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = (c.sections.iter())
        .flat_map(|s| &s.figures)
        .map(|f| (f.file().to_owned(), f.svg.clone()))
        .collect();
    out.push((files::REPORT_MD.to_owned(), markdown(c)));
    out.push((files::REPORT_HTML.to_owned(), html(c)));
    out
}

fn md_row(cells: &[String]) -> String {
    let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
    format!("| {} |\n", cells.join(" | "))
}

fn md_table(t: &Table, changes: Option<&[Option<Change>]>) -> String {
    let mut out = String::new();
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "*{c}*\n");
    }
    out += &md_row(&t.header);
    let _ = writeln!(out, "|{}", " --- |".repeat(t.header.len()));
    for (i, row) in t.rows.iter().enumerate() {
        let beyond = changes.and_then(|c| c[i]).is_some_and(Change::beyond);
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
    let _ = writeln!(out, "**Beyond noise.** {RULE}\n");
    for (side, names) in &c.only {
        let _ = writeln!(out, "**Only in {side}:** {}\n", names.join(", "));
    }
    if !c.sections.is_empty() {
        out += "## Contents\n\n";
        for s in &c.sections {
            let _ = writeln!(out, "- [{}](#{}) ({})", s.name, s.name, summary_line(s));
        }
        out += "\n";
    }
    for s in &c.sections {
        let _ = writeln!(out, "<a id=\"{}\"></a>\n\n## {}\n", s.name, s.name);
        for (label, text) in &s.notes {
            let _ = writeln!(out, "**{label}.** {text}\n");
        }
        for t in &s.tables {
            out += &md_table(&t.table, Some(&t.changes));
        }
        for f in &s.figures {
            let _ = writeln!(out, "![{}]({})\n", f.title(), f.file());
        }
    }
    out
}

/// "3 of 16 rows beyond noise".
fn summary_line(s: &ComparedSection) -> String {
    let changes = s.tables.iter().flat_map(|t| t.changes.iter().flatten());
    let (rows, beyond) = changes.fold((0, 0), |(n, b), c| (n + 1, b + usize::from(c.beyond())));
    format!("{beyond} of {rows} rows beyond noise")
}

const COMPARE_STYLE: &str = "
tr.up td.change { color: #b35806; font-weight: bold; }
tr.down td.change { color: #1f5fa8; font-weight: bold; }
tr.up, tr.down { background: #fffbe6; }
";

fn html_table(t: &Table, changes: Option<&[Option<Change>]>) -> String {
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
        let class = match changes.and_then(|c| c[i]) {
            Some(Change::Up) => " class=\"up\"",
            Some(Change::Down) => " class=\"down\"",
            _ => "",
        };
        let _ = write!(out, "<tr{class}>");
        for (j, c) in row.iter().enumerate() {
            let last = changes.is_some() && j + 1 == row.len();
            let td = if last {
                "<td class=\"change\">"
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
        "<p class=\"note\"><strong>Beyond noise.</strong> {}</p>",
        escape(RULE)
    );
    for (side, names) in &c.only {
        let _ = writeln!(
            body,
            "<p class=\"note\"><strong>Only in {}:</strong> {}</p>",
            escape(side),
            escape(&names.join(", "))
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
                summary_line(s)
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
        for MarkedTable { table, changes } in &s.tables {
            body += &html_table(table, Some(changes));
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
