//! What a streamlab run saves, every number derived from it, and everything that renders
//! it. Nothing here can reach a GPU (this crate does not depend on the runtime), so the
//! report can always be rendered again from a results folder, on any machine.
//!
//! Data flows one way: the GPU side fills in [`saved`] results (parameters, raw samples,
//! verification, traced timelines) → [`derived`] turns them into every speedup, bound,
//! efficiency and "best" → [`report`] prints tables and writes CSV, charts, traces and
//! the report; [`folder`] writes each file whole and reads a folder back.
pub mod derived;
pub mod folder;
pub mod range;
pub mod report;
pub mod saved;
pub mod stats;
