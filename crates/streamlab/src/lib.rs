//! streamlab: the classic CUDA-streams experiments with Rust kernels, on the GPU.
//!
//! Data flows one way: the command line ([`cli`]) gives an experiment's parameters →
//! [`app`] opens the GPU ([`runtime`], the only module that calls CUDA) and runs the
//! experiment ([`experiments`]), which returns its saved result → the result, its
//! derived numbers and the report go to disk through `streamlab_results`, which never
//! touches the GPU.
pub mod app;
pub mod build_info;
pub mod cli;
pub mod clock;
pub mod experiments;
pub mod measure;
pub mod parallel;
pub mod progress;
pub mod runtime;
pub mod sincos;
pub mod stop;
pub mod verify;
