//! A page ([`Block`]s) as one self-contained HTML page: inline CSS and SVG, no scripts,
//! nothing fetched.
use std::fmt::Write;

use super::fit::UNDER;
use super::glossary::{Linker, TERMS, linked};
use super::page::{Block, Lead, Link, Style};
use super::section::TimelineFigure;
use super::table::Table;
use crate::derived::trace::Outcome;
use crate::verdict::Verdict;

/// The style of every page: the report's and the comparison's.
const STYLE: &str = include_str!("report.css");

/// Text with `&`, `<`, `>` and `"` escaped.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `blocks` as one HTML page titled as its first title, `style` added to the page's.
pub fn page(style: &str, blocks: &[Block]) -> String {
    let title = (blocks.iter())
        .find_map(|b| match b {
            Block::Title(t) => Some(t.as_str()),
            _ => None,
        })
        .unwrap_or_default();
    let mut linker = Block::glossary_page(blocks).map(Linker::to);
    let mut body = String::new();
    print(blocks, &mut linker, &mut body);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{}</title>\n<style>\n{STYLE}{style}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

fn print(blocks: &[Block], linker: &mut Option<Linker>, out: &mut String) {
    for b in blocks {
        match b {
            Block::Title(t) => {
                let _ = writeln!(out, "<h1>{}</h1>", escape(t));
            }
            Block::Heading(level, text, anchor) => {
                let id =
                    (anchor.as_ref()).map_or(String::new(), |a| format!(" id=\"{}\"", escape(a)));
                let _ = writeln!(out, "<h{level}{id}>{}</h{level}>", escape(text));
            }
            Block::Part(id, inner) => {
                let _ = writeln!(out, "<section id=\"{}\">", escape(id));
                print(inner, linker, out);
                out.push_str("</section>\n");
            }
            Block::Prose(style, text) => {
                let _ = match style {
                    Style::Plain => writeln!(out, "<p>{}</p>", prose(linker, text)),
                    Style::Lede => writeln!(out, "<p class=\"lede\">{}</p>", words(text)),
                    Style::Small => writeln!(out, "<p class=\"params\">{}</p>", words(text)),
                };
            }
            Block::Pointer([before, after], text, link) => {
                let (before, text, after) = (escape(before), escape(text), escape(after));
                let href = href(link);
                let _ = writeln!(out, "<p>{before}<a href=\"{href}\">{text}</a>{after}</p>");
            }
            Block::Note(label, text) => {
                let (label, text) = (escape(label), prose(linker, text));
                let _ = writeln!(
                    out,
                    "<p class=\"note\"><strong>{label}.</strong> {text}</p>"
                );
            }
            Block::Banner(lead, text) => {
                let (lead, text) = (escape(lead), words(text));
                let _ = writeln!(
                    out,
                    "<p class=\"banner\"><strong>{lead}</strong> {text}</p>"
                );
            }
            Block::Check(passed, lead, text) => {
                let class = if *passed { "passed" } else { "failed" };
                let (lead, text) = (escape(lead), words(text));
                let _ = writeln!(out, "<p><span class=\"{class}\">{lead}</span> {text}</p>");
            }
            Block::Table(t) => *out += &table(t),
            Block::Facts(facts) => {
                out.push_str("<table class=\"provenance\">\n");
                for (k, v) in facts {
                    let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", escape(k), escape(v));
                }
                out.push_str("</table>\n");
            }
            Block::Judged(t, verdicts) => *out += &judged(t, verdicts),
            Block::Figure(f) => {
                let (svg, title, file) = (inline(&f.svg), escape(f.title()), escape(f.file()));
                let caption = format!("{title} (<a href=\"{file}\">{file}</a>)");
                let _ = writeln!(
                    out,
                    "<figure>{svg}<figcaption>{caption}</figcaption></figure>"
                );
            }
            Block::Timeline(t, source) => *out += &timeline(t, *source),
            Block::Folded(summary, inner) => {
                let _ = writeln!(out, "<details><summary>{}</summary>", escape(summary));
                print(inner, linker, out);
                out.push_str("</details>\n");
            }
            Block::List(items) => {
                out.push_str("<ul>\n");
                for (lead, text) in items {
                    let _ = writeln!(out, "<li>{}</li>", item(lead.as_ref(), text));
                }
                out.push_str("</ul>\n");
            }
            Block::Glossary => *out += &glossary(),
            Block::GlossaryOn(_) => {}
        }
    }
}

/// `text` escaped, each term linked to the glossary where the page first uses it.
fn prose(linker: &mut Option<Linker>, text: &str) -> String {
    linked(linker, text, words, |term, link| {
        format!("<a href=\"{}\">{}</a>", href(link), escape(term))
    })
}

/// The extension of an HTML page: its file's, and its links' to other pages.
pub const EXTENSION: &str = ".html";

/// Where `link` goes, escaped for an attribute.
fn href(link: &Link) -> String {
    escape(&link.href(EXTENSION))
}

/// A list item: its lead (bold, linked), a colon, its text.
fn item(lead: Option<&Lead>, text: &str) -> String {
    let Some(lead) = lead else {
        return words(text);
    };
    let shown = match lead.bold {
        true => format!("<strong>{}</strong>", escape(&lead.text)),
        false => escape(&lead.text),
    };
    let shown = match &lead.link {
        Some(link) => format!("<a href=\"{}\">{shown}</a>", href(link)),
        None => shown,
    };
    match text.is_empty() {
        true => shown,
        false => format!("{shown}: {}", words(text)),
    }
}

/// The glossary, every term with its anchor.
fn glossary() -> String {
    let mut out = String::from("<dl>\n");
    for t in TERMS.iter() {
        let (anchor, term, meaning) = (&t.anchor, escape(t.spelling), words(t.meaning));
        let _ = writeln!(out, "<dt id=\"{anchor}\">{term}</dt><dd>{meaning}</dd>");
    }
    out + "</dl>\n"
}

/// A table as on the page ([`Table::on_page`]).
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
            let (every, all) = (escape(&shown.every), parts(&shown.all));
            let _ = writeln!(out, "<details><summary>{every}</summary>\n{all}</details>");
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

/// A table whole, a row called changed classed `faster` or `slower` and its verdict
/// cells classed `verdict`.
fn judged(t: &Table, verdicts: &[Option<Verdict>]) -> String {
    let mut out = String::new();
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "<p class=\"caption\">{}</p>", escape(c));
    }
    let class = |i: usize| match verdicts.get(i).copied().flatten() {
        Some(Verdict::Slower) => " class=\"slower\"",
        Some(Verdict::Faster) => " class=\"faster\"",
        _ => "",
    };
    let td = |c: &str| {
        let class = if c.contains(['▲', '▼']) {
            " class=\"verdict\""
        } else {
            ""
        };
        format!("<td{class}>{}</td>", escape(c))
    };
    out + &rows(t, class, td)
}

