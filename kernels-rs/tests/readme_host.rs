//! The README's host, built from its lines alone: its `Cargo.toml` lines, its `build.rs`
//! and its `src/main.rs`, as a crate outside this workspace, with the crates it names
//! taken from this checkout instead of crates.io, offline.
use std::path::{Path, PathBuf};
use std::process::Command;

/// The body of the first code block of `readme` fenced as `info` that contains `needle`.
fn block<'a>(readme: &'a str, info: &str, needle: &str) -> &'a str {
    let fence = format!("```{info}\n");
    (readme.match_indices(&fence))
        .map(|(at, _)| &readme[at + fence.len()..])
        .map(|rest| &rest[..rest.find("\n```").expect("a closed code block") + 1])
        .find(|body| body.contains(needle))
        .unwrap_or_else(|| panic!("the README has no ```{info} block with {needle}"))
}

#[test]
fn the_readmes_host_builds_from_its_lines_alone() {
    let kernels_rs = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = kernels_rs.parent().unwrap();
    let readme = std::fs::read_to_string(kernels_rs.join("README.md")).unwrap();
    let dir = std::env::temp_dir().join(format!("readme-host-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let local = |name: &str, path: &str| {
        format!(
            "{name} = {{ path = {:?} }}\n",
            root.join(path).display().to_string()
        )
    };
    let manifest = format!(
        "[package]\nname = \"readme-host\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [workspace]\n\n{}\n[patch.crates-io]\n{}{}{}{}",
        block(&readme, "toml", "[build-dependencies]"),
        local("kernels-rs", "kernels-rs"),
        local("nvptx-kernel", "crates/nvptx-kernel"),
        local("nvptx-kernel-macros", "crates/nvptx-kernel-macros"),
        local("nvptx-builder", "crates/nvptx-builder"),
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(
        dir.join("build.rs"),
        block(&readme, "rust,no_run", "Builder::dependency"),
    )
    .unwrap();
    std::fs::write(
        dir.join("src/main.rs"),
        block(&readme, "rust,ignore", "fn main()"),
    )
    .unwrap();
    // A lock file of its own, resolved from this workspace's (the same versions, offline).
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let target: PathBuf = root.join("target/readme-host");
    let output = Command::new(env!("CARGO"))
        .args(["build", "--offline", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "the README's host does not build:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let ptx = std::fs::read_dir(target.join("debug/build"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("out/kernels.ptx"))
        .find(|p| p.is_file())
        .expect("its build script wrote kernels.ptx");
    assert!(
        std::fs::read_to_string(ptx)
            .unwrap()
            .contains(".entry sincos(")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
