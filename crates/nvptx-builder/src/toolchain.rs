//! Finding a Rust toolchain that can build `core` for `nvptx64-nvidia-cuda`: it needs the
//! standard library's source (`rust-src`), since no prebuilt `core` ships for that target.
//!
//! Search order: the override variables ([`CARGO_ENV`], [`RUSTC_ENV`]), then each rustup
//! toolchain with `rust-src` (nightlies first), then Debian's `rustc-web` packages
//! (`/usr/bin/rustc`, `/usr/bin/cargo`, source in `/usr/lib/rustlib/src/rust`).
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Override: the `cargo` that builds the kernels.
pub const CARGO_ENV: &str = "NVPTX_BUILDER_CARGO";
/// Override: the `rustc` that builds the kernels.
pub const RUSTC_ENV: &str = "NVPTX_BUILDER_RUSTC";
/// Override: the GPU architecture (`target-cpu`) to build for, e.g. `sm_80`.
pub const ARCH_ENV: &str = "NVPTX_BUILDER_ARCH";

/// Earlier names of the variables, still honoured: `(old, new)`.
pub const DEPRECATED_ENV: [(&str, &str); 3] = [
    ("STREAMLAB_KERNEL_CARGO", CARGO_ENV),
    ("STREAMLAB_KERNEL_RUSTC", RUSTC_ENV),
    ("STREAMLAB_TARGET_CPU", ARCH_ENV),
];

/// The value of variable `name`, or of its deprecated old name when only that is set.
pub fn env_var(name: &str) -> Option<OsString> {
    std::env::var_os(name).or_else(|| {
        let (old, _) = DEPRECATED_ENV.iter().find(|(_, new)| *new == name)?;
        std::env::var_os(old)
    })
}

/// One line per deprecated variable that is set, naming its replacement.
pub fn deprecation_notes() -> Vec<String> {
    DEPRECATED_ENV
        .iter()
        .filter(|(old, _)| std::env::var_os(old).is_some())
        .map(|(old, new)| format!("{old} is deprecated and will be removed: set {new} instead"))
        .collect()
}

/// Why no kernel toolchain could be used.
#[derive(Debug, thiserror::Error)]
pub enum ToolchainError {
    #[error(
        "no Rust toolchain that can build kernels for nvptx64 (it needs the library source, rust-src). \
         Fix: `rustup toolchain install nightly --component rust-src`, or on Debian \
         `apt-get install rustc-web cargo-web rust-web-src`, or point {CARGO_ENV} and {RUSTC_ENV} at one"
    )]
    NotFound,
    #[error(
        "{var} points to {path}, which does not exist; set it to a cargo/rustc pair or unset it"
    )]
    BadOverride { var: &'static str, path: PathBuf },
    #[error("{CARGO_ENV} and {RUSTC_ENV} must be set together")]
    HalfOverride,
}

/// Where a toolchain was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Override,
    Rustup(String),
    Debian,
}

/// A `cargo`/`rustc` pair able to build `core` for nvptx64.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelToolchain {
    pub cargo: PathBuf,
    pub rustc: PathBuf,
    pub origin: Origin,
}

/// Where to look: the override variables, the `rustup` program, and the file-system root
/// under which Debian's packages live (`/` normally; tests point it elsewhere).
#[derive(Debug, Clone)]
pub struct Probe {
    pub cargo_override: Option<PathBuf>,
    pub rustc_override: Option<PathBuf>,
    pub rustup: Option<PathBuf>,
    pub root: PathBuf,
}

impl Probe {
    /// The probe for this process: override variables, `rustup` on `PATH`, root `/`.
    pub fn from_env() -> Self {
        Probe {
            cargo_override: env_var(CARGO_ENV).map(PathBuf::from),
            rustc_override: env_var(RUSTC_ENV).map(PathBuf::from),
            rustup: Some(PathBuf::from("rustup")),
            root: PathBuf::from("/"),
        }
    }

    /// A probe that finds nothing: no overrides, no rustup, an empty root.
    pub fn nowhere(root: &Path) -> Self {
        Probe {
            cargo_override: None,
            rustc_override: None,
            rustup: None,
            root: root.to_owned(),
        }
    }
}

