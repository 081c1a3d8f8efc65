//! The derivations every experiment shares, each computed here once: the pipeline
//! model and its bounds, copy rates, the checks of traced timelines and engine
//! occupancy, and the `summary.json` types. Each experiment's own derived numbers live
//! in its module under [`crate::experiments`]; printed tables, JSON, charts and the
//! report all read those; none computes its own.
pub mod pipeline;
pub mod rates;
pub mod summary;
pub mod trace;
