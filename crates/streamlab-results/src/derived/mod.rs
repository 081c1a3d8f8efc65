//! The derivations every experiment shares, each computed here once: the pipeline
//! model and its bounds, copy rates, the checks of traced timelines, and the
//! `summary.json` types.
pub mod pipeline;
pub mod rates;
pub mod summary;
pub mod trace;
