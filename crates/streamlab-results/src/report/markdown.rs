//! A page ([`Block`]s) as GitHub-flavoured Markdown, its charts as images beside it.
use std::fmt::Write;

use super::fit::UNDER;
use super::glossary::{Linker, TERMS, linked};
use super::page::{Block, Lead, Style};
use super::section::TimelineFigure;
use super::table::Table;
use crate::verdict::Verdict;

/// The extension of a Markdown page: its file's, and its links' to other pages.
pub const EXTENSION: &str = ".md";

/// `blocks` as Markdown.
pub fn page(blocks: &[Block]) -> String {
    let mut linker = Block::glossary_page(blocks).map(Linker::to);
    let mut out = String::new();
    print(blocks, &mut linker, &mut out);
    out
}

fn print(blocks: &[Block], linker: &mut Option<Linker>, out: &mut String) {
    for b in blocks {
        match b {
            Block::Title(t) => {
                let _ = writeln!(out, "# {t}\n");
            }
            Block::Heading(level, text, anchor) => {
                if let Some(a) = anchor {
                    let _ = writeln!(out, "<a id=\"{a}\"></a>\n");
                }
                let _ = writeln!(out, "{} {text}\n", "#".repeat(usize::from(*level)));
            }
            Block::Part(id, inner) => {
                let _ = writeln!(out, "<a id=\"{id}\"></a>\n");
                print(inner, linker, out);
            }
            Block::Prose(style, text) => {
                let _ = match style {
                    Style::Plain => writeln!(out, "{}\n", prose(linker, text)),
                    Style::Small => writeln!(out, "*{text}*\n"),
                    Style::Lede => writeln!(out, "{text}\n"),
                };
            }
            Block::Pointer([before, after], text, link) => {
                let _ = writeln!(out, "{before}[{text}]({}){after}\n", link.href(EXTENSION));
            }
            Block::Note(label, text) => {
                let _ = writeln!(out, "**{label}.** {}\n", prose(linker, text));
            }
            Block::Banner(lead, text) => {
                let _ = writeln!(out, "> **{lead}** {text}\n");
            }
            Block::Check(_, lead, text) => {
                let _ = writeln!(out, "**{lead}** {text}\n");
            }
            Block::Table(t) => *out += &table(t),
            Block::Facts(facts) => {
                let rows = facts.iter().map(|(k, v)| vec![k.clone(), v.clone()]);
                *out += &grid(&[String::new(), String::new()], rows);
            }
            Block::Judged(t, verdicts) => *out += &judged(t, verdicts),
            Block::Figure(f) => {
                let _ = writeln!(out, "![{}]({})\n", f.title(), f.file());
            }
            Block::Timeline(t, source) => *out += &timeline(t, *source),
            Block::Folded(summary, inner) => {
                let _ = writeln!(out, "<details><summary>{summary}</summary>\n");
                print(inner, linker, out);
                out.push_str("</details>\n\n");
            }
            Block::List(items) => {
                for (lead, text) in items {
                    let _ = writeln!(out, "- {}", item(lead.as_ref(), text));
                }
                out.push('\n');
            }
            Block::Glossary => *out += &glossary(),
            Block::GlossaryOn(_) => {}
        }
    }
}

/// `text`, each term linked to the glossary where the page first uses it.
fn prose(linker: &mut Option<Linker>, text: &str) -> String {
    linked(linker, text, str::to_owned, |term, link| {
        format!("[{term}]({})", link.href(EXTENSION))
    })
}

/// A list item: its lead (bold, linked), a colon, its text.
fn item(lead: Option<&Lead>, text: &str) -> String {
    let Some(lead) = lead else {
        return text.to_owned();
    };
    let shown = match lead.bold {
        true => format!("**{}**", lead.text),
        false => lead.text.clone(),
    };
    let shown = match &lead.link {
        Some(link) => format!("[{shown}]({})", link.href(EXTENSION)),
        None => shown,
    };
    match text.is_empty() {
        true => shown,
        false => format!("{shown}: {text}"),
    }
}

/// The glossary, every term with its anchor.
fn glossary() -> String {
    let mut out = String::new();
    for t in TERMS.iter() {
        let (anchor, term, meaning) = (&t.anchor, t.spelling, t.meaning);
        let _ = writeln!(out, "- <a id=\"{anchor}\"></a>**{term}**: {meaning}");
    }
    out + "\n"
}

/// Text safe inside a table cell.
fn cell(text: &str) -> String {
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
            let (every, all) = (&shown.every, parts(&shown.all));
            let _ = writeln!(
                out,
                "<details><summary>{every}</summary>\n\n{all}</details>\n"
            );
        }
        None => out += &parts(&shown.all),
    }
    out
}

/// Each of `parts` as a table, noise under its value.
fn parts(parts: &[Table]) -> String {
    let mut out = String::new();
    for part in parts {
        if let Some(c) = &part.caption {
            let _ = writeln!(out, "*{c}*\n");
        }
        let rows =
            (part.rows.iter()).map(|row| row.iter().map(|c| c.replace(UNDER, "<br>")).collect());
        out += &grid(&part.header, rows);
    }
    out
}

/// A header and rows as a Markdown table.
fn grid(header: &[String], rows: impl Iterator<Item = Vec<String>>) -> String {
    let line = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
        format!("| {} |\n", cells.join(" | "))
    };
    let mut out = line(header);
    let _ = writeln!(out, "|{}", " --- |".repeat(header.len()));
    for row in rows {
        out += &line(&row);
    }
    out + "\n"
}

/// A table whole, the changes of a row called changed in bold.
fn judged(t: &Table, verdicts: &[Option<Verdict>]) -> String {
    let mut out = String::new();
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "*{c}*\n");
    }
    let rows = (t.rows.iter().enumerate()).map(|(i, row)| {
        let changed = verdicts
            .get(i)
            .copied()
            .flatten()
            .is_some_and(Verdict::changed);
        (row.iter())
            .map(|c| match changed && c.contains(['▲', '▼']) {
                true => format!("**{c}**"),
                false => c.clone(),
            })
            .collect()
    });
    out + &grid(&t.header, rows)
}

/// One timeline, saying where its times come from when its part did not.
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
        let _ = writeln!(out, "- {} ({}): {}", c.name, c.outcome.mark(), c.detail);
    }
    for r in &t.retraced {
        let _ = writeln!(out, "- an earlier trace of this schedule was dropped: {r}");
    }
    out + "\n"
}
