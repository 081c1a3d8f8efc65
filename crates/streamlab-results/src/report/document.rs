//! What the report says, independent of its format: its main page, and a page per
//! experiment's section ([`Document::pages`]).
use super::page::{Block, Lead, Link, Style};
use super::section::{MACHINE_NOTES, Section, shared_source, timeline_notes};
use super::table::Table;

#[derive(Debug, Clone)]
pub struct Document {
    /// Set when the run did not measure everything it set out to.
    pub banner: Option<String>,
    /// Results the run's `summary.json` names that the folder no longer holds, e.g.
    /// "NAME (NAME.json)": their sections are missing.
    pub missing: Vec<String>,
    /// The GPU, when the run started and how long it took, in one line.
    pub lede: Option<String>,
    /// `(label, value)` pairs: the GPU, and when and with what the results were measured.
    pub header: Vec<(String, String)>,
    /// What the run found.
    pub findings: Option<Findings>,
    pub sections: Vec<Section>,
}

/// The file stem of the report's main page.
pub const MAIN_PAGE: &str = "report";

impl Document {
    /// The report's pages as (file stem, blocks): the main page, then a page per section.
    pub fn pages(&self) -> Vec<(String, Vec<Block<'_>>)> {
        let mut out = vec![(MAIN_PAGE.to_owned(), self.main_page())];
        out.extend((self.sections.iter()).map(|s| (s.id.clone(), self.section_page(s))));
        out
    }

    /// The main page: its title, banners and lede, what the run found, where and how it
    /// ran (folded), each section's page, and the glossary.
    fn main_page(&self) -> Vec<Block<'_>> {
        let mut out = vec![Block::Title("streamlab report".into())];
        if let Some(banner) = &self.banner {
            out.push(Block::Banner("Incomplete run.".into(), banner.clone()));
        }
        if !self.missing.is_empty() {
            let names = self.missing.join(", ");
            let note = format!(
                "{names}: this run's summary.json has a headline of each, but the folder holds no result file, so its section is not shown."
            );
            out.push(Block::Banner("Not in this folder.".into(), note));
        }
        if let Some(lede) = &self.lede {
            out.push(Block::Prose(Style::Lede, lede.clone()));
        }
        if let Some(f) = &self.findings {
            out.extend(f.blocks(&self.sections));
        }
        if !self.header.is_empty() {
            out.push(Block::Folded(
                "Where and how it ran: the GPU, the compilers, the driver, the command line".into(),
                vec![Block::Facts(self.header.clone())],
            ));
        }
        if self.sections.is_empty() {
            return out;
        }
        out.push(Block::Heading(2, "Each experiment's page".into(), None));
        let page =
            |s: &Section| Lead::item(&s.title, Some(Link::page(&s.id)), false, String::new());
        out.push(Block::List(self.sections.iter().map(page).collect()));
        let glossary = vec![Block::Heading(2, "Glossary".into(), None), Block::Glossary];
        out.push(Block::Part("glossary".into(), glossary));
        out
    }

    /// A section's own page: its title, a line back to the main page, the section, and
    /// how to read its timelines where it has some.
    fn section_page<'a>(&'a self, section: &'a Section) -> Vec<Block<'a>> {
        let run = (self.lede.as_ref()).map_or(String::new(), |l| format!(": {l}"));
        let around = ["An experiment of the ".into(), format!("{run}.")];
        let main = Block::Pointer(around, "streamlab report".into(), Link::page(MAIN_PAGE));
        let mut out = vec![Block::Title(section.title.clone()), main, part(section)];
        if !section.timelines.is_empty() {
            let heading = Block::Heading(2, "Reading the timelines".into(), None);
            let notes = timeline_notes()
                .into_iter()
                .map(|n| Block::Prose(Style::Plain, n));
            out.push(Block::Part(
                "reading-the-timelines".into(),
                std::iter::once(heading).chain(notes).collect(),
            ));
        }
        out.push(Block::GlossaryOn(MAIN_PAGE.into()));
        out
    }

    /// Every file the report writes beside its pages.
    pub fn files(&self) -> Vec<(&str, &str)> {
        let mut files = Vec::new();
        for s in &self.sections {
            files.extend(s.figures.iter().map(|f| (f.file(), f.svg.as_str())));
            for t in &s.timelines {
                files.push((t.file.as_str(), t.svg.as_str()));
                files.push((t.trace_file.as_str(), t.trace.as_str()));
            }
        }
        files
    }
}

/// The section as a part of its page: what it measures, its finding, whether it is
/// complete, its parameters, notes and verification, its tables, charts and timelines.
fn part(section: &Section) -> Block<'_> {
    let mut out = vec![Block::Prose(Style::Plain, section.about.clone())];
    let finding = |v: &String| Block::Note("Finding".into(), v.clone());
    out.extend(section.verdict.iter().map(finding));
    if !section.complete {
        out.push(Block::Banner(
            "Incomplete:".into(),
            "the run stopped before every configuration of this experiment was measured.".into(),
        ));
    }
    let parameters = format!("Parameters: {}", section.parameters);
    out.push(Block::Prose(Style::Small, parameters));
    let note = |(l, t): &(String, String)| Block::Note(l.clone(), t.clone());
    let (machine, notes): (Vec<_>, Vec<_>) =
        (section.notes.iter()).partition(|(l, _)| MACHINE_NOTES.contains(&l.as_str()));
    out.extend(notes.into_iter().map(note));
    if !machine.is_empty() {
        let machine = machine.into_iter().map(note).collect();
        let summary = "The machine while it ran: the link, the clocks".into();
        out.push(Block::Folded(summary, machine));
    }
    let (passed, detail) = &section.verification;
    let outcome = if *passed { "passed" } else { "FAILED" };
    let lead = format!("Verification: {outcome}.");
    out.push(Block::Check(*passed, lead, detail.clone()));
    out.extend(section.tables.iter().cloned().map(Block::Table));
    out.extend(section.figures.iter().map(Block::Figure));
    if !section.timelines.is_empty() {
        let shared = shared_source(&section.timelines);
        out.push(Block::Heading(3, "Timelines".into(), None));
        let around = [
            "How to read them and what their checks mean: ".into(),
            ".".into(),
        ];
        let link = Link::here("reading-the-timelines");
        out.push(Block::Pointer(around, "reading the timelines".into(), link));
        out.extend(shared.map(|s| Block::Prose(Style::Small, format!("Times from {s}."))));
        out.extend((section.timelines.iter()).map(|t| match &t.collapsed {
            Some(why) => Block::Prose(Style::Small, format!("{}: {why} ({}).", t.title, t.file)),
            None => Block::Timeline(t, shared.is_none()),
        }));
    }
    Block::Part(section.id.clone(), out)
}

