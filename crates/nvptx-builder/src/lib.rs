//! Builds a `#![no_std]` Rust kernel crate to one PTX module with rustc's own NVPTX
//! backend, from a build script: the part `cuda_builder` plays in Rust-CUDA, with the
//! same shape.
//!
//! ```no_run
//! // In `main` of the build.rs of a host crate whose kernel crate is in `kernels/`,
//! // `my_kernels` (a build dependency too, for its `KERNELS`):
//! # mod my_kernels { pub const KERNELS: [nvptx_kernel::KernelSignature; 0] = []; }
//! nvptx_builder::Builder::new("kernels")
//!     .kernels(&my_kernels::KERNELS)
//!     .build()
//!     .unwrap_or_else(|err| nvptx_builder::fail(&err));
//! ```
//!
//! [`Builder::build`]:
//! 1. finds a toolchain that can build `core` for `nvptx64-nvidia-cuda` ([`toolchain`]);
//! 2. compiles the kernel crate with `-Zbuild-std=core`, fat LTO and `panic = "abort"`,
//!    emitting assembly without linking: one complete `.ptx`. The compiler's output is
//!    shown only when it fails;
//! 3. checks the PTX ([`ptx::check`]): the requested `.target`, no unresolved
//!    `.extern .func`, and, given [`Builder::kernels`], each kernel's `.entry` against
//!    its declaration (the `SIGNATURE` that `#[kernel]` writes), parameter by parameter;
//! 4. writes it to `$OUT_DIR/kernels.ptx` (or [`Builder::copy_to`]) and, in a build
//!    script, prints the `cargo:rerun-if-changed` lines for every source file the kernel
//!    build read and the variables below.
//!
//! The host then embeds it: `include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"))`.
//!
//! Variables: [`toolchain::ARCH_ENV`] (`NVPTX_BUILDER_ARCH`, default `sm_90`),
//! [`toolchain::CARGO_ENV`] and [`toolchain::RUSTC_ENV`] (a toolchain to use). The older
//! `STREAMLAB_*` names still work, with a deprecation warning.
pub mod ptx;
pub mod toolchain;

use std::path::{Path, PathBuf};
use std::process::Command;

use nvptx_kernel::KernelSignature;

pub use ptx::{PtxError, PtxSummary};
pub use toolchain::{KernelToolchain, Probe, ToolchainError};

/// The target triple kernels are compiled for.
pub const TARGET: &str = "nvptx64-nvidia-cuda";
/// The default architecture: the H100 (sm_90) and every later GPU accept its PTX.
pub const DEFAULT_ARCH: &str = "sm_90";
/// The file written into `$OUT_DIR` when no [`Builder::copy_to`] is given.
pub const DEFAULT_FILE: &str = "kernels.ptx";
/// LLVM's inlining threshold for kernel crates (its default is 225). A call on the GPU
/// costs far more than on a CPU: arguments go through parameter space and ptxas must
/// keep registers for the callee, which can halve a kernel's occupancy. NVVM inlines
/// CUDA's math library into every caller; at this threshold LLVM does the same for a
/// math routine called from more than one kernel (the `libm` crate's `sincosf` in
/// kernels-rs's tuned and safe sincos).
pub const INLINE_THRESHOLD: u32 = 1000;

