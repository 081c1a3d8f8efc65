//! A results folder on disk: every file written whole, whole folders of output staged
//! beside their place ([`Staged`]), and every saved file read back with any fault named
//! precisely (the file, and the position or the field).
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// The format of the files this build writes, saved in each as `"format"`. Files without
/// the field are format 1 (streamlab up to 2026-11-25), which this build reads too.
pub const FORMAT: u32 = 2;

#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    #[error("could not {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not write {path} as JSON: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error(
        "{path} ends early, at line {line} column {column}: the file is truncated (copy it again, or run the experiment again)"
    )]
    Truncated {
        path: PathBuf,
        line: usize,
        column: usize,
    },
    #[error("{path} is not JSON: {reason} at line {line} column {column}")]
    NotJson {
        path: PathBuf,
        line: usize,
        column: usize,
        reason: String,
    },
    #[error(
        "{path}: {field} {reason}: the file was not written by this streamlab, or was edited since; run the experiment again, or render the folder with the streamlab that wrote it"
    )]
    Field {
        path: PathBuf,
        field: String,
        reason: String,
    },
    #[error(
        "{path} is in format {found}, newer than this build reads (up to {FORMAT}): read it with the streamlab that wrote it, or a newer one"
    )]
    Newer { path: PathBuf, found: u64 },
    #[error("{0} holds no streamlab results (no experiment JSON): name a folder written by a run")]
    Empty(PathBuf),
    #[error("{0} does not exist: name a results folder written by streamlab")]
    Missing(PathBuf),
    #[error("{0} is not a folder: name a results folder written by streamlab")]
    NotAResultsFolder(PathBuf),
    #[error("{path} was measured with the {found} kernels, but its name says {expected}")]
    WrongKernels {
        path: PathBuf,
        found: &'static str,
        expected: &'static str,
    },
    #[error(
        "{dir} holds more than one run: {first} is from {first_run}, {other} from {other_run}; keep each run in a folder of its own"
    )]
    MixedRuns {
        dir: PathBuf,
        first: String,
        first_run: String,
        other: String,
        other_run: String,
    },
    #[error(
        "{dir} holds files the output must not replace ({names}): name an empty or new folder for the output"
    )]
    Foreign { dir: PathBuf, names: String },
    #[error("{0} is not a folder: name a folder for the output")]
    NotAFolder(PathBuf),
}

impl FolderError {
    /// The failure of `action` ("read", "write") on `path`.
    fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> FolderError {
        let path = path.to_owned();
        move |source| FolderError::Io {
            action,
            path,
            source,
        }
    }

    /// Whether the fault is in what the user named (a folder or a file in it), not the
    /// machine: exit code 2.
    pub fn is_usage(&self) -> bool {
        !matches!(self, FolderError::Io { .. } | FolderError::Json { .. })
    }
}

/// Write `contents` to `dir/name` whole: into a temporary file beside it, then renamed
/// over the name, so a reader (or an interrupted run) never sees half a file.
pub fn write_atomic(dir: &Path, name: &str, contents: &[u8]) -> Result<(), FolderError> {
    let path = dir.join(name);
    let temporary = dir.join(format!(".{name}.{}.partial", std::process::id()));
    std::fs::write(&temporary, contents).map_err(FolderError::io("write", &path))?;
    std::fs::rename(&temporary, &path).map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        FolderError::io("rename into", &path)(e)
    })
}

/// `value` as pretty JSON, its format first.
pub fn to_json<T: Serialize>(name: &str, value: &T) -> Result<String, FolderError> {
    #[derive(Serialize)]
    struct Versioned<'a, T: Serialize> {
        format: u32,
        #[serde(flatten)]
        value: &'a T,
    }
    serde_json::to_string_pretty(&Versioned {
        format: FORMAT,
        value,
    })
    .map_err(|source| FolderError::Json {
        path: name.into(),
        source,
    })
}

/// Read `dir/name` as JSON of type `T` ([`parse`]), `None` if there is no such file.
pub fn read_json<T: DeserializeOwned>(dir: &Path, name: &str) -> Result<Option<T>, FolderError> {
    let path = dir.join(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(FolderError::io("read", &path)(source)),
    };
    parse(&path, &text).map(Some)
}

