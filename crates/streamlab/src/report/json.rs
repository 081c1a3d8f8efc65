//! Reading and writing the JSON result files.
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{ReportError, write_file};
use crate::results::{
    MatmulStreamsResult, MemcpyKernelResult, RunSummary, SincosOverlapResult, files,
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
}

impl SavedRun {
    /// Load every result file in `dir`; an error if there are none.
    pub fn load(dir: &Path) -> Result<SavedRun, ReportError> {
        let run = SavedRun {
            summary: read(dir, files::SUMMARY)?,
            matmul_streams: read(dir, files::MATMUL_STREAMS)?,
            memcpy_kernel: read(dir, files::MEMCPY_KERNEL)?,
            sincos_overlap: read(dir, files::SINCOS_OVERLAP)?,
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
