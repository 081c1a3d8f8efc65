//! Builds a `#![no_std]` Rust kernel crate to one PTX module, from a host crate's
//! `build.rs`, the part `cuda_builder` plays in Rust-CUDA.
//!
//! 1. Find a kernel toolchain ([`toolchain::locate`]): an explicit override, a rustup
//!    toolchain with `rust-src`, or Debian's `rustc-web` packages.
//! 2. Compile the kernel crate for `nvptx64-nvidia-cuda` with `-Zbuild-std=core`, fat LTO
//!    and `panic = "abort"`, emitting assembly without linking: one complete `.ptx`.
//! 3. Check the PTX ([`ptx::validate`]): every expected `.entry` with its parameter count,
//!    the requested `.target`, and no unresolved `.extern .func`.
//!
//! ```no_run
//! // build.rs
//! let ptx = ptx_builder::PtxBuilder::new("../../kernels-rs")
//!     .kernel("fill", 4)
//!     .build()
//!     .unwrap_or_else(|err| ptx_builder::fail_build_script(&err));
//! println!("cargo:rustc-env=KERNELS_PTX={}", ptx.display());
//! ```
pub mod ptx;
pub mod toolchain;

use std::path::{Path, PathBuf};
use std::process::Command;

pub use ptx::{PtxError, PtxSummary};
pub use toolchain::{KernelToolchain, Probe, ToolchainError};

/// The target triple kernels are compiled for.
pub const TARGET: &str = "nvptx64-nvidia-cuda";
/// The default `target-cpu`: the H100 (sm_90) and every later GPU accept its PTX.
pub const DEFAULT_TARGET_CPU: &str = "sm_90";
/// Environment variable that overrides the `target-cpu` (e.g. `sm_80`).
pub const TARGET_CPU_ENV: &str = "STREAMLAB_TARGET_CPU";

/// Everything that can stop a kernel build.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Toolchain(#[from] ToolchainError),
    #[error("could not start `{program}`: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("the kernel crate failed to compile for {TARGET} (see the compiler output above)")]
    Compile,
    #[error("the kernel build produced no PTX file in {0}")]
    NoOutput(PathBuf),
    #[error("could not {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid PTX from the kernel crate: {0}")]
    Ptx(#[from] PtxError),
    #[error(
        "invalid target-cpu `{0}` in {TARGET_CPU_ENV}: expected `sm_` and a number such as sm_90"
    )]
    TargetCpu(String),
}

/// A kernel build: which crate, which entries it must export, which GPU to target.
#[derive(Debug, Clone)]
pub struct PtxBuilder {
    crate_dir: PathBuf,
    kernels: Vec<(String, usize)>,
    target_cpu: String,
    out_dir: Option<PathBuf>,
    probe: Probe,
}

impl PtxBuilder {
    /// A build of the kernel crate at `crate_dir` (the folder holding its `Cargo.toml`).
    /// The target CPU comes from `STREAMLAB_TARGET_CPU`, else [`DEFAULT_TARGET_CPU`].
    pub fn new(crate_dir: impl Into<PathBuf>) -> Self {
        PtxBuilder {
            crate_dir: crate_dir.into(),
            kernels: Vec::new(),
            target_cpu: std::env::var(TARGET_CPU_ENV)
                .unwrap_or_else(|_| DEFAULT_TARGET_CPU.to_owned()),
            out_dir: None,
            probe: Probe::from_env(),
        }
    }

    /// Require an entry point `name` taking `params` parameters.
    pub fn kernel(mut self, name: &str, params: usize) -> Self {
        self.kernels.push((name.to_owned(), params));
        self
    }

    /// Compile for this `target-cpu` instead (e.g. `sm_80`).
    pub fn target_cpu(mut self, cpu: &str) -> Self {
        self.target_cpu = cpu.to_owned();
        self
    }

    /// Write into `dir` instead of the build script's `OUT_DIR`.
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Look for toolchains with this probe instead of the environment's.
    pub fn probe(mut self, probe: Probe) -> Self {
        self.probe = probe;
        self
    }

    /// Print the `cargo:` lines that make the calling build script rerun when the kernel
    /// sources or the build options change.
    pub fn emit_rerun_directives(&self) {
        println!(
            "cargo:rerun-if-changed={}",
            self.crate_dir.join("src").display()
        );
        println!(
            "cargo:rerun-if-changed={}",
            self.crate_dir.join("Cargo.toml").display()
        );
        for var in [TARGET_CPU_ENV, toolchain::CARGO_ENV, toolchain::RUSTC_ENV] {
            println!("cargo:rerun-if-env-changed={var}");
        }
    }

