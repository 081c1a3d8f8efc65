//! streamlab: the classic CUDA-streams experiments with Rust kernels.
//!
//! Data flows one way: parameters ([`cli`], [`experiments`]) → a run on the GPU
//! ([`runtime`], [`timing`]) → samples and statistics ([`stats`], [`results`]) → files
//! and the report ([`report`]), which can always be rendered again from the files.
pub mod app;
pub mod baseline;
pub mod bounds;
pub mod cli;
pub mod clock;
pub mod compare;
pub mod experiments;
pub mod kernels;
pub mod parallel;
pub mod progress;
pub mod range;
pub mod report;
pub mod results;
pub mod rng;
pub mod runtime;
pub mod stats;
pub mod timing;
pub mod verify;
