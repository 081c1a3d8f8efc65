//! A crate outside this workspace, as a third party writes it: path dependencies on
//! `nvptx-builder`, `kernels-rs` and `nvptx-kernel` (feature `cudarc`), a three-line
//! build script that builds kernels-rs's PTX, and a typed launch of `kernels_rs::sincos`.
//! It must build, and the same launch with an `i32` buffer where `sincos` reads `&[f32]`
//! must not compile. The same holds for a host written with Rust-CUDA's cust (feature
//! `cust`), whose build script needs a CUDA installation or the link stub
//! `cargo xtask test` points `CUDA_LIBRARY_PATH` at.
//!
//! The crates live under `CARGO_TARGET_TMPDIR/outside-crate/` (each its own workspace) and
//! share one target folder there, so a second run only rebuilds what changed. Cargo runs
//! offline with this workspace's `Cargo.lock`, whose crates are already downloaded.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nvptx_builder::{Probe, toolchain};

/// The build script: the builder pointed at kernels-rs (`KERNELS_RS`), checked against
/// its kernels.
const BUILD_RS: &str = r#"fn main() {
    nvptx_builder::Builder::new(KERNELS_RS).kernels(&kernels_rs::KERNELS).build().unwrap_or_else(|e| nvptx_builder::fail(&e));
}
"#;

/// A launch of `sincos(a: &[f32], b: &mut [f32], offset: u32)`; `A_TYPE` is the element
/// type of the buffer passed as `a`.
const MAIN_RS: &str = r#"use cudarc::driver::LaunchConfig;
use cudarc::nvrtc::Ptx;
use nvptx_kernel::cuda::{self, TypedFunction};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = cuda::open(0)?;
    unsafe { ctx.disable_event_tracking() };
    let module = ctx.load_module(Ptx::from_src(PTX_SOURCE))?;
    let kernel = TypedFunction::load(&module, kernels_rs::sincos)?;
    let stream = ctx.new_stream()?;
    let a = stream.alloc_zeros::<A_TYPE>(1024)?;
    let mut b = stream.alloc_zeros::<f32>(1024)?;
    unsafe {
        kernel.launch(&stream, LaunchConfig::for_num_elems(1024), (cuda::slice(&a), cuda::slice_mut(&mut b), 0u32))?;
    }
    println!("{}", stream.clone_dtoh(&b)?[0]);
    Ok(())
}
"#;

/// The same launch through nvptx-kernel's cust launcher, in a host written with cust.
const CUST_MAIN_RS: &str = r#"use cust::memory::DeviceBuffer;
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use nvptx_kernel::cust::{self as typed, TypedFunction};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let _context = cust::quick_init()?;
    let module = Module::from_ptx(std::fs::read_to_string("kernels.ptx")?, &[])?;
    let kernel = TypedFunction::load(&module, kernels_rs::sincos)?;
    let stream = Stream::new(StreamFlags::DEFAULT, None)?;
    let a = DeviceBuffer::from_slice(&[0 as A_TYPE; 1024])?;
    let mut b = DeviceBuffer::from_slice(&[0.0f32; 1024])?;
    unsafe {
        kernel.launch(&stream, 1, 1024, 0, (typed::slice(&a), typed::slice_mut(&mut b), 0u32))?;
    }
    stream.synchronize()?;
    Ok(())
}
"#;

/// The host crates' dependencies: cudarc or cust, and the kernel crate.
enum Host {
    Cudarc,
    Cust,
}

impl Host {
    fn dependencies(&self) -> &'static str {
        match self {
            Host::Cudarc => {
                r#"cudarc = { version = "0.19.10", default-features = false, features = ["std", "driver", "nvrtc", "dynamic-loading", "cuda-13000"] }"#
            }
            Host::Cust => r#"cust = "0.3.2""#,
        }
    }

    fn feature(&self) -> &'static str {
        match self {
            Host::Cudarc => "cudarc",
            Host::Cust => "cust",
        }
    }
}