/// Everything that can stop a kernel build; each message names the kernel crate and the
/// fix.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("cannot build the kernel crate at {crate_dir}: {source}")]
    Toolchain {
        crate_dir: PathBuf,
        source: ToolchainError,
    },
    #[error(
        "there is no kernel crate at {0}: Builder::new takes the folder holding its Cargo.toml"
    )]
    NoCrate(PathBuf),
    #[error("could not start `{program}`: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error(
        "the kernel crate at {crate_dir} does not compile for {TARGET}; fix the errors below \
         (kernel crates are #![no_std] and enable feature(abi_gpu_kernel) on nvptx64):\n{output}"
    )]
    Compile { crate_dir: PathBuf, output: String },
    #[error(
        "building the kernel crate at {0} produced no PTX: is it a library with \
         #[kernel] functions?"
    )]
    NoOutput(PathBuf),
    #[error("could not {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the PTX of the kernel crate at {crate_dir} does not match its declarations: {source}")]
    Ptx {
        crate_dir: PathBuf,
        source: Box<PtxError>,
    },
    #[error(
        "invalid GPU architecture `{0}`: expected `sm_` and a number such as sm_90 (set with .arch() or {env})",
        env = toolchain::ARCH_ENV
    )]
    Arch(String),
    #[error("no place for the PTX: outside a build script (no OUT_DIR), call .copy_to(path)")]
    NoDestination,
    #[error("cannot find the kernel crate `{name}` among this crate's dependencies: {why}")]
    Dependency { name: String, why: String },
}

/// A built and checked PTX module.
#[derive(Debug, Clone)]
pub struct Ptx {
    /// Where it was written.
    pub path: PathBuf,
    /// What it declares.
    pub summary: PtxSummary,
}

/// A kernel build: which crate, for which GPU, checked against which declarations,
/// written where.
#[derive(Debug, Clone)]
pub struct Builder {
    crate_dir: PathBuf,
    /// A dependency's name, its folder found when the build starts.
    dependency: Option<String>,
    arch: Option<String>,
    kernels: Vec<KernelSignature>,
    copy_to: Option<PathBuf>,
    probe: Probe,
}

impl Builder {
    /// A build of the kernel crate in `path` (the folder holding its `Cargo.toml`;
    /// relative to the calling crate in a build script).
    pub fn new(path: impl Into<PathBuf>) -> Builder {
        Builder {
            crate_dir: path.into(),
            dependency: None,
            arch: None,
            kernels: Vec::new(),
            copy_to: None,
            probe: Probe::from_env(),
        }
    }

    /// A build of the kernel crate the calling crate depends on as `name` (from
    /// crates.io, git or a path: wherever cargo put its source), found with
    /// `cargo metadata` when the build starts. The calling crate lists it under
    /// `[build-dependencies]` (for its `KERNELS`) or `[dependencies]`.
    pub fn dependency(name: &str) -> Builder {
        Builder {
            dependency: Some(name.to_owned()),
            ..Builder::new(name)
        }
    }

    /// Compile for this architecture (`target-cpu`), e.g. `sm_80`; default
    /// `NVPTX_BUILDER_ARCH`, else [`DEFAULT_ARCH`].
    pub fn arch(mut self, arch: &str) -> Builder {
        self.arch = Some(arch.to_owned());
        self
    }

    /// Check these kernels' entries against their declarations (`#[kernel]` writes one
    /// `SIGNATURE` per kernel; a kernel crate lists them).
    pub fn kernels(mut self, kernels: &[KernelSignature]) -> Builder {
        self.kernels.extend_from_slice(kernels);
        self
    }

    /// Write the PTX to this file instead of `$OUT_DIR/kernels.ptx`.
    pub fn copy_to(mut self, path: impl Into<PathBuf>) -> Builder {
        self.copy_to = Some(path.into());
        self
    }

    /// Look for toolchains with this probe instead of the environment's.
    pub fn probe(mut self, probe: Probe) -> Builder {
        self.probe = probe;
        self
    }

