//! A page, whatever its format: a list of [`Block`]s, printed as Markdown
//! ([`super::markdown::page`]) and as HTML ([`super::html::page`]) by one walk
//! ([`super::printer`]).
use super::section::{Figure, TimelineFigure};
use super::table::Table;
use crate::verdict::Verdict;

/// How a paragraph reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    /// The line under the title.
    Lede,
    /// Small print: parameters, what a table's columns mean.
    Small,
}

/// Where a link goes: an anchor, on this page or on another page of the same folder
/// (its file stem: each printer adds its own extension).
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub page: Option<String>,
    pub anchor: Option<String>,
}

impl Link {
    /// An anchor on this page.
    pub fn here(anchor: &str) -> Link {
        Link {
            page: None,
            anchor: Some(anchor.to_owned()),
        }
    }

    /// The top of the page `stem`.
    pub fn page(stem: &str) -> Link {
        Link {
            page: Some(stem.to_owned()),
            anchor: None,
        }
    }

    /// The link as an `href`, a page named with `extension` (".md", ".html").
    pub fn href(&self, extension: &str) -> String {
        let page = (self.page.as_ref()).map_or(String::new(), |p| format!("{p}{extension}"));
        let anchor = (self.anchor.as_ref()).map_or(String::new(), |a| format!("#{a}"));
        page + &anchor
    }
}

/// A list item's lead: bold or not, linked where it has a link.
#[derive(Debug, Clone, PartialEq)]
pub struct Lead {
    pub text: String,
    pub link: Option<Link>,
    pub bold: bool,
}

impl Lead {
    /// A list item led by `text`, linked to `link` where there is one.
    pub fn item(
        text: &str,
        link: Option<Link>,
        bold: bool,
        rest: String,
    ) -> (Option<Lead>, String) {
        let lead = Lead {
            text: text.to_owned(),
            link,
            bold,
        };
        (Some(lead), rest)
    }
}

/// One block of a page.
pub enum Block<'a> {
    Title(String),
    /// A heading of level 2 to 4, and the anchor links reach it by.
    Heading(u8, String, Option<String>),
    /// A part of the page under its own anchor: its blocks.
    Part(String, Vec<Block<'a>>),
    /// A paragraph; a span between backticks set as code. On a page with a glossary,
    /// plain prose has each term linked where the page first uses it.
    Prose(Style, String),
    /// A paragraph holding a link: the text before and after, the link's text and target.
    Pointer([String; 2], String, Link),
    /// A paragraph led by a bold label, "**Label.** text".
    Note(String, String),
    /// A banner: its bold lead, then its text.
    Banner(String, String),
    /// A check's outcome: its lead marked passed or failed, then its text.
    Check(bool, String, String),
    /// A table as the page shows it: split to fit, a long one folded.
    Table(Table),
    /// Labelled values, a label and a value a line: where and how a run ran.
    Facts(Vec<(String, String)>),
    /// A table shown whole, each row marked by its verdict where it has one.
    Judged(Table, Vec<Option<Verdict>>),
    Figure(&'a Figure),
    /// A traced timeline, saying where its times come from where its part did not.
    Timeline(&'a TimelineFigure, bool),
    /// Shown one click down: a summary line and what it hides.
    Folded(String, Vec<Block<'a>>),
    /// A list: each item's lead, where it has one, and its text.
    List(Vec<(Option<Lead>, String)>),
    /// Every term of the glossary with its anchor.
    Glossary,
    /// Shows nothing: the page's prose links its terms to the glossary on the page named.
    GlossaryOn(String),
}

impl Block<'_> {
    /// `t` shown whole, no row judged.
    pub fn whole(t: Table) -> Block<'static> {
        let n = t.rows.len();
        Block::Judged(t, vec![None; n])
    }

    /// The page the prose of the page `blocks` links its terms to: this one (`""`) where
    /// it holds the glossary, the one [`Block::GlossaryOn`] names, or none.
    pub fn glossary_page<'b>(blocks: &'b [Block]) -> Option<&'b str> {
        blocks.iter().find_map(|b| match b {
            Block::Glossary => Some(""),
            Block::GlossaryOn(page) => Some(page.as_str()),
            Block::Part(_, inner) | Block::Folded(_, inner) => Block::glossary_page(inner),
            _ => None,
        })
    }
}