/// The questions the report answers first, each from the experiment that measures it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Question {
    RustCost,
    StreamsPayOff,
    OverlapBreaks,
}

impl Question {
    /// The question, as the report asks it.
    pub fn words(self) -> &'static str {
        match self {
            Question::RustCost => "What Rust costs",
            Question::StreamsPayOff => "When streams pay off",
            Question::OverlapBreaks => "What breaks the overlap most",
        }
    }
}

/// What a run found: each experiment's finding in words, and a row of numbers per
/// experiment. The report's first screen and the end of `run-all` show it.
#[derive(Debug, Clone)]
pub struct Findings {
    /// The questions a reader comes with, each answered in a sentence by the experiment
    /// that measures it: (question, experiment, sentence), in the questions' order.
    pub answers: Vec<(Question, String, String)>,
    /// (experiment, its finding), in the run's order.
    pub words: Vec<(String, String)>,
    /// experiment | result | against its bound | Rust / C++ | noise | verified.
    pub table: Table,
    /// How many results it holds, and how many of them passed their verification.
    pub results: usize,
    pub verified: usize,
    /// The results whose GPU held its clocks down while they ran: (file stem, why).
    pub held_back: Vec<(String, String)>,
    /// How many results did not read every GPU's clocks (not recorded, or NVML refused):
    /// whether their GPUs held back is not known.
    pub clocks_unknown: usize,
}

impl Findings {
    /// What the run found, as the report's first blocks: the answers, the verification,
    /// any GPU held back, each experiment's finding, the table of numbers, and the first
    /// chart of each answer's experiment.
    fn blocks<'a>(&self, sections: &'a [Section]) -> Vec<Block<'a>> {
        let (failed, results) = (self.results - self.verified, self.results);
        let (lead, text) = match failed {
            0 => (
                format!("All {results} results verified:"),
                "every output check passed (each experiment's check is in its section).",
            ),
            _ => (
                format!("{failed} of {results} results FAILED verification:"),
                "their numbers are not to be trusted.",
            ),
        };
        // Each item led by `lead`, linked to the page of the section `name` where it has one.
        let list = |items: Vec<(&str, &str, &String)>| {
            let item = |(lead, name, text): (&str, &str, &String)| {
                let page = (sections.iter().any(|s| s.id == name)).then(|| Link::page(name));
                Lead::item(lead, page, true, text.clone())
            };
            Block::List(items.into_iter().map(item).collect())
        };
        let mut out = Vec::new();
        if !self.answers.is_empty() {
            let answer = Block::Heading(2, "The answer".into(), Some("answer".into()));
            let answers =
                (self.answers.iter()).map(|(q, name, text)| (q.words(), name.as_str(), text));
            out.extend([answer, list(answers.collect())]);
        }
        out.extend([
            Block::Heading(2, "What this run found".into(), Some("findings".into())),
            Block::Check(failed == 0, lead, text.into()),
        ]);
        for (stem, why) in &self.held_back {
            let during = format!("during {stem}: {why}.");
            out.push(Block::Banner("GPU held back".into(), during));
        }
        if let Some(line) = self.clocks_unknown_line() {
            out.push(Block::Prose(Style::Plain, format!("{line}.")));
        }
        let words = (self.words.iter()).map(|(name, w)| (name.as_str(), name.as_str(), w));
        out.push(list(words.collect()));
        out.push(Block::Table(self.table.clone()));
        out.push(Block::Prose(Style::Small, FINDINGS_KEY.into()));
        out.extend(
            (self.answers.iter())
                .filter_map(|(_, name, _)| sections.iter().find(|s| &s.id == name))
                .filter_map(|s| s.figures.first().map(Block::Figure)),
        );
        out
    }

    /// The line saying how many results have no clocks to tell a GPU held back, if any.
    pub fn clocks_unknown_line(&self) -> Option<String> {
        (self.clocks_unknown > 0).then(|| {
            format!(
                "Clocks not recorded or unread for {} of {} results: whether the GPU held back during them is not known",
                self.clocks_unknown, self.results
            )
        })
    }
}

/// What the columns of [`Findings::table`] mean.
pub const FINDINGS_KEY: &str = "Against its bound: the time of what the brackets name over the least time this machine allows for it, from limits measured in the same run (1.00× is the limit reached). Rust / C++: Rust kernels' time over their CUDA C++ twins' (below 1, Rust is faster), of what the brackets name: the worst shape, the launch, or every row both kernel sets measured, summed. Noisy rows: measured rows whose repeated samples spread more than 1%, of those that can show a spread. Verified: every output element checked against a reference.";
