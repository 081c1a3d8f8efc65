//! A results folder: every file written whole (to a temporary name, then renamed), and
//! every saved result read back, so the report can be rendered again from the files.
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::experiment::Experiment;
use crate::saved::{KernelSet, files};

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
}
