//! Records how the binary is built (the commit, the compilers, the profile) for every
//! result's provenance (`build_info`).
use std::path::Path;
use std::process::Command;

fn main() {
    record_build();
}

/// The output of `program args`, trimmed, where it ran and succeeded.
fn output(program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// `rustc -vV` of `rustc` as one line: "rustc 1.95.0 (59807616e 2026-04-14), LLVM 20.1.8".
fn compiler(rustc: impl AsRef<std::ffi::OsStr>) -> String {
    let Some(text) = output(rustc, &["-vV"]) else {
        return "unknown".to_owned();
    };
    let first = text.lines().next().unwrap_or("unknown").to_owned();
    match text.lines().find_map(|l| l.strip_prefix("LLVM version: ")) {
        Some(llvm) => format!("{first}, LLVM {llvm}"),
        None => first,
    }
}

fn record_build() {
    let git = |args: &[&str]| output("git", args);
    let (commit, dirty) = match git(&["rev-parse", "HEAD"]) {
        Some(commit) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .map_or("unknown", |s| if s.is_empty() { "false" } else { "true" });
            (commit, dirty)
        }
        None => (String::new(), "unknown"),
    };
    // Built again when the commit moves, the index changes, or any source the binary is
    // built from changes (so that "dirty" stays true to the tree). Only files that exist
    // are named: cargo takes a missing one as changed, and would build again every time.
    let mut watched: Vec<std::path::PathBuf> = Vec::new();
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        watched.extend(["HEAD", "index"].map(|f| Path::new(&dir).join(f)));
    }
    if let Some(common) = git(&["rev-parse", "--git-common-dir"]) {
        watched.push(Path::new(&common).join("packed-refs"));
        if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watched.push(Path::new(&common).join(head));
        }
    }
    for file in watched.iter().filter(|f| f.exists()) {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    for source in [
        "../../crates",
        "../../kernels-rs",
        "../../Cargo.toml",
        "../../Cargo.lock",
    ] {
        println!("cargo:rerun-if-changed={source}");
    }
    let host = compiler(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()));
    let kernels = nvptx_builder::toolchain::locate(&nvptx_builder::Probe::from_env())
        .map_or_else(|_| "unknown".to_owned(), |t| compiler(&t.rustc));
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "unknown".into());
    for (name, value) in [
        ("STREAMLAB_COMMIT", commit.as_str()),
        ("STREAMLAB_DIRTY", dirty),
        ("STREAMLAB_HOST_RUSTC", host.as_str()),
        ("STREAMLAB_KERNEL_RUSTC", kernels.as_str()),
        ("STREAMLAB_PROFILE", profile.as_str()),
    ] {
        println!("cargo:rustc-env={name}={value}");
    }
}
