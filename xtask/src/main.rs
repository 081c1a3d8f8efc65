//! `cargo xtask <task>`: the project's own tasks, needing nothing but cargo.
//!
//! * `setup`: install what a fresh Debian machine lacks (the kernel toolchain
//!   `rustc-web cargo-web rust-web-src`, and `chromium` for the report test), or print
//!   what to run when this is not root on Debian.
//! * `test`: setup, then everything CI checks: fmt, clippy, tests.
//! * `ptx`: write the kernels' PTX to `target/ptx/` for reading.
//! * `run-all`: setup, build, and run every experiment (`streamlab run-all`).
//! * `dist`: build the release binary into `target/dist/` to carry to a GPU machine.
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use ptx_builder::{Probe, PtxBuilder, toolchain};

const TASKS: &str = "\
usage: cargo xtask <task> [args]

tasks:
  setup     install the kernel toolchain and chromium when missing (root on Debian)
  test      setup, then cargo fmt --check, clippy -D warnings, cargo test --workspace
  ptx       write the kernels' PTX to target/ptx/kernels.ptx
  run-all   setup, build in release mode, run `streamlab run-all [args]`
  dist      build the release binary into target/dist/streamlab";

/// The Debian packages that provide a Rust toolchain with library source.
const KERNEL_PACKAGES: [&str; 3] = ["rustc-web", "cargo-web", "rust-web-src"];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("setup") => setup(),
        Some("test") => setup().and_then(|()| test()),
        Some("ptx") => ptx(),
        Some("run-all") => setup().and_then(|()| run_all(&args[1..])),
        Some("dist") => dist().map(|path| println!("{}", path.display())),
        Some(other) => Err(format!("unknown task `{other}`\n\n{TASKS}")),
        None => {
            println!("{TASKS}");
            return ExitCode::SUCCESS;
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_owned()
}

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

fn run(mut cmd: Command) -> Result<(), String> {
    let shown = format!("{cmd:?}");
    eprintln!("xtask: running {shown}");
    let status = cmd
        .status()
        .map_err(|err| format!("could not start {shown}: {err}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{shown} failed ({status})"))
    }
}

fn is_root_on_debian() -> bool {
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    uid && Path::new("/etc/debian_version").exists()
}

fn apt_install(packages: &[&str]) -> Result<(), String> {
    let mut update = Command::new("apt-get");
    update.args(["update", "-qq"]);
    run(update)?;
    let mut install = Command::new("apt-get");
    install
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(packages)
        .env("DEBIAN_FRONTEND", "noninteractive");
    run(install)
}

fn setup() -> Result<(), String> {
    let mut missing: Vec<&str> = Vec::new();
    let kernel_toolchain = toolchain::locate(&Probe::from_env());
    if kernel_toolchain.is_err() {
        missing.extend(KERNEL_PACKAGES);
    }
    if !Path::new("/usr/bin/chromium").exists() {
        missing.push("chromium");
    }
    if missing.is_empty() {
        return Ok(());
    }
    if is_root_on_debian() {
        eprintln!("xtask: installing {}", missing.join(" "));
        return apt_install(&missing);
    }
    let command = format!("sudo apt-get install -y {}", missing.join(" "));
    match kernel_toolchain {
        Err(err) => Err(format!(
            "{err}\nOn Debian run: {command}\nElsewhere: rustup toolchain install nightly --component rust-src"
        )),
        Ok(_) => {
            eprintln!(
                "xtask: chromium is missing, so the report's browser test will be skipped; on Debian run: {command}"
            );
            Ok(())
        }
    }
}

fn test() -> Result<(), String> {
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--", "--check"]);
    run(fmt)?;
    let mut clippy = cargo();
    clippy.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]);
    run(clippy)?;
    let mut tests = cargo();
    // --nocapture so that a test's "skipped: …" line is seen, not swallowed.
    tests.args(["test", "--workspace", "--", "--nocapture"]);
    let tally = run_counting(tests)?;
    println!(
        "tests: {} passed, {} failed, {} skipped",
        tally.passed, tally.failed, tally.skipped
    );
    if tally.failed > 0 {
        return Err(format!("{} tests failed", tally.failed));
    }
    Ok(())
}