    /// Compile, check and write the PTX (module header).
    pub fn build(mut self) -> Result<Ptx, BuildError> {
        if let Some(name) = self.dependency.take() {
            self.crate_dir = dependency_dir(&name)?;
        }
        let in_build_script = std::env::var_os("OUT_DIR").is_some();
        for note in toolchain::deprecation_notes() {
            if in_build_script {
                println!("cargo:warning={note}");
            } else {
                eprintln!("warning: {note}");
            }
        }
        let arch = self.arch.clone().unwrap_or_else(|| {
            toolchain::env_var(toolchain::ARCH_ENV)
                .map(|v| v.to_string_lossy().into_owned())
                .unwrap_or_else(|| DEFAULT_ARCH.to_owned())
        });
        check_arch(&arch)?;
        let destination = match (&self.copy_to, std::env::var_os("OUT_DIR")) {
            (Some(path), _) => path.clone(),
            (None, Some(out)) => PathBuf::from(out).join(DEFAULT_FILE),
            (None, None) => return Err(BuildError::NoDestination),
        };
        let manifest = self.crate_dir.join("Cargo.toml");
        if !manifest.is_file() {
            return Err(BuildError::NoCrate(self.crate_dir.clone()));
        }
        let toolchain = toolchain::locate(&self.probe).map_err(|source| BuildError::Toolchain {
            crate_dir: self.crate_dir.clone(),
            source,
        })?;
        let work = match std::env::var_os("OUT_DIR") {
            Some(out) => PathBuf::from(out),
            None => destination
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_owned),
        };
        let target_dir = work.join("nvptx-target");
        self.compile(&toolchain, &arch, &target_dir)?;
        let release = target_dir.join(TARGET).join("release");
        let asm = newest_with_extension(&release.join("deps"), "s")
            .ok_or_else(|| BuildError::NoOutput(self.crate_dir.clone()))?;
        let text = read(&asm)?;
        let summary =
            ptx::check(&text, &arch, &self.kernels).map_err(|source| BuildError::Ptx {
                crate_dir: self.crate_dir.clone(),
                source: Box::new(source),
            })?;
        if let Some(parent) = destination.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| BuildError::Io {
                action: "create",
                path: parent.to_owned(),
                source,
            })?;
        }
        std::fs::write(&destination, &text).map_err(|source| BuildError::Io {
            action: "write",
            path: destination.clone(),
            source,
        })?;
        if in_build_script {
            self.emit_rerun_directives(&release);
        }
        Ok(Ptx {
            path: destination,
            summary,
        })
    }

    fn compile(
        &self,
        toolchain: &KernelToolchain,
        arch: &str,
        target_dir: &Path,
    ) -> Result<(), BuildError> {
        let mut cmd = Command::new(&toolchain.cargo);
        cmd.arg("rustc")
            .arg("--release")
            .arg("--quiet")
            .arg("--manifest-path")
            .arg(self.crate_dir.join("Cargo.toml"))
            .args([
                "--target",
                TARGET,
                "-Zbuild-std=core",
                "--crate-type",
                "cdylib",
            ])
            .arg("--target-dir")
            .arg(target_dir)
            .args(["--config", "profile.release.lto=\"fat\""])
            .args(["--config", "profile.release.panic=\"abort\""])
            .args(["--config", "profile.release.codegen-units=1"])
            .args(["--config", "profile.release.opt-level=3"])
            .args(["--", "--emit=asm", "-Zno-link", "-C"])
            .arg(format!("llvm-args=-inline-threshold={INLINE_THRESHOLD}"))
            .arg("-C")
            .arg(format!("target-cpu={arch}"));
        // The child build must not inherit the host build's flags, wrappers or folders.
        for (var, _) in std::env::vars_os() {
            let var = var.to_string_lossy();
            if inherited_build_setting(&var) {
                cmd.env_remove(var.as_ref());
            }
        }
        cmd.env("RUSTC", &toolchain.rustc)
            .env("RUSTC_BOOTSTRAP", "1");
        let output = cmd.output().map_err(|source| BuildError::Spawn {
            program: toolchain.cargo.display().to_string(),
            source,
        })?;
        if output.status.success() {
            Ok(())
        } else {
            Err(BuildError::Compile {
                crate_dir: self.crate_dir.clone(),
                output: String::from_utf8_lossy(&output.stderr).into_owned(),
            })
        }
    }

    /// Make the calling build script run again when a source file the kernel build read,
    /// the kernel crate's manifest or a variable of the builder changes.
    fn emit_rerun_directives(&self, release: &Path) {
        println!(
            "cargo:rerun-if-changed={}",
            self.crate_dir.join("Cargo.toml").display()
        );
        println!(
            "cargo:rerun-if-changed={}",
            self.crate_dir.join("src").display()
        );
        let sources = newest_with_extension(release, "d")
            .and_then(|d| std::fs::read_to_string(d).ok())
            .map(|text| dep_info_sources(&text))
            .unwrap_or_default();
        for source in sources {
            println!("cargo:rerun-if-changed={source}");
        }
        for (old, new) in toolchain::DEPRECATED_ENV {
            println!("cargo:rerun-if-env-changed={new}");
            println!("cargo:rerun-if-env-changed={old}");
        }
    }
}