/// `t` as an HTML table: row `i`'s `<tr>` with `attributes(i)`, each value as `td` gives it.
fn rows(
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
fn inline(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |i| &svg[i..])
}

/// Text escaped, each span between backticks (a name in code) set as code.
fn words(text: &str) -> String {
    (text.split('`').enumerate())
        .map(|(i, part)| match i % 2 {
            0 => escape(part),
            _ => format!("<code>{}</code>", escape(part)),
        })
        .collect()
}

/// One timeline, saying where its times come from when its part did not.
fn timeline(t: &TimelineFigure, source: bool) -> String {
    let source = match source {
        true => format!("Times from {}. ", escape(t.checks.source.description())),
        false => String::new(),
    };
    let mut out = format!(
        "<h4>{}</h4>\n<figure class=\"timeline\">{}<figcaption>{source}<a href=\"{}\">Chrome trace</a> (chrome://tracing or ui.perfetto.dev)</figcaption></figure>\n<ul>\n",
        escape(&t.title),
        inline(&t.svg),
        escape(&t.trace_file)
    );
    for note in t.notes() {
        let _ = writeln!(out, "<li>{}</li>", words(&note));
    }
    for c in &t.checks.checks {
        let class = match c.outcome {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::NotApplicable => "params",
        };
        let (name, mark, detail) = (escape(&c.name), c.outcome.mark(), words(&c.detail));
        let mark = format!("<span class=\"{class}\">{mark}</span>");
        let _ = writeln!(out, "<li>{name} ({mark}): {detail}</li>");
    }
    for r in &t.retraced {
        let dropped = escape(r);
        let _ = writeln!(
            out,
            "<li>an earlier trace of this schedule was dropped: {dropped}</li>"
        );
    }
    out + "</ul>\n"
}