    /// Compile, validate, and write `kernels.ptx` into the output folder; returns its path.
    pub fn build(&self) -> Result<PathBuf, BuildError> {
        check_target_cpu(&self.target_cpu)?;
        let out_dir = match &self.out_dir {
            Some(dir) => dir.clone(),
            None => PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_else(|| ".".into())),
        };
        let toolchain = toolchain::locate(&self.probe)?;
        let target_dir = out_dir.join("kernels-target");
        self.compile(&toolchain, &target_dir)?;
        let asm = find_asm(&target_dir.join(TARGET).join("release").join("deps"))?;
        let text = std::fs::read_to_string(&asm).map_err(|source| BuildError::Io {
            action: "read",
            path: asm.clone(),
            source,
        })?;
        ptx::validate(&text, &self.target_cpu, &self.kernels)?;
        let ptx_path = out_dir.join("kernels.ptx");
        std::fs::write(&ptx_path, &text).map_err(|source| BuildError::Io {
            action: "write",
            path: ptx_path.clone(),
            source,
        })?;
        Ok(ptx_path)
    }

    fn compile(&self, toolchain: &KernelToolchain, target_dir: &Path) -> Result<(), BuildError> {
        let mut cmd = Command::new(&toolchain.cargo);
        cmd.arg("rustc")
            .arg("--release")
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
            .arg(format!("target-cpu={}", self.target_cpu));
        // The child build must not inherit the host build's flags, wrappers or folders.
        for (var, _) in std::env::vars_os() {
            let var = var.to_string_lossy();
            if inherited_build_setting(&var) {
                cmd.env_remove(var.as_ref());
            }
        }
        cmd.env("RUSTC", &toolchain.rustc)
            .env("RUSTC_BOOTSTRAP", "1");
        let status = cmd.status().map_err(|source| BuildError::Spawn {
            program: toolchain.cargo.display().to_string(),
            source,
        })?;
        if status.success() {
            Ok(())
        } else {
            Err(BuildError::Compile)
        }
    }
}

/// Whether an environment variable belongs to the host build (flags, wrappers, folders,
/// toolchain choice) rather than to the user's cargo setup (home, network, registries).
fn inherited_build_setting(var: &str) -> bool {
    const KEEP: [&str; 4] = ["CARGO_HOME", "CARGO_NET_", "CARGO_HTTP_", "CARGO_REGISTR"];
    let build = var.starts_with("CARGO_") || var.starts_with("RUSTC") || var.starts_with("RUSTUP_");
    let cargo_setup = KEEP.iter().any(|keep| var.starts_with(keep));
    (build && !cargo_setup) || ["RUSTFLAGS", "RUSTDOCFLAGS", "CARGO", "RUSTDOC"].contains(&var)
}

/// Report a build error from a build script as one clear message and stop the build.
pub fn fail_build_script(err: &BuildError) -> ! {
    println!("cargo::error={err}");
    eprintln!("error: {err}");
    std::process::exit(1)
}

fn check_target_cpu(cpu: &str) -> Result<(), BuildError> {
    match cpu.strip_prefix("sm_") {
        Some(n) if !n.is_empty() && n.trim_end_matches('a').chars().all(|c| c.is_ascii_digit()) => {
            Ok(())
        }
        _ => Err(BuildError::TargetCpu(cpu.to_owned())),
    }
}

/// The newest `kernels_rs*.s` in `deps`: the PTX rustc wrote.
fn find_asm(deps: &Path) -> Result<PathBuf, BuildError> {
    let entries = std::fs::read_dir(deps).map_err(|_| BuildError::NoOutput(deps.to_owned()))?;
    entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "s"))
        .max_by_key(|path| path.metadata().and_then(|m| m.modified()).ok())
        .ok_or_else(|| BuildError::NoOutput(deps.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_cpu_must_be_sm_and_a_number() {
        assert!(check_target_cpu("sm_90").is_ok());
        assert!(check_target_cpu("sm_90a").is_ok());
        assert!(check_target_cpu("sm_").is_err());
        assert!(check_target_cpu("compute_90").is_err());
        assert!(check_target_cpu("sm_9x").is_err());
    }

    #[test]
    fn missing_toolchain_is_an_error_naming_the_fix() {
        let empty = std::env::temp_dir().join("ptx-builder-no-toolchain");
        let err = PtxBuilder::new("kernels")
            .out_dir(&empty)
            .probe(Probe::nowhere(&empty))
            .build()
            .unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, BuildError::Toolchain(_)), "{message}");
        assert!(message.contains("cargo xtask setup"), "{message}");
        assert!(message.contains("rust-src"), "{message}");
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
    fn missing_output_folder_is_an_error() {
        let err = find_asm(Path::new("/nonexistent/deps")).unwrap_err();
        assert!(matches!(err, BuildError::NoOutput(_)));
    }
}
