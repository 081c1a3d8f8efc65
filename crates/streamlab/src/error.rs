//! Why a command failed, and the exit code each failure gives.
use std::path::PathBuf;

use streamlab_results::compare::CompareError;
use streamlab_results::folder::FolderError;
use streamlab_results::report::ReportError;
use streamlab_results::saved::UsageError;

use crate::experiments::RunError;
use crate::runtime::RuntimeError;
use crate::runtime::baseline::BaselineError;
use crate::stop::Signal;

/// Why a command failed; usage errors (bad options, and a folder or file named that is
/// not what the command needs) exit with 2, an interrupted run with 128 + the signal,
/// everything else with 1.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// This machine cannot run the experiment (exit code 2).
    #[error("{0}")]
    Unavailable(String),
    #[error(transparent)]
    Options(#[from] clap::Error),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error("{0}")]
    Input(String),
    #[error(transparent)]
    Baseline(#[from] BaselineError),
    #[error(transparent)]
    Folder(#[from] FolderError),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error(transparent)]
    Compare(#[from] CompareError),
    #[error("could not create the results folder {path}: {source}")]
    OutDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} check(s) failed (results written to {}): {}", .details.len(), .dir.display(), .details.join("; "))]
    Failed { dir: PathBuf, details: Vec<String> },
    #[error("stopped by {}: what was measured is in {} (marked incomplete)", .signal.name(), .dir.display())]
    Interrupted { signal: Signal, dir: PathBuf },
    /// `compare --fail-on` found such a change (exit code 3).
    #[error("{0}")]
    Changed(String),
}

impl AppError {
    pub fn exit_code(&self) -> i32 {
        match self {
            AppError::Usage(_) | AppError::Unavailable(_) => 2,
            // A GPU index the machine does not have is an option given wrong.
            AppError::Runtime(RuntimeError::NoDevice { .. }) => 2,
            AppError::Changed(_) => 3,
            AppError::Compare(err) if err.is_usage() => 2,
            AppError::Folder(err) | AppError::Report(ReportError::Folder(err))
                if err.is_usage() =>
            {
                2
            }
            AppError::Options(err) => err.exit_code(),
            AppError::Interrupted { signal, .. } => signal.exit_code(),
            _ => 1,
        }
    }
}

impl From<RunError> for AppError {
    fn from(err: RunError) -> AppError {
        match err {
            RunError::Runtime(e) => AppError::Runtime(e),
            RunError::Usage(e) => AppError::Usage(e),
            RunError::Input(e) => AppError::Input(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_the_machine_does_not_have_is_a_usage_error() {
        let no_device = AppError::Runtime(RuntimeError::NoDevice {
            ordinal: 3,
            count: 1,
        });
        assert_eq!(no_device.exit_code(), 2);
        assert!(no_device.to_string().contains("--device 0..=0"));
        assert_eq!(AppError::Runtime(RuntimeError::NoDriver).exit_code(), 1);
    }
}
