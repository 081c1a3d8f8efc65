//! What a streamlab run saves, every number derived from it, and everything that renders
//! it. Nothing here can reach a GPU (this crate does not depend on the runtime), so the
//! report can always be rendered again from a results folder, on any machine.
//!
//! Each experiment lives in one module under [`experiments`], behind one trait
//! ([`experiment::Experiment`]): its parameters and result, its derived numbers, its
//! tables, CSV, charts, report section and `summary.json` headline. The registry
//! (`experiments::ALL`) lists them once. What they share sits below them: [`saved`]
//! (what every result is built from), [`derived`] (the pipeline model, rates, trace
//! checks), [`report`] (tables, figures, sections, Markdown and HTML) and [`folder`]
//! (files written whole). [`run`] sits above them all: a results folder read back,
//! its summary, its printed tables and its report; [`compare`] sets two such folders
//! side by side, judging every row by the one rule of [`verdict`].
pub use streamlab_record::card;
pub mod compare;
pub mod derived;
pub mod experiment;
pub mod experiments;
pub mod folder;
pub mod held;
pub mod measured;
pub mod range;
pub mod report;
pub mod run;
pub mod saved;
pub mod spread;
pub mod stats;
pub mod verdict;
