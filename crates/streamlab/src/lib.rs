//! streamlab: the classic CUDA-streams experiments with Rust kernels, on the GPU.
//!
//! Data flows one way: the command line ([`cli`]) gives an experiment's parameters →
//! [`app`] opens the GPU ([`runtime`], the crate `streamlab_runtime`, the only code that
//! calls CUDA: this crate cannot name `cudarc`) and runs the experiment
//! ([`experiments`]), which returns its saved result → the result, its derived numbers
//! and the report go to disk through `streamlab_results`, which never touches the GPU.
//!
//! ```compile_fail
//! // Nothing here names cudarc: the experiments reach the GPU through the runtime only ...
//! use cudarc::driver::sys::CUresult;
//! ```
//! ```
//! // ... and what it exports.
//! use streamlab::runtime::{Gpu, RuntimeError, Stream};
//! ```
pub mod add_kernel;
pub mod app;
pub mod build_info;
pub mod cli;
pub mod clock;
pub mod error;
pub mod experiments;
pub mod measure;
pub mod options;
pub mod progress;
pub mod rng;
pub mod session;
pub mod sincos;
pub mod stop;
pub mod table;
pub mod trace;
pub mod verify;

pub use streamlab_runtime as runtime;
pub use streamlab_runtime::parallel;