/// `text`, the contents of `path`, as `T`: first as JSON (a truncated or malformed file
/// says where), then its format (a newer one says so), then every field (a missing or
/// wrongly typed one is named by its path, e.g. `device.sm_count`).
pub fn parse<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, FolderError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        if e.is_eof() {
            FolderError::Truncated {
                path: path.to_owned(),
                line: e.line(),
                column: e.column(),
            }
        } else {
            // serde's text less its " at line L column C", which the error says itself.
            let mut reason = e.to_string();
            reason.truncate(reason.find(" at line ").unwrap_or(reason.len()));
            FolderError::NotJson {
                path: path.to_owned(),
                line: e.line(),
                column: e.column(),
                reason,
            }
        }
    })?;
    if let Some(found) = value.get("format").and_then(serde_json::Value::as_u64)
        && found > u64::from(FORMAT)
    {
        return Err(FolderError::Newer {
            path: path.to_owned(),
            found,
        });
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let at = e.path().to_string();
        let reason = e.into_inner().to_string();
        // serde says "missing field `name`" of the object at `at`: name the field itself.
        let (field, reason) = match reason.strip_prefix("missing field `") {
            Some(rest) => {
                let name = rest.trim_end_matches('`');
                let field = match at.as_str() {
                    "." => name.to_owned(),
                    at => format!("{at}.{name}"),
                };
                (field, "is missing".to_owned())
            }
            None => (at, format!("cannot be read ({})", reason.replace('`', "'"))),
        };
        FolderError::Field {
            path: path.to_owned(),
            field: format!("field \"{field}\""),
            reason,
        }
    })
}

/// What a file of a folder an output would replace is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// Rendered output (a report, a chart, a CSV, a trace, a comparison): replaced freely.
    Output,
    /// A run's measured results (an experiment's JSON, `summary.json`): replaced only by
    /// the same run rendered again in place.
    Results,
    /// Anything else: never replaced.
    Foreign,
}

/// A folder of output being written: filled in a fresh folder beside `target`, and moved
/// into place only by [`Staged::finish`], so `target` never holds half an output nor
/// another output's leftovers. Dropped unfinished, the staged folder is removed and
/// `target` is as it was. Where no folder can be made beside `target` (its parent is
/// read-only), or `target` cannot be moved (a mount point), the files go into `target`
/// itself, each whole, and the old output's other files are removed at the end.
#[derive(Debug)]
pub struct Staged {
    target: PathBuf,
    /// The fresh folder, `None` when writing into `target` itself.
    staging: Option<PathBuf>,
    /// What a file of an output is ([`Held`]).
    held: fn(&str) -> Held,
    written: Vec<String>,
    finished: bool,
}

/// The names of the entries of `dir`, sorted; none where it does not exist.
pub fn names(dir: &Path) -> Result<Vec<String>, FolderError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(FolderError::io("read", dir)(source)),
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names)
}

