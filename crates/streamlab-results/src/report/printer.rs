//! The one walk of a page's [`Block`]s ([`print()`]) for every format: each format says
//! only how its pieces are written ([`Format`]).
use super::fit::page_parts;
use super::glossary::Linker;
use super::page::{Block, Lead, Link, Style};
use super::section::{Figure, TimelineFigure};
use super::table::Table;
use crate::derived::trace::Outcome;
use crate::verdict::Verdict;

/// How a format writes the pieces of a page.
pub trait Format {
    /// Text safe in the format.
    fn escape(text: &str) -> String;
    /// Text safe in the format, each span between backticks set as code where it can be.
    fn words(text: &str) -> String {
        Self::escape(text)
    }
    /// `shown`, already written, linked to `link`.
    fn link(shown: &str, link: &Link) -> String;
    fn strong(shown: &str) -> String;
    /// `shown` marked as an outcome of class `class` ("passed", "failed", or "params":
    /// not applicable); a format without classes sets it in bold where `bold`.
    fn outcome(class: &str, shown: &str, bold: bool) -> String;
    /// A paragraph of `inner` of the class `class` ("" for plain prose).
    fn paragraph(class: &str, inner: &str) -> String;
    fn heading(level: u8, text: &str, anchor: Option<&str>) -> String;
    /// A part of the page under the anchor `id`.
    fn part(id: &str, inner: &str) -> String;
    /// `inner` shown one click down, under `summary`.
    fn folded(summary: &str, inner: &str) -> String;
    fn list(items: impl Iterator<Item = String>) -> String;
    /// `t`'s header and rows, each row judged by `verdicts` where there are some.
    fn grid(t: &Table, verdicts: Option<&[Option<Verdict>]>) -> String;
    fn facts(facts: &[(String, String)]) -> String;
    fn figure(f: &Figure) -> String;
    /// A timeline's drawing and its trace, after `source` (where its times come from).
    fn timeline(t: &TimelineFigure, source: &str) -> String;
    /// Every term of the glossary with its anchor.
    fn glossary() -> String;
}

/// `blocks` as format `F` writes them.
pub fn print<F: Format>(blocks: &[Block]) -> String {
    let mut linker = Block::glossary_page(blocks).map(Linker::to);
    let mut out = String::new();
    walk::<F>(blocks, &mut linker, &mut out);
    out
}

fn walk<F: Format>(blocks: &[Block], linker: &mut Option<Linker>, out: &mut String) {
    let inner = |blocks: &[Block], linker: &mut Option<Linker>| {
        let mut out = String::new();
        walk::<F>(blocks, linker, &mut out);
        out
    };
    for b in blocks {
        *out += &match b {
            Block::Title(t) => F::heading(1, t, None),
            Block::Heading(level, text, anchor) => F::heading(*level, text, anchor.as_deref()),
            Block::Part(id, blocks) => F::part(id, &inner(blocks, linker)),
            Block::Prose(Style::Plain, text) => F::paragraph("", &prose::<F>(linker, text)),
            Block::Prose(Style::Lede, text) => F::paragraph("lede", &F::words(text)),
            Block::Prose(Style::Small, text) => F::paragraph("params", &F::words(text)),
            Block::Pointer([before, after], text, link) => {
                let (before, after) = (F::escape(before), F::escape(after));
                let link = F::link(&F::escape(text), link);
                F::paragraph("", &format!("{before}{link}{after}"))
            }
            Block::Note(label, text) => {
                let label = F::strong(&F::escape(&format!("{label}.")));
                let text = prose::<F>(linker, text);
                F::paragraph("note", &format!("{label} {text}"))
            }
            Block::Banner(lead, text) => {
                let (lead, text) = (F::strong(&F::escape(lead)), F::words(text));
                F::paragraph("banner", &format!("{lead} {text}"))
            }
            Block::Check(passed, lead, text) => {
                let class = if *passed { "passed" } else { "failed" };
                let lead = F::outcome(class, &F::escape(lead), true);
                F::paragraph("", &format!("{lead} {}", F::words(text)))
            }
            Block::Table(t) => table::<F>(t),
            Block::Facts(facts) => F::facts(facts),
            Block::Judged(t, verdicts) => caption::<F>(t, "caption") + &F::grid(t, Some(verdicts)),
            Block::Figure(f) => F::figure(f),
            Block::Timeline(t, source) => timeline::<F>(t, *source),
            Block::Folded(summary, blocks) => F::folded(summary, &inner(blocks, linker)),
            Block::List(items) => F::list(items.iter().map(item::<F>)),
            Block::Glossary => F::glossary(),
            Block::GlossaryOn(_) => String::new(),
        };
    }
}

/// `text`, each term linked to the glossary where the page first uses it.
fn prose<F: Format>(linker: &mut Option<Linker>, text: &str) -> String {
    match linker {
        Some(linker) => linker.link(text, F::words, |term, link| F::link(&F::escape(term), link)),
        None => F::words(text),
    }
}

/// A list item: its lead (bold, linked), a colon, its text.
fn item<F: Format>((lead, text): &(Option<Lead>, String)) -> String {
    let Some(lead) = lead else {
        return F::words(text);
    };
    let mut shown = F::escape(&lead.text);
    if lead.bold {
        shown = F::strong(&shown);
    }
    if let Some(link) = &lead.link {
        shown = F::link(&shown, link);
    }
    match text.is_empty() {
        true => shown,
        false => format!("{shown}: {}", F::words(text)),
    }
}

/// `t`'s caption, if it has one, as a paragraph of `class`.
fn caption<F: Format>(t: &Table, class: &str) -> String {
    (t.caption.as_ref()).map_or(String::new(), |c| F::paragraph(class, &F::escape(c)))
}

/// A table as on the page, split into [`page_parts`]: where it folds, its key rows led
/// by a line, then every row folded.
fn table<F: Format>(t: &Table) -> String {
    let parts = |t: &Table| -> String {
        let bare = Table {
            caption: None,
            ..t.clone()
        };
        (page_parts(&bare).iter())
            .map(|p| caption::<F>(p, "part") + &F::grid(p, None))
            .collect()
    };
    let out = caption::<F>(t, "caption");
    if !t.folds() {
        return out + &parts(t);
    }
    let key = t.key_only();
    let (k, n) = (key.rows.len(), t.rows.len());
    let lead = format!("The {k} of its {n} rows that carry the finding:");
    out + &F::paragraph("key", &F::escape(&lead))
        + &parts(&key)
        + &F::folded(&format!("Every row ({n})"), &parts(t))
}

/// One timeline, saying where its times come from when its part did not: its drawing,
/// then its notes and checks.
fn timeline<F: Format>(t: &TimelineFigure, source: bool) -> String {
    let source = match source {
        true => F::escape(&format!("Times from {}. ", t.checks.source.description())),
        false => String::new(),
    };
    let checks = t.checks.checks.iter().map(|c| {
        let class = match c.outcome {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::NotApplicable => "params",
        };
        let mark = F::outcome(class, c.outcome.mark(), false);
        format!("{} ({mark}): {}", F::escape(&c.name), F::words(&c.detail))
    });
    let dropped = |r| format!("an earlier trace of this schedule was dropped: {r}");
    let retraced = t.retraced.iter().map(|r| F::escape(&dropped(r)));
    let notes = t.notes().into_iter().map(|n| F::words(&n));
    F::heading(4, &t.title, None)
        + &F::timeline(t, &source)
        + &F::list(notes.chain(checks).chain(retraced))
}
