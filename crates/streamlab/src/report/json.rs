//! Reading and writing the JSON result files. A results folder always holds at least one
//! experiment run with the Rust kernels; the measured bounds, the kernel comparison and the
//! same experiments run with the CUDA C++ kernels are there when the run made them.
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{ReportError, write_file};
use crate::results::{
    Bounds, KernelComparison, MatmulStreamsResult, MemcpyKernelResult, Provenance, RunSummary,
    SincosOverlapResult, files,
};

/// Write `value` as pretty JSON to `dir/name`.
pub fn write<T: Serialize>(dir: &Path, name: &str, value: &T) -> Result<(), ReportError> {
    let text = serde_json::to_string_pretty(value).expect("results serialise");
    write_file(dir, name, &text)
}

/// Read `dir/name` if it exists.
pub fn read<T: DeserializeOwned>(dir: &Path, name: &str) -> Result<Option<T>, ReportError> {
    let path = dir.join(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ReportError::Io {
                action: "read",
                path,
                source,
            });
        }
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|source| ReportError::Json { path, source })
}

/// Everything a results folder holds.
#[derive(Debug, Clone, Default)]
pub struct SavedRun {
    pub summary: Option<RunSummary>,
    pub matmul_streams: Option<MatmulStreamsResult>,
    pub memcpy_kernel: Option<MemcpyKernelResult>,
    pub sincos_overlap: Option<SincosOverlapResult>,
    /// `bounds.json`: the copy bandwidths and launch overhead.
    pub bounds: Option<Bounds>,
    /// `kernel-comparison.json`: each kernel timed as Rust and as CUDA C++.
    pub kernel_comparison: Option<KernelComparison>,
    /// The experiments run with the CUDA C++ kernels (`<experiment>-cuda.json`).
    pub cuda: CudaRuns,
}

/// The experiments of a results folder run with the CUDA C++ kernels.
#[derive(Debug, Clone, Default)]
pub struct CudaRuns {
    pub matmul_streams: Option<MatmulStreamsResult>,
    pub memcpy_kernel: Option<MemcpyKernelResult>,
    pub sincos_overlap: Option<SincosOverlapResult>,
}

/// `value` read from `dir/name`, refused unless its kernels are the CUDA C++ ones.
fn read_cuda<T: DeserializeOwned>(
    dir: &Path,
    name: &str,
    provenance: fn(&T) -> &Provenance,
) -> Result<Option<T>, ReportError> {
    let value: Option<T> = read(dir, name)?;
    match value.as_ref().map(|v| provenance(v).kernels.as_str()) {
        Some(kernels) if kernels != "cuda" => Err(ReportError::Invalid(format!(
            "{} was measured with the {kernels:?} kernels, not the CUDA C++ ones",
            dir.join(name).display()
        ))),
        _ => Ok(value),
    }
}

impl SavedRun {
    /// Load every result file in `dir`; an error if there are none.
    pub fn load(dir: &Path) -> Result<SavedRun, ReportError> {
        let run = SavedRun {
            summary: read(dir, files::SUMMARY)?,
            matmul_streams: read(dir, files::MATMUL_STREAMS)?,
            memcpy_kernel: read(dir, files::MEMCPY_KERNEL)?,
            sincos_overlap: read(dir, files::SINCOS_OVERLAP)?,
            bounds: read(dir, files::BOUNDS)?,
            kernel_comparison: read(dir, files::KERNEL_COMPARISON)?,
            cuda: CudaRuns {
                matmul_streams: read_cuda::<MatmulStreamsResult>(
                    dir,
                    files::MATMUL_STREAMS_CUDA,
                    |r| &r.provenance,
                )?,
                memcpy_kernel: read_cuda::<MemcpyKernelResult>(
                    dir,
                    files::MEMCPY_KERNEL_CUDA,
                    |r| &r.provenance,
                )?,
                sincos_overlap: read_cuda::<SincosOverlapResult>(
                    dir,
                    files::SINCOS_OVERLAP_CUDA,
                    |r| &r.provenance,
                )?,
            },
        };
        if run.matmul_streams.is_none()
            && run.memcpy_kernel.is_none()
            && run.sincos_overlap.is_none()
        {
            return Err(ReportError::Empty(dir.to_owned()));
        }
        Ok(run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_corrupt_folders_are_clear_errors() {
        let dir = std::env::temp_dir().join(format!("streamlab-json-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let err = SavedRun::load(&dir).unwrap_err();
        assert!(
            err.to_string().contains("holds no streamlab results"),
            "{err}"
        );
        std::fs::write(dir.join(files::MATMUL_STREAMS), "{not json").unwrap();
        let err = SavedRun::load(&dir).unwrap_err();
        assert!(
            err.to_string().contains("is not a streamlab result"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