/// Find the first usable toolchain, in the order the module header gives.
pub fn locate(probe: &Probe) -> Result<KernelToolchain, ToolchainError> {
    match (&probe.cargo_override, &probe.rustc_override) {
        (Some(cargo), Some(rustc)) => {
            for (var, path) in [(CARGO_ENV, cargo), (RUSTC_ENV, rustc)] {
                if !path.exists() {
                    return Err(ToolchainError::BadOverride {
                        var,
                        path: path.clone(),
                    });
                }
            }
            return Ok(KernelToolchain {
                cargo: cargo.clone(),
                rustc: rustc.clone(),
                origin: Origin::Override,
            });
        }
        (None, None) => {}
        _ => return Err(ToolchainError::HalfOverride),
    }
    if let Some(found) = probe.rustup.as_deref().and_then(rustup_toolchain) {
        return Ok(found);
    }
    debian_toolchain(&probe.root).ok_or(ToolchainError::NotFound)
}

/// Whether a sysroot carries the library source `-Zbuild-std` needs.
pub fn has_rust_src(sysroot: &Path) -> bool {
    sysroot
        .join("lib/rustlib/src/rust/library/core/Cargo.toml")
        .is_file()
}

fn debian_toolchain(root: &Path) -> Option<KernelToolchain> {
    let usr = root.join("usr");
    let (cargo, rustc) = (usr.join("bin/cargo"), usr.join("bin/rustc"));
    (cargo.is_file() && rustc.is_file() && has_rust_src(&usr)).then_some(KernelToolchain {
        cargo,
        rustc,
        origin: Origin::Debian,
    })
}

fn rustup_toolchain(rustup: &Path) -> Option<KernelToolchain> {
    let listing = Command::new(rustup)
        .args(["toolchain", "list"])
        .output()
        .ok()?;
    let listing = String::from_utf8_lossy(&listing.stdout);
    let mut names: Vec<&str> = listing
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    // Nightlies first: they need no RUSTC_BOOTSTRAP to honour -Z flags.
    names.sort_by_key(|name| !name.starts_with("nightly"));
    names.into_iter().find_map(|name| {
        let sysroot = Command::new(rustup)
            .args(["run", name, "rustc", "--print", "sysroot"])
            .output()
            .ok()?;
        let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
        let (cargo, rustc) = (sysroot.join("bin/cargo"), sysroot.join("bin/rustc"));
        (has_rust_src(&sysroot) && cargo.is_file() && rustc.is_file()).then(|| KernelToolchain {
            cargo,
            rustc,
            origin: Origin::Rustup(name.to_owned()),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_debian_root(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("ptx-builder-{name}-{}", std::process::id()));
        let core = root.join("usr/lib/rustlib/src/rust/library/core");
        std::fs::create_dir_all(&core).unwrap();
        std::fs::create_dir_all(root.join("usr/bin")).unwrap();
        std::fs::write(core.join("Cargo.toml"), "").unwrap();
        std::fs::write(root.join("usr/bin/cargo"), "").unwrap();
        std::fs::write(root.join("usr/bin/rustc"), "").unwrap();
        root
    }

    #[test]
    fn nothing_found_names_setup_and_rustup_fix() {
        let err = locate(&Probe::nowhere(Path::new("/nonexistent"))).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, ToolchainError::NotFound));
        assert!(message.contains("rust-web-src"), "{message}");
        assert!(message.contains("rustup toolchain install nightly --component rust-src"));
    }

    #[test]
    fn debian_layout_is_found() {
        let root = fake_debian_root("debian");
        let found = locate(&Probe::nowhere(&root)).unwrap();
        assert_eq!(found.origin, Origin::Debian);
        assert_eq!(found.rustc, root.join("usr/bin/rustc"));
    }

    #[test]
    fn debian_without_source_is_not_enough() {
        let root = fake_debian_root("nosrc");
        std::fs::remove_dir_all(root.join("usr/lib/rustlib")).unwrap();
        assert!(matches!(
            locate(&Probe::nowhere(&root)),
            Err(ToolchainError::NotFound)
        ));
    }

    #[test]
    fn override_wins_over_debian_and_must_exist() {
        let root = fake_debian_root("override");
        let mut probe = Probe::nowhere(&root);
        probe.cargo_override = Some(root.join("usr/bin/cargo"));
        probe.rustc_override = Some(root.join("usr/bin/rustc"));
        assert_eq!(locate(&probe).unwrap().origin, Origin::Override);

        probe.rustc_override = Some(root.join("missing-rustc"));
        let err = locate(&probe).unwrap_err();
        assert!(err.to_string().contains(RUSTC_ENV), "{err}");

        probe.rustc_override = None;
        assert!(matches!(locate(&probe), Err(ToolchainError::HalfOverride)));
    }
}