#[test]
fn a_crate_outside_the_workspace_builds_and_launches_only_matching_arguments() {
    if let Err(err) = toolchain::locate(&Probe::from_env()) {
        println!("skipped: {err}");
        return;
    }
    let (workspace, root, target) = folders();

    // The third party's crate: PTX built by its build script and embedded.
    let good = write_crate(
        &root.join("good"),
        &workspace,
        &Host::Cudarc,
        true,
        &MAIN_RS
            .replace(
                "PTX_SOURCE",
                r#"include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"))"#,
            )
            .replace("A_TYPE", "f32"),
    );
    let output = cargo(&good, &target, "build");
    assert!(
        output.status.success(),
        "the outside crate does not build:\n{}",
        stderr(&output)
    );
    let ptx = built_ptx(&target, "outside-good").expect("the build script wrote no PTX");
    let text = std::fs::read_to_string(&ptx).unwrap();
    assert!(
        text.contains(".visible .entry sincos("),
        "{} has no sincos entry",
        ptx.display()
    );

    // The same launch with `i32` elements where `sincos` reads `&[f32]` (no build script:
    // it fails before any PTX is needed).
    let bad = write_crate(
        &root.join("bad"),
        &workspace,
        &Host::Cudarc,
        false,
        &MAIN_RS
            .replace("PTX_SOURCE", r#"std::fs::read_to_string("kernels.ptx")?"#)
            .replace("A_TYPE", "i32"),
    );
    assert_only_the_argument_fails(&cargo(&bad, &target, "build"));
}

#[test]
fn a_cust_host_launches_only_matching_arguments() {
    let installed = ["/usr/local/cuda", "/opt/cuda"].map(|p| Path::new(p).is_dir());
    if std::env::var_os("CUDA_LIBRARY_PATH").is_none() && !installed.contains(&true) {
        println!(
            "skipped: cust's build script needs a CUDA installation or CUDA_LIBRARY_PATH (cargo xtask test makes a link stub)"
        );
        return;
    }
    let (workspace, root, target) = folders();
    let good = write_crate(
        &root.join("cust-good"),
        &workspace,
        &Host::Cust,
        false,
        &CUST_MAIN_RS.replace("A_TYPE", "f32"),
    );
    let output = cargo(&good, &target, "check");
    assert!(
        output.status.success(),
        "a cust launch with matching arguments does not compile:\n{}",
        stderr(&output)
    );
    let bad = write_crate(
        &root.join("cust-bad"),
        &workspace,
        &Host::Cust,
        false,
        &CUST_MAIN_RS.replace("A_TYPE", "i32"),
    );
    assert_only_the_argument_fails(&cargo(&bad, &target, "check"));
}

/// This workspace, the folder the outside crates live in, and their shared target folder.
fn folders() -> (PathBuf, PathBuf, PathBuf) {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace folder");
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("outside-crate");
    let target = root.join("target");
    (workspace, root, target)
}

/// `output` is a failed build whose error is that an `i32` buffer is no `&[f32]`
/// argument.
fn assert_only_the_argument_fails(output: &Output) {
    let errors = stderr(output);
    assert!(
        !output.status.success(),
        "a launch with a wrong argument type compiled"
    );
    assert!(
        errors.contains("E0277")
            && errors.contains("Slice<f32>")
            && errors.contains("DeviceSlice<'_, i32>"),
        "the build failed, but not because an i32 buffer is no `&[f32]` argument:\n{errors}"
    );
}

/// Write a crate named `outside-<folder name>` into `dir` for `host`, with this
/// workspace's lock file.
fn write_crate(
    dir: &Path,
    workspace: &Path,
    host: &Host,
    build_script: bool,
    main_rs: &str,
) -> PathBuf {
    let name = format!("outside-{}", dir.file_name().unwrap().to_string_lossy());
    let path = |relative: &str| workspace.join(relative).display().to_string();
    let mut manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [workspace]\n\n\
         [dependencies]\n{host}\n\
         kernels-rs = {{ path = \"{kernels}\" }}\n\
         nvptx-kernel = {{ path = \"{kernel}\", features = [\"{feature}\"] }}\n",
        host = host.dependencies(),
        feature = host.feature(),
        kernels = path("kernels-rs"),
        kernel = path("crates/nvptx-kernel"),
    );
    if build_script {
        manifest.push_str(&format!(
            "\n[build-dependencies]\nkernels-rs = {{ path = \"{kernels}\" }}\n\
             nvptx-builder = {{ path = \"{builder}\" }}\n",
            kernels = path("kernels-rs"),
            builder = path("crates/nvptx-builder"),
        ));
    }
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(dir.join("src/main.rs"), main_rs).unwrap();
    if build_script {
        let kernels = format!("{:?}", path("kernels-rs"));
        std::fs::write(
            dir.join("build.rs"),
            BUILD_RS.replace("KERNELS_RS", &kernels),
        )
        .unwrap();
    }
    dir.to_owned()
}

/// `cargo <command> --offline` in `dir`, free of this test's own cargo settings (but
/// for where cust finds libcuda, which is no cargo setting).
fn cargo(dir: &Path, target: &Path, command: &str) -> Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    for (var, _) in std::env::vars_os() {
        let var = var.to_string_lossy();
        let cargo_setup = ["CARGO_HOME", "CARGO_NET_", "CARGO_HTTP_", "CARGO_REGISTR"]
            .iter()
            .any(|keep| var.starts_with(keep));
        if (var.starts_with("CARGO_") && !cargo_setup) || var.starts_with("RUSTFLAGS") {
            cmd.env_remove(var.as_ref());
        }
    }
    cmd.args([command, "--offline", "--quiet"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .expect("cargo runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The PTX a build script of package `name` wrote into its `OUT_DIR`.
fn built_ptx(target: &Path, name: &str) -> Option<PathBuf> {
    std::fs::read_dir(target.join("debug/build"))
        .ok()?
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with(&format!("{name}-"))
        })
        .map(|entry| entry.path().join("out").join(nvptx_builder::DEFAULT_FILE))
        .find(|path| path.is_file())
}