/// Passed, failed and visibly skipped tests over all of cargo test's binaries.
#[derive(Debug, Default, PartialEq)]
struct Tally {
    passed: u64,
    failed: u64,
    skipped: u64,
}

impl Tally {
    /// Count one line of cargo test's output.
    fn read(&mut self, line: &str) {
        if let Some(rest) = line.trim().strip_prefix("test result: ") {
            let count = |word: &str| {
                rest.split(';')
                    .find_map(|part| {
                        part.trim()
                            .strip_suffix(word)?
                            .trim()
                            .rsplit(' ')
                            .next()?
                            .parse::<u64>()
                            .ok()
                    })
                    .unwrap_or(0)
            };
            self.passed += count("passed");
            self.failed += count("failed");
        } else if line.trim_start().starts_with("skipped:") {
            self.skipped += 1;
        }
    }
}

/// Run `cmd`, echoing its output as it comes, and count its tests.
fn run_counting(mut cmd: Command) -> Result<Tally, String> {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let shown = format!("{cmd:?}");
    eprintln!("xtask: running {shown}");
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| format!("could not start {shown}: {err}"))?;
    let stderr = child.stderr.take().expect("piped stderr");
    let errors = std::thread::spawn(move || {
        let mut tally = Tally::default();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("{line}");
            tally.read(&line);
        }
        tally
    });
    let mut tally = Tally::default();
    for line in BufReader::new(child.stdout.take().expect("piped stdout"))
        .lines()
        .map_while(Result::ok)
    {
        println!("{line}");
        tally.read(&line);
    }
    let from_stderr = errors
        .join()
        .map_err(|_| "the output reader stopped".to_owned())?;
    tally.passed += from_stderr.passed;
    tally.failed += from_stderr.failed;
    tally.skipped += from_stderr.skipped;
    let status = child.wait().map_err(|err| format!("{shown}: {err}"))?;
    if !status.success() && tally.failed == 0 {
        return Err(format!("{shown} failed ({status})"));
    }
    Ok(tally)
}

fn ptx() -> Result<(), String> {
    let out = root().join("target/ptx");
    std::fs::create_dir_all(&out)
        .map_err(|err| format!("could not create {}: {err}", out.display()))?;
    let path = PtxBuilder::new(root().join("kernels-rs"))
        .out_dir(&out)
        .kernel("fill", 4)
        .kernel("matmul", 6)
        .kernel("add_kernel", 5)
        .kernel("sincos", 4)
        .build()
        .map_err(|err| err.to_string())?;
    println!("{}", path.display());
    Ok(())
}

fn build_release() -> Result<PathBuf, String> {
    let mut build = cargo();
    build.args(["build", "--release", "--package", "streamlab"]);
    run(build)?;
    Ok(root().join("target/release/streamlab"))
}

fn run_all(args: &[String]) -> Result<(), String> {
    let binary = build_release()?;
    let mut cmd = Command::new(binary);
    cmd.current_dir(root()).arg("run-all").args(args);
    run(cmd)
}

fn dist() -> Result<PathBuf, String> {
    let binary = build_release()?;
    let dir = root().join("target/dist");
    std::fs::create_dir_all(&dir)
        .map_err(|err| format!("could not create {}: {err}", dir.display()))?;
    let dest = dir.join("streamlab");
    std::fs::copy(&binary, &dest)
        .map_err(|err| format!("could not copy to {}: {err}", dest.display()))?;
    Ok(dest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_reads_cargo_test_summaries_and_skip_lines() {
        let mut tally = Tally::default();
        for line in [
            "test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
            "test result: FAILED. 3 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out",
            "skipped: no NVIDIA driver on this machine",
            "running 4 tests",
        ] {
            tally.read(line);
        }
        assert_eq!(
            tally,
            Tally {
                passed: 15,
                failed: 2,
                skipped: 1
            }
        );
    }
}
