//! A results folder: every file written whole (to a temporary name, then renamed), and
//! every saved result read back, so the report can be rendered again from the files.
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::derived::summary::RunSummary;
use crate::saved::bounds::Bounds;
use crate::saved::compare_kernels::CompareKernels;
use crate::saved::graph_overlap::GraphOverlap;
use crate::saved::kernel_concurrency::KernelConcurrency;
use crate::saved::launch_overhead::LaunchOverhead;
use crate::saved::mapped::Mapped;
use crate::saved::matmul_streams::MatmulStreams;
use crate::saved::memcpy_kernel::MemcpyKernel;
use crate::saved::overlap::Overlap;
use crate::saved::overlap_map::OverlapMap;
use crate::saved::sincos_overlap::SincosOverlap;
use crate::saved::{Experiment, KernelSet, files};

/// A failure reading or writing a results folder.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    #[error("could not {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a streamlab result: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error(
        "{0} holds no streamlab results (no experiment JSON): point --from at a folder written by a run"
    )]
    Empty(PathBuf),
    #[error("{path} was measured with the {found} kernels, but its name says {expected}")]
    WrongKernels {
        path: PathBuf,
        found: &'static str,
        expected: &'static str,
    },
}

/// Write `contents` to `dir/name` whole: into a temporary file beside it, then renamed
/// over the name, so a reader (or an interrupted run) never sees half a file.
pub fn write_atomic(dir: &Path, name: &str, contents: &[u8]) -> Result<(), FolderError> {
    let path = dir.join(name);
    let temporary = dir.join(format!(".{name}.{}.partial", std::process::id()));
    let io = |action, source| FolderError::Io {
        action,
        path: path.clone(),
        source,
    };
    std::fs::write(&temporary, contents).map_err(|e| io("write", e))?;
    std::fs::rename(&temporary, &path).map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        io("rename into", e)
    })
}

/// Write `value` as pretty JSON to `dir/name`, whole.
pub fn write_json<T: Serialize>(dir: &Path, name: &str, value: &T) -> Result<(), FolderError> {
    let text = serde_json::to_string_pretty(value).map_err(|source| FolderError::Json {
        path: dir.join(name),
        source,
    })?;
    write_atomic(dir, name, text.as_bytes())
}

/// Read `dir/name` as JSON, `None` if there is no such file.
pub fn read_json<T: DeserializeOwned>(dir: &Path, name: &str) -> Result<Option<T>, FolderError> {
    let path = dir.join(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(FolderError::Io {
                action: "read",
                path,
                source,
            });
        }
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|source| FolderError::Json { path, source })
}

/// Experiment `E`'s result in `dir` measured with `set`, checked to be of that set.
pub fn read_result<E: Experiment>(
    dir: &Path,
    set: KernelSet,
) -> Result<Option<E::Result>, FolderError> {
    let name = files::json(E::NAME, set);
    let result: Option<E::Result> = read_json(dir, &name)?;
    if let Some(r) = &result {
        let found = E::provenance(r).kernels;
        if found != set {
            return Err(FolderError::WrongKernels {
                path: dir.join(name),
                found: found.label(),
                expected: set.label(),
            });
        }
    }
    Ok(result)
}

/// The experiments that run with either kernel set, as measured with one set.
#[derive(Debug, Clone, Default)]
pub struct SeedRuns {
    pub sincos_overlap: Option<<SincosOverlap as Experiment>::Result>,
    pub matmul_streams: Option<<MatmulStreams as Experiment>::Result>,
    pub memcpy_kernel: Option<<MemcpyKernel as Experiment>::Result>,
}

impl SeedRuns {
    fn load(dir: &Path, set: KernelSet) -> Result<SeedRuns, FolderError> {
        Ok(SeedRuns {
            sincos_overlap: read_result::<SincosOverlap>(dir, set)?,
            matmul_streams: read_result::<MatmulStreams>(dir, set)?,
            memcpy_kernel: read_result::<MemcpyKernel>(dir, set)?,
        })
    }

    fn is_empty(&self) -> bool {
        self.sincos_overlap.is_none()
            && self.matmul_streams.is_none()
            && self.memcpy_kernel.is_none()
    }
}

/// Everything a results folder holds.
#[derive(Debug, Clone, Default)]
pub struct SavedRun {
    pub summary: Option<RunSummary>,
    pub bounds: Option<<Bounds as Experiment>::Result>,
    pub compare_kernels: Option<<CompareKernels as Experiment>::Result>,
    /// The seed experiments with the Rust kernels.
    pub rust: SeedRuns,
    /// The seed experiments with the CUDA C++ twins.
    pub cuda: SeedRuns,
    pub kernel_concurrency: Option<<KernelConcurrency as Experiment>::Result>,
    pub launch_overhead: Option<<LaunchOverhead as Experiment>::Result>,
    pub graph_overlap: Option<<GraphOverlap as Experiment>::Result>,
    pub overlap_map: Option<<OverlapMap as Experiment>::Result>,
    pub mapped: Option<<Mapped as Experiment>::Result>,
    pub overlap: Option<<Overlap as Experiment>::Result>,
}

impl SavedRun {
    /// Load every result file in `dir`; an error if there are none.
    pub fn load(dir: &Path) -> Result<SavedRun, FolderError> {
        let rust = KernelSet::Rust;
        let run = SavedRun {
            summary: read_json(dir, files::SUMMARY)?,
            bounds: read_result::<Bounds>(dir, rust)?,
            compare_kernels: read_result::<CompareKernels>(dir, rust)?,
            rust: SeedRuns::load(dir, rust)?,
            cuda: SeedRuns::load(dir, KernelSet::Cuda)?,
            kernel_concurrency: read_result::<KernelConcurrency>(dir, rust)?,
            launch_overhead: read_result::<LaunchOverhead>(dir, rust)?,
            graph_overlap: read_result::<GraphOverlap>(dir, rust)?,
            overlap_map: read_result::<OverlapMap>(dir, rust)?,
            mapped: read_result::<Mapped>(dir, rust)?,
            overlap: read_result::<Overlap>(dir, rust)?,
        };
        let nothing = run.bounds.is_none()
            && run.compare_kernels.is_none()
            && run.rust.is_empty()
            && run.cuda.is_empty()
            && run.kernel_concurrency.is_none()
            && run.launch_overhead.is_none()
            && run.graph_overlap.is_none()
            && run.overlap_map.is_none()
            && run.mapped.is_none()
            && run.overlap.is_none();
        if nothing {
            return Err(FolderError::Empty(dir.to_owned()));
        }
        Ok(run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("streamlab-folder-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn files_are_written_whole_and_leave_no_temporary_behind() {
        let dir = scratch("atomic");
        write_atomic(&dir, "a.txt", b"first").unwrap();
        write_atomic(&dir, "a.txt", b"second").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("a.txt")).unwrap(),
            "second"
        );
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let err = write_atomic(&dir.join("missing"), "b.txt", b"x").unwrap_err();
        assert!(err.to_string().starts_with("could not write"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn empty_and_corrupt_folders_are_clear_errors() {
        let dir = scratch("empty");
        let err = SavedRun::load(&dir).unwrap_err();
        assert!(
            err.to_string().contains("holds no streamlab results"),
            "{err}"
        );
        std::fs::write(dir.join("matmul-streams.json"), "{not json").unwrap();
        let err = SavedRun::load(&dir).unwrap_err();
        assert!(
            err.to_string().contains("is not a streamlab result"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