impl Staged {
    /// Begin an output that will replace `target`. `held` says what each file name is:
    /// an existing `target` holding a file that is not an output is refused, a run's
    /// results included unless `results_replaced` (the same run rendered again in place),
    /// so nothing else is lost.
    pub fn begin(
        target: &Path,
        held: fn(&str) -> Held,
        results_replaced: bool,
    ) -> Result<Staged, FolderError> {
        let target = match std::fs::metadata(target) {
            Ok(m) if !m.is_dir() => return Err(FolderError::NotAFolder(target.to_owned())),
            Ok(_) => target
                .canonicalize()
                .map_err(FolderError::io("read", target))?,
            Err(_) => target.to_owned(),
        };
        let refused: Vec<String> = (names(&target)?.into_iter())
            .filter(|n| match held(n) {
                Held::Output => false,
                Held::Results => !results_replaced,
                Held::Foreign => true,
            })
            .collect();
        if !refused.is_empty() {
            return Err(FolderError::Foreign {
                dir: target,
                names: refused.join(", "),
            });
        }
        let name = target
            .file_name()
            .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
            _ => PathBuf::from("."),
        };
        let _ = std::fs::create_dir_all(&parent);
        let staging = parent.join(format!(".{name}.{}.partial", std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        let staging = match std::fs::create_dir(&staging) {
            Ok(()) => Some(staging),
            Err(_) => {
                std::fs::create_dir_all(&target).map_err(FolderError::io("create", &target))?;
                None
            }
        };
        Ok(Staged {
            target,
            staging,
            held,
            written: Vec::new(),
            finished: false,
        })
    }

    /// Write one file of the output.
    pub fn write(&mut self, name: &str, contents: &[u8]) -> Result<(), FolderError> {
        match &self.staging {
            Some(dir) => {
                let path = dir.join(name);
                std::fs::write(&path, contents).map_err(FolderError::io("write", &path))?;
            }
            None => write_atomic(&self.target, name, contents)?,
        }
        self.written.push(name.to_owned());
        Ok(())
    }

    /// Move the finished output into place, replacing what `target` held.
    pub fn finish(mut self) -> Result<PathBuf, FolderError> {
        if let Some(staging) = self.staging.clone() {
            let old = staging.with_extension("old");
            let aside = !self.target.exists() || std::fs::rename(&self.target, &old).is_ok();
            if aside {
                if let Err(e) = std::fs::rename(&staging, &self.target) {
                    let _ = std::fs::rename(&old, &self.target);
                    return Err(FolderError::io("move into place", &self.target)(e));
                }
                self.finished = true;
                let _ = std::fs::remove_dir_all(&old);
                return Ok(self.target.clone());
            }
            // The target cannot be moved: its files are replaced one by one.
            for name in &self.written {
                let path = staging.join(name);
                let contents = std::fs::read(&path).map_err(FolderError::io("read", &path))?;
                write_atomic(&self.target, name, &contents)?;
            }
        }
        for name in names(&self.target)? {
            if (self.held)(&name) != Held::Foreign && !self.written.contains(&name) {
                let _ = std::fs::remove_file(self.target.join(&name));
            }
        }
        self.finished = true;
        if let Some(staging) = &self.staging {
            let _ = std::fs::remove_dir_all(staging);
        }
        Ok(self.target.clone())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(staging) = self.staging.as_ref().filter(|_| !self.finished) {
            let _ = std::fs::remove_dir_all(staging);
        }
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

    fn read(path: PathBuf) -> String {
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn files_and_staged_outputs_replace_their_targets_whole_or_not_at_all() {
        let dir = scratch("staged");
        let target = dir.join("out");
        std::fs::create_dir_all(&target).unwrap();
        std::fs::write(target.join("report.md"), "old").unwrap();
        std::fs::write(target.join("stale.svg"), "old").unwrap();
        fn held(n: &str) -> Held {
            match n {
                "results.json" => Held::Results,
                n if n.ends_with(".md") || n.ends_with(".svg") => Held::Output,
                _ => Held::Foreign,
            }
        }
        let write = |target: &Path, replaced: bool, name: &str, contents: &str| {
            let mut staged = Staged::begin(target, held, replaced).unwrap();
            staged.write(name, contents.as_bytes()).unwrap();
            staged
        };
        // Abandoned part way: the target is untouched and nothing is left beside it.
        drop(write(&target, false, "report.md", "new"));
        assert_eq!(read(target.join("report.md")), "old");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        // Finished: exactly the new files.
        write(&target, false, "report.md", "new").finish().unwrap();
        assert_eq!(read(target.join("report.md")), "new");
        assert!(!target.join("stale.svg").exists());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        // A run's results are replaced only by the same run rendered in place.
        std::fs::write(target.join("results.json"), "measured").unwrap();
        let err = Staged::begin(&target, held, false).unwrap_err().to_string();
        assert!(err.contains("results.json"), "{err}");
        write(&target, true, "results.json", "again")
            .finish()
            .unwrap();
        // "." is the folder itself, not a child of it.
        let here = std::env::current_dir().unwrap();
        std::env::set_current_dir(&target).unwrap();
        let finished = write(Path::new("."), true, "report.md", "dot").finish();
        std::env::set_current_dir(here).unwrap();
        assert_eq!(finished.unwrap(), target.canonicalize().unwrap());
        assert_eq!(read(target.join("report.md")), "dot");
        // A folder holding someone else's file is refused; a file is not a folder.
        std::fs::write(target.join("notes.txt"), "mine").unwrap();
        let err = Staged::begin(&target, held, true).unwrap_err().to_string();
        assert!(err.contains("notes.txt"), "{err}");
        let err = Staged::begin(&target.join("notes.txt"), held, true).unwrap_err();
        assert!(err.to_string().contains("is not a folder"), "{err}");
        // A single file is written whole and leaves no temporary behind.
        let whole = dir.join("whole");
        std::fs::create_dir(&whole).unwrap();
        write_atomic(&whole, "a.txt", b"first").unwrap();
        write_atomic(&whole, "a.txt", b"second").unwrap();
        assert_eq!(read(whole.join("a.txt")), "second");
        assert_eq!(names(&whole).unwrap(), ["a.txt"]);
        let err = write_atomic(&dir.join("missing"), "b.txt", b"x").unwrap_err();
        assert!(err.to_string().starts_with("could not write"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