/// The source files of a dep-info file (`out: src src …`), outside the toolchain's own
/// library source.
fn dep_info_sources(text: &str) -> Vec<String> {
    let Some(first) = text.lines().find(|l| l.contains(": ")) else {
        return Vec::new();
    };
    let sources = first.split_once(": ").map_or("", |(_, s)| s);
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = sources.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => {
                current.push(' ');
                chars.next();
            }
            ' ' => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out.retain(|s| !s.contains("/lib/rustlib/"));
    out
}

/// Whether an environment variable belongs to the host build (flags, wrappers, folders,
/// toolchain choice) rather than to the user's cargo setup (home, network, registries).
fn inherited_build_setting(var: &str) -> bool {
    const KEEP: [&str; 4] = ["CARGO_HOME", "CARGO_NET_", "CARGO_HTTP_", "CARGO_REGISTR"];
    let build = var.starts_with("CARGO_") || var.starts_with("RUSTC") || var.starts_with("RUSTUP_");
    let cargo_setup = KEEP.iter().any(|keep| var.starts_with(keep));
    (build && !cargo_setup) || ["RUSTFLAGS", "RUSTDOCFLAGS", "CARGO", "RUSTDOC"].contains(&var)
}

/// The folder of the package `name` among the calling crate's dependencies (the crate
/// whose build script runs, else the current folder's), from `cargo metadata`.
fn dependency_dir(name: &str) -> Result<PathBuf, BuildError> {
    let not_found = |why: String| BuildError::Dependency {
        name: name.to_owned(),
        why,
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let dir =
        std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from("."), PathBuf::from);
    let metadata = |no_deps: bool| {
        let mut metadata = Command::new(&cargo);
        metadata.args(["metadata", "--format-version", "1", "--offline"]);
        if no_deps {
            metadata.arg("--no-deps");
        }
        metadata.arg("--manifest-path").arg(dir.join("Cargo.toml"));
        // Only the packages built for this platform, whose sources cargo has fetched.
        if let Some(target) = std::env::var_os("TARGET") {
            metadata.arg("--filter-platform").arg(target);
        }
        metadata.output().map_err(|source| BuildError::Spawn {
            program: format!("{} metadata", cargo.to_string_lossy()),
            source,
        })
    };
    // Every package of the resolve where cargo has them all; where it has not fetched
    // some (a dev-dependency nothing has built yet), the workspace's own packages, which
    // a kernel crate beside its host usually is.
    let mut output = metadata(false)?;
    if !output.status.success() {
        let members = metadata(true)?;
        if members.status.success() && has_package(&members.stdout, name) {
            output = members;
        }
    }
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(not_found(format!(
            "`cargo metadata` failed: {}",
            stderr.trim()
        )));
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| not_found(format!("`cargo metadata` printed no JSON: {e}")))?;
    let found: Vec<(&str, &str)> = (metadata["packages"].as_array().into_iter().flatten())
        .filter(|p| p["name"] == name)
        .filter_map(|p| Some((p["version"].as_str()?, p["manifest_path"].as_str()?)))
        .collect();
    match found.as_slice() {
        [(_, manifest)] => Ok(Path::new(manifest)
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)),
        [] => Err(not_found(
            "no package of that name: add it under [build-dependencies]".to_owned(),
        )),
        several => Err(not_found(format!(
            "versions {} are all there: name its folder with Builder::new",
            (several.iter().map(|(v, _)| *v))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Whether `cargo metadata`'s JSON `stdout` lists a package named `name`.
fn has_package(stdout: &[u8], name: &str) -> bool {
    serde_json::from_slice::<serde_json::Value>(stdout)
        .is_ok_and(|m| (m["packages"].as_array().into_iter().flatten()).any(|p| p["name"] == name))
}

/// Report a build error from a build script as one clear error and stop the build.
pub fn fail(err: &BuildError) -> ! {
    let text = err.to_string();
    let mut lines = text.lines();
    println!("cargo::error={}", lines.next().unwrap_or_default());
    for line in lines {
        println!("cargo::error={line}");
    }
    std::process::exit(1)
}

fn check_arch(arch: &str) -> Result<(), BuildError> {
    match arch.strip_prefix("sm_") {
        Some(n) if !n.is_empty() && n.trim_end_matches('a').chars().all(|c| c.is_ascii_digit()) => {
            Ok(())
        }
        _ => Err(BuildError::Arch(arch.to_owned())),
    }
}

fn read(path: &Path) -> Result<String, BuildError> {
    std::fs::read_to_string(path).map_err(|source| BuildError::Io {
        action: "read",
        path: path.to_owned(),
        source,
    })
}

/// The newest file in `dir` with extension `ext`.
fn newest_with_extension(dir: &Path, ext: &str) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == ext))
        .max_by_key(|path| path.metadata().and_then(|m| m.modified()).ok())
}

