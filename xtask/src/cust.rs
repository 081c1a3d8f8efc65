//! The `libcuda` that Rust-CUDA's cust links at build time, for `examples/cust-streams`
//! and the cust launcher's type checks.
//!
//! cust's build script (`find_cuda_helper`) wants a CUDA installation: a `lib64` folder
//! under `CUDA_LIBRARY_PATH`, `/opt/cuda`, `/usr/local/cuda` or `/usr/local/cuda-*`, with a
//! `libcuda.so` to link. Where one is found, nothing is done. Elsewhere (CI has no CUDA
//! toolkit) a link stub is made under `target/cuda-stub/`, as the toolkit's own
//! `lib64/stubs/libcuda.so` is: every driver function cust's bindings (`cust_raw`)
//! declare, exported from a library named `libcuda.so.1`, each returning
//! `CUDA_ERROR_STUB_LIBRARY`. A binary linked against it loads the real driver, found by
//! that name, when it runs.
use std::path::{Path, PathBuf};
use std::process::Command;

/// The example's manifest, relative to the workspace.
pub const MANIFEST: &str = "examples/cust-streams/Cargo.toml";

/// What cust's build script is told: `CUDA_LIBRARY_PATH` where the stub had to be made,
/// nothing where a CUDA installation is found.
pub fn link_env(root: &Path) -> Result<Vec<(&'static str, PathBuf)>, String> {
    if installed() {
        return Ok(Vec::new());
    }
    let stub = root.join("target/cuda-stub");
    make_stub(root, &stub)?;
    Ok(vec![("CUDA_LIBRARY_PATH", stub)])
}

/// Whether cust's build script finds a CUDA installation on its own.
fn installed() -> bool {
    if std::env::var_os("CUDA_LIBRARY_PATH").is_some() {
        return true;
    }
    let mut bases = vec![PathBuf::from("/opt/cuda"), PathBuf::from("/usr/local/cuda")];
    if let Ok(entries) = std::fs::read_dir("/usr/local") {
        bases.extend(
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("cuda-"))
                .map(|e| e.path()),
        );
    }
    bases.iter().any(|base| {
        base.join("lib64").is_dir() || base.join("targets/x86_64-linux/include/cuda.h").is_file()
    })
}

/// Make `stub/lib64/libcuda.so` from the driver functions of the `cust_raw` the example
/// resolves to, unless it is there from the same list.
fn make_stub(root: &Path, stub: &Path) -> Result<(), String> {
    let source = stub_source(&driver_functions(&cust_raw_bindings(root)?)?);
    let c_file = stub.join("libcuda-stub.c");
    let library = stub.join("lib64/libcuda.so");
    if library.is_file() && std::fs::read_to_string(&c_file).is_ok_and(|old| old == source) {
        return Ok(());
    }
    std::fs::create_dir_all(stub.join("lib64"))
        .map_err(|err| format!("could not create {}: {err}", stub.display()))?;
    std::fs::write(&c_file, &source)
        .map_err(|err| format!("could not write {}: {err}", c_file.display()))?;
    let compiler = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let mut cc = Command::new(&compiler);
    cc.args(["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o"])
        .arg(&library)
        .arg(&c_file);
    eprintln!("xtask: making the libcuda link stub for cust: {cc:?}");
    let status = cc.status().map_err(|err| {
        format!(
            "could not run the C compiler {compiler:?} to make the libcuda link stub cust needs ({err}): install one (gcc), or point CUDA_LIBRARY_PATH at a CUDA installation"
        )
    })?;
    if !status.success() {
        return Err(format!("making the libcuda link stub failed ({status})"));
    }
    Ok(())
}

