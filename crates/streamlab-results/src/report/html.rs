//! A page ([`Block`]s) as one self-contained HTML page: inline CSS and SVG, no scripts,
//! nothing fetched.
use super::fit::UNDER;
use super::glossary::TERMS;
use super::page::{Block, Link};
use super::printer::{self, Format};
use super::section::{Figure, TimelineFigure};
use super::table::Table;
use super::text;
use crate::verdict::Verdict;

/// The style of every page: the report's and the comparison's.
const STYLE: &str = include_str!("report.css");

/// The extension of an HTML page: its file's, and its links' to other pages.
pub const EXTENSION: &str = ".html";

/// `blocks` as one HTML page titled as its first title, `style` added to the page's.
pub fn page(style: &str, blocks: &[Block]) -> String {
    let title = (blocks.iter())
        .find_map(|b| match b {
            Block::Title(t) => Some(t.as_str()),
            _ => None,
        })
        .unwrap_or_default();
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{}</title>\n<style>\n{STYLE}{style}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
        Html::escape(title),
        printer::print::<Html>(blocks)
    )
}

struct Html;

impl Format for Html {
    /// `&`, `<`, `>` and `"` escaped.
    fn escape(text: &str) -> String {
        text::escape(text)
    }

    fn words(text: &str) -> String {
        (text.split('`').enumerate())
            .map(|(i, part)| match i % 2 {
                0 => Html::escape(part),
                _ => format!("<code>{}</code>", Html::escape(part)),
            })
            .collect()
    }

    fn link(shown: &str, link: &Link) -> String {
        let href = Html::escape(&link.href(EXTENSION));
        format!("<a href=\"{href}\">{shown}</a>")
    }

    fn strong(shown: &str) -> String {
        format!("<strong>{shown}</strong>")
    }

    fn outcome(class: &str, shown: &str, _: bool) -> String {
        format!("<span class=\"{class}\">{shown}</span>")
    }

    fn paragraph(class: &str, inner: &str) -> String {
        match class {
            "" => format!("<p>{inner}</p>\n"),
            _ => format!("<p class=\"{class}\">{inner}</p>\n"),
        }
    }

    fn heading(level: u8, text: &str, anchor: Option<&str>) -> String {
        let id = anchor.map_or(String::new(), |a| format!(" id=\"{}\"", Html::escape(a)));
        format!("<h{level}{id}>{}</h{level}>\n", Html::escape(text))
    }

    fn part(id: &str, inner: &str) -> String {
        format!("<section id=\"{}\">\n{inner}</section>\n", Html::escape(id))
    }

    fn folded(summary: &str, inner: &str) -> String {
        let summary = Html::escape(summary);
        format!("<details><summary>{summary}</summary>\n{inner}</details>\n")
    }

    fn list(items: impl Iterator<Item = String>) -> String {
        let items: String = items.map(|i| format!("<li>{i}</li>\n")).collect();
        format!("<ul>\n{items}</ul>\n")
    }

    /// Noise under its value; a row called changed classed `faster` or `slower`, and its
    /// verdict cells classed `verdict`.
    fn grid(t: &Table, verdicts: Option<&[Option<Verdict>]>) -> String {
        let th: String = (t.header.iter())
            .map(|h| format!("<th>{}</th>", Html::escape(h)))
            .collect();
        let mut out = format!("<table>\n<thead><tr>{th}</tr></thead>\n<tbody>\n");
        for (i, row) in t.rows.iter().enumerate() {
            let class = match verdicts.and_then(|v| v.get(i).copied().flatten()) {
                Some(Verdict::Slower) => " class=\"slower\"",
                Some(Verdict::Faster) => " class=\"faster\"",
                _ => "",
            };
            out += &format!("<tr{class}>");
            for c in row {
                let class = match verdicts.is_some() && c.contains(['▲', '▼']) {
                    true => " class=\"verdict\"",
                    false => "",
                };
                out += &format!("<td{class}>{}</td>", cell(c));
            }
            out += "</tr>\n";
        }
        out + "</tbody></table>\n"
    }

    fn facts(facts: &[(String, String)]) -> String {
        let rows: String = (facts.iter())
            .map(|(k, v)| {
                let (k, v) = (Html::escape(k), Html::escape(v));
                format!("<tr><th>{k}</th><td>{v}</td></tr>\n")
            })
            .collect();
        format!("<table class=\"provenance\">\n{rows}</table>\n")
    }

    fn figure(f: &Figure) -> String {
        let (title, file) = (Html::escape(f.title()), Html::escape(f.file()));
        let svg = inline(&f.svg);
        let caption = format!("{title} (<a href=\"{file}\">{file}</a>)");
        format!("<figure>{svg}<figcaption>{caption}</figcaption></figure>\n")
    }

    fn timeline(t: &TimelineFigure, source: &str) -> String {
        format!(
            "<figure class=\"timeline\">{}<figcaption>{source}<a href=\"{}\">Chrome trace</a> (chrome://tracing or ui.perfetto.dev)</figcaption></figure>\n",
            inline(&t.svg),
            Html::escape(&t.trace_file)
        )
    }

    fn glossary() -> String {
        let terms: String = (TERMS.iter())
            .map(|t| {
                let (term, meaning) = (Html::escape(t.spelling), Html::words(t.meaning));
                format!("<dt id=\"{}\">{term}</dt><dd>{meaning}</dd>\n", t.anchor)
            })
            .collect();
        format!("<dl>\n{terms}</dl>\n")
    }
}

/// A cell: its value, and its noise under it where it has one.
fn cell(c: &str) -> String {
    match c.split_once(UNDER) {
        Some((value, noise)) => {
            let (value, noise) = (Html::escape(value), Html::escape(noise));
            format!("{value}<br><span class=\"noise\">{noise}</span>")
        }
        None => Html::escape(c),
    }
}

/// An SVG document as an inline element: everything before `<svg` dropped.
fn inline(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |i| &svg[i..])
}
