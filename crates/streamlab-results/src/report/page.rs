//! A page, whatever its format: the report ([`super::document`]) and the comparison
//! (`crate::compare`) are each a list of [`Block`]s, printed by one Markdown printer
//! ([`super::markdown::page`]) and one HTML printer ([`super::html::page`]).
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

/// A list item's lead: bold or not, linked to an anchor where it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct Lead {
    pub text: String,
    pub anchor: Option<String>,
    pub bold: bool,
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
    /// A paragraph pointing to an anchor: the text before, the link's text and anchor,
    /// the text after.
    Pointer([String; 2], String, String),
    /// A paragraph led by a bold label, "**Label.** text".
    Note(String, String),
    /// A banner: its bold lead, then its text.
    Banner(String, String),
    /// A check's outcome: its lead marked passed or failed, then its text.
    Check(bool, String, String),
    /// A table as the page shows it: noise under its value, split into parts that fit
    /// the page, a long one's key rows first and itself whole, folded.
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
}

impl Block<'_> {
    /// Whether the page has a glossary for its prose to link to.
    pub fn has_glossary(blocks: &[Block]) -> bool {
        blocks.iter().any(|b| match b {
            Block::Glossary => true,
            Block::Part(_, inner) | Block::Folded(_, inner) => Block::has_glossary(inner),
            _ => false,
        })
    }
}
