//! A page ([`Block`]s) as GitHub-flavoured Markdown, its charts as images beside it.
use std::fmt::Write;

use super::fit::UNDER;
use super::glossary::TERMS;
use super::page::{Block, Link};
use super::printer::{self, Format};
use super::section::{Figure, TimelineFigure};
use super::table::Table;
use crate::verdict::Verdict;

/// The extension of a Markdown page: its file's, and its links' to other pages.
pub const EXTENSION: &str = ".md";

/// `blocks` as Markdown.
pub fn page(blocks: &[Block]) -> String {
    printer::print::<Markdown>(blocks)
}

struct Markdown;

impl Format for Markdown {
    fn escape(text: &str) -> String {
        text.to_owned()
    }

    fn link(shown: &str, link: &Link) -> String {
        format!("[{shown}]({})", link.href(EXTENSION))
    }

    fn strong(shown: &str) -> String {
        format!("**{shown}**")
    }

    fn outcome(_: &str, shown: &str, bold: bool) -> String {
        match bold {
            true => Markdown::strong(shown),
            false => shown.to_owned(),
        }
    }

    /// Small print in italics, a banner quoted.
    fn paragraph(class: &str, inner: &str) -> String {
        match class {
            "params" | "caption" | "part" => format!("*{inner}*\n\n"),
            "banner" => format!("> {inner}\n\n"),
            _ => format!("{inner}\n\n"),
        }
    }

    fn heading(level: u8, text: &str, anchor: Option<&str>) -> String {
        let anchor = anchor.map_or(String::new(), |a| format!("<a id=\"{a}\"></a>\n\n"));
        format!("{anchor}{} {text}\n\n", "#".repeat(usize::from(level)))
    }

    fn part(id: &str, inner: &str) -> String {
        format!("<a id=\"{id}\"></a>\n\n{inner}")
    }

    fn folded(summary: &str, inner: &str) -> String {
        format!("<details><summary>{summary}</summary>\n\n{inner}</details>\n\n")
    }

    fn list(items: impl Iterator<Item = String>) -> String {
        items.map(|i| format!("- {i}\n")).collect::<String>() + "\n"
    }

    /// Noise under its value, the changes of a row called changed in bold.
    fn grid(t: &Table, verdicts: Option<&[Option<Verdict>]>) -> String {
        let line = |cells: &[String]| {
            let cells: Vec<String> = (cells.iter())
                .map(|c| c.replace('|', "\\|").replace('\n', " "))
                .collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let mut out = line(&t.header);
        let _ = writeln!(out, "|{}", " --- |".repeat(t.header.len()));
        for (i, row) in t.rows.iter().enumerate() {
            let changed =
                (verdicts.and_then(|v| v.get(i).copied().flatten())).is_some_and(Verdict::changed);
            let row: Vec<String> = (row.iter())
                .map(|c| match changed && c.contains(['▲', '▼']) {
                    true => format!("**{c}**"),
                    false => c.replace(UNDER, "<br>"),
                })
                .collect();
            out += &line(&row);
        }
        out + "\n"
    }

    fn facts(facts: &[(String, String)]) -> String {
        let mut t = Table::new(None, &["", ""]);
        t.rows = (facts.iter())
            .map(|(k, v)| vec![k.clone(), v.clone()])
            .collect();
        Markdown::grid(&t, None)
    }

    fn figure(f: &Figure) -> String {
        format!("![{}]({})\n\n", f.title(), f.file())
    }

    fn timeline(t: &TimelineFigure, source: &str) -> String {
        format!(
            "{source}![{}]({})\n\n[Chrome trace]({}) (chrome://tracing or ui.perfetto.dev)\n\n",
            t.title, t.file, t.trace_file
        )
    }

    fn glossary() -> String {
        Markdown::list((TERMS.iter()).map(|t| {
            let (anchor, term, meaning) = (&t.anchor, t.spelling, t.meaning);
            format!("<a id=\"{anchor}\"></a>**{term}**: {meaning}")
        }))
    }
}