/// The path of `cust_raw`'s bindings (`src/cuda.rs`), from `cargo metadata` of the
/// example.
fn cust_raw_bindings(root: &Path) -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(root)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--manifest-path",
            MANIFEST,
        ])
        .output()
        .map_err(|err| format!("could not run cargo metadata: {err}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata of {MANIFEST} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let metadata = String::from_utf8_lossy(&output.stdout);
    manifest_of(&metadata, "cust_raw")
        .map(|manifest| manifest.with_file_name("src/cuda.rs"))
        .ok_or_else(|| format!("cargo metadata of {MANIFEST} names no cust_raw package"))
}

/// The manifest path of package `name` in `cargo metadata`'s JSON: its folder is
/// `<name>-<version>`.
fn manifest_of(metadata: &str, name: &str) -> Option<PathBuf> {
    const KEY: &str = "\"manifest_path\":\"";
    metadata
        .match_indices(KEY)
        .filter_map(|(at, _)| {
            let rest = &metadata[at + KEY.len()..];
            rest.split_once('"').map(|(path, _)| PathBuf::from(path))
        })
        .find(|path| {
            let folder = path.parent().and_then(Path::file_name);
            folder.is_some_and(|f| {
                let f = f.to_string_lossy();
                f.strip_prefix(name)
                    .and_then(|v| v.strip_prefix('-'))
                    .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
            })
        })
}

/// Every `pub fn cu…` the bindings at `path` declare.
fn driver_functions(path: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|err| {
        format!(
            "could not read cust_raw's bindings {}: {err}",
            path.display()
        )
    })?;
    let mut names: Vec<String> = (text.lines())
        .filter_map(|line| line.trim().strip_prefix("pub fn cu"))
        .filter_map(|rest| {
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
            Some(format!("cu{}", &rest[..end]))
        })
        .collect();
    names.sort();
    names.dedup();
    if names.is_empty() {
        return Err(format!("{} declares no driver function", path.display()));
    }
    Ok(names)
}

/// The stub's C source: each function takes whatever it is given and returns
/// `CUDA_ERROR_STUB_LIBRARY` (34).
fn stub_source(functions: &[String]) -> String {
    let mut source = String::from(
        "/* libcuda link stub for cust, made by `cargo xtask`: the driver functions of\n   \
         cust_raw, each returning CUDA_ERROR_STUB_LIBRARY. Linked as libcuda.so.1, so a\n   \
         binary loads the real driver when it runs. */\n",
    );
    for name in functions {
        source.push_str(&format!("int {name}(void) {{ return 34; }}\n"));
    }
    source
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stub_exports_every_driver_function_the_bindings_declare() {
        let dir = std::env::temp_dir().join(format!("xtask-stub-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bindings = dir.join("cuda.rs");
        std::fs::write(
            &bindings,
            "unsafe extern \"C\" {\n    pub fn cuInit(Flags: ::std::os::raw::c_uint) -> CUresult;\n}\n\
             extern \"C\" {\n    pub fn cuMemAlloc_v2(\n        dptr: *mut CUdeviceptr,\n    ) -> CUresult;\n    \
             pub fn cuInit(Flags: u32) -> CUresult;\n    pub fn helper() -> u32;\n}\n",
        )
        .unwrap();
        let names = driver_functions(&bindings).unwrap();
        assert_eq!(names, ["cuInit", "cuMemAlloc_v2"]);
        let source = stub_source(&names);
        assert!(source.contains("int cuMemAlloc_v2(void) { return 34; }"));
        std::fs::write(&bindings, "pub struct CUctx_st;\n").unwrap();
        assert!(driver_functions(&bindings).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_package_manifest_is_found_by_its_folder_name() {
        let metadata = r#"{"packages":[{"name":"cust","manifest_path":"/r/cust-0.3.2/Cargo.toml"},{"name":"cust_raw","manifest_path":"/r/cust_raw-0.11.3/Cargo.toml"}]}"#;
        assert_eq!(
            manifest_of(metadata, "cust_raw"),
            Some(PathBuf::from("/r/cust_raw-0.11.3/Cargo.toml"))
        );
        assert_eq!(
            manifest_of(metadata, "cust"),
            Some(PathBuf::from("/r/cust-0.3.2/Cargo.toml"))
        );
        assert_eq!(manifest_of(metadata, "glam"), None);
    }
}