/// The README's examples, compiled and run as this crate's doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architecture_must_be_sm_and_a_number() {
        assert!(check_arch("sm_90").is_ok());
        assert!(check_arch("sm_90a").is_ok());
        assert!(check_arch("sm_").is_err());
        assert!(check_arch("compute_90").is_err());
        let err = check_arch("sm_9x").unwrap_err().to_string();
        assert!(err.contains("NVPTX_BUILDER_ARCH"), "{err}");
    }

    #[test]
    fn missing_toolchain_names_the_crate_and_the_fix() {
        let empty = std::env::temp_dir().join("nvptx-builder-no-toolchain");
        std::fs::create_dir_all(&empty).unwrap();
        std::fs::write(empty.join("Cargo.toml"), "[package]\nname = \"k\"\n").unwrap();
        let err = Builder::new(&empty)
            .copy_to(empty.join("k.ptx"))
            .probe(Probe::nowhere(&empty))
            .build()
            .unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, BuildError::Toolchain { .. }), "{message}");
        assert!(message.contains(&empty.display().to_string()), "{message}");
        assert!(message.contains("rust-src"), "{message}");
    }

    #[test]
    fn a_folder_without_a_crate_is_refused() {
        let err = Builder::new("/nonexistent/kernels")
            .copy_to("/tmp/x.ptx")
            .build()
            .unwrap_err();
        assert!(matches!(err, BuildError::NoCrate(_)), "{err}");
        assert!(err.to_string().contains("/nonexistent/kernels"));
    }

    #[test]
    fn child_build_drops_host_build_settings_but_keeps_cargo_home() {
        for var in [
            "CARGO_ENCODED_RUSTFLAGS",
            "CARGO_TARGET_DIR",
            "RUSTC_WRAPPER",
            "RUSTFLAGS",
            "CARGO",
        ] {
            assert!(inherited_build_setting(var), "{var}");
        }
        for var in [
            "CARGO_HOME",
            "CARGO_NET_OFFLINE",
            "CARGO_REGISTRIES_CRATES_IO_PROTOCOL",
            "PATH",
        ] {
            assert!(!inherited_build_setting(var), "{var}");
        }
    }

    #[test]
    fn dep_info_lists_the_local_sources() {
        let text = "/t/release/k.ptx: /w/k/src/lib.rs /w/my\\ dir/a.rs \
                    /usr/lib/rustlib/src/rust/library/core/src/lib.rs\n\n/w/k/src/lib.rs:\n";
        assert_eq!(
            dep_info_sources(text),
            ["/w/k/src/lib.rs", "/w/my dir/a.rs"]
        );
    }
}
