//! `cargo xtask <task>`: the project's own tasks, needing nothing but cargo.
//!
//! * `setup`: install what a fresh Debian machine lacks (the kernel toolchain
//!   `rustc-web cargo-web rust-web-src`, and `chromium` for the report's browser test),
//!   or print what to run when this is not root on Debian.
//! * `test`: setup, then everything CI checks: fmt, clippy, tests, the rendered documents
//!   (`docs --check`), cargo doc, the cust example (its own workspace), and `cargo
//!   publish --dry-run` of the reusable crates.
//! * `docs`: render the README and `docs/performance.md` from their templates, every
//!   figure from the results it names ([`docs`]); `--check` fails where a committed one is
//!   not its rendering.
//! * `calibrate`: fit `compare`'s margins on the A/A pairs recorded in
//!   `crates/streamlab-results/calibration/pairs.json` and write `margins.json` beside
//!   it (each pair also left out in turn and judged by the rest); `--check` fails where
//!   the committed file is not that fit.
//! * `ptx`: write the kernels' PTX to `target/ptx/kernels.ptx` for reading.
//! * `run-all`: setup, build, and run every experiment (`streamlab run-all`).
//! * `dist`: the release binary, the example hosts (cust-streams among them), the own-kernel example's PTX and
//!   every test executable in `target/dist/`, with `run-tests.sh`, to carry to a GPU
//!   machine (which has no Rust).
mod cust;
mod docs;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use nvptx_builder::{Builder, Probe, toolchain};

const TASKS: &str = "\
usage: cargo xtask <task> [args]

tasks:
  setup     install the kernel toolchain and chromium when missing (root on Debian)
  test      setup, then cargo fmt --check, clippy -D warnings, every test, docs --check,
            cargo doc, the cust example, cargo publish --dry-run of the reusable crates;
            --record FILE: write how long it took there as JSON
  docs      render README.md and docs/performance.md from docs/templates/, every
            figure from the results it names; --check: fail where they differ
  calibrate fit compare's margins on the recorded A/A pairs and write
            crates/streamlab-results/calibration/margins.json; --check: fail where
            it differs
  ptx       write the kernels' PTX to target/ptx/kernels.ptx
  run-all   setup, build in release mode, run `streamlab run-all [args]`
  dist      the release binary, the examples, the test executables and run-tests.sh
            in target/dist/
  help      this list";

/// The Debian packages that provide a Rust toolchain with library source.
const KERNEL_PACKAGES: [&str; 3] = ["rustc-web", "cargo-web", "rust-web-src"];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().map(String::as_str);
    let rest = args.get(1..).unwrap_or_default();
    if rest.iter().any(|a| a == "--help" || a == "-h") && task != Some("run-all") {
        println!("{TASKS}");
        return ExitCode::SUCCESS;
    }
    let result = match task {
        None | Some("help" | "--help" | "-h") => {
            println!("{TASKS}");
            return ExitCode::SUCCESS;
        }
        Some("setup") => setup(),
        Some("test") => {
            let record = match rest {
                [] => None,
                [flag, path] if flag == "--record" => Some(PathBuf::from(path)),
                _ => {
                    eprintln!("xtask: test takes no arguments but `--record FILE`\n\n{TASKS}");
                    return ExitCode::from(2);
                }
            };
            let started = Started::now();
            setup()
                .and_then(|()| test())
                .and_then(|tally| started.finish(record.as_deref(), &tally))
        }
        Some("docs") => render_docs(rest.iter().any(|a| a == "--check")),
        Some("calibrate") => calibrate(rest.iter().any(|a| a == "--check")),
        Some("ptx") => ptx(),
        Some("run-all") => setup().and_then(|()| run_all(rest)),
        Some("dist") => dist().map(|dir| println!("{}", dir.display())),
        Some(other) => {
            eprintln!("xtask: unknown task `{other}`\n\n{TASKS}");
            return ExitCode::from(2);
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
        Err(err) => Err(format!("{err}\nOn Debian run: {command}")),
        Ok(_) => {
            eprintln!(
                "xtask: chromium is missing, so the report's browser test will be skipped; on Debian run: {command}"
            );
            Ok(())
        }
    }
}

/// The crates a stranger can depend on, in the order they publish.
const PUBLISHED: [&str; 4] = [
    "nvptx-kernel-macros",
    "nvptx-kernel",
    "nvptx-builder",
    "kernels-rs",
];

/// `rustfmt --check` of the experiments' modules: the registry declares them through a
/// macro, where `cargo fmt` does not look.
fn rustfmt_registered() -> Result<Command, String> {
    let mut files = Vec::new();
    for dir in [
        "crates/streamlab/src/experiments",
        "crates/streamlab-results/src/experiments",
    ] {
        let entries = std::fs::read_dir(root().join(dir))
            .map_err(|err| format!("could not list {dir}: {err}"))?;
        for entry in entries {
            let path = entry
                .map_err(|err| format!("could not list {dir}: {err}"))?
                .path();
            if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut cmd = Command::new("rustfmt");
    cmd.current_dir(root())
        .args(["--edition", "2024", "--check"])
        .args(files);
    Ok(cmd)
}

/// When a task started: its wall clock, the UTC time, the commit checked out and whether
/// the tree had uncommitted changes, and whether `target/` held an earlier build of the
/// workspace.
struct Started {
    at: std::time::Instant,
    utc: String,
    commit: String,
    dirty: bool,
    built_before: bool,
}

impl Started {
    fn now() -> Started {
        let utc = Command::new("date")
            .args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default();
        let git = |args: &[&str]| {
            Command::new("git")
                .current_dir(root())
                .args(args)
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        };
        Started {
            at: std::time::Instant::now(),
            utc,
            commit: git(&["rev-parse", "HEAD"]).unwrap_or_default(),
            dirty: git(&["status", "--porcelain"]).is_none_or(|s| !s.is_empty()),
            built_before: built_before(&root().join("target")),
        }
    }

    /// Say how long the tests took, and with `record`, write it there as JSON: when, how
    /// long, on how many cores, of which commit, whether the tree had uncommitted changes
    /// and `target/` an earlier build of the workspace, the checkout in words, and the
    /// tally.
    fn finish(&self, record: Option<&Path>, tally: &Tally) -> Result<(), String> {
        let seconds = self.at.elapsed().as_secs_f64();
        let cores = std::thread::available_parallelism().map_or(0, usize::from);
        println!(
            "xtask: test took {:.1} min on {cores} cores",
            seconds / 60.0
        );
        let Some(path) = record else {
            return Ok(());
        };
        let short = &self.commit[..self.commit.len().min(12)];
        let checkout = match (self.built_before, self.dirty) {
            (false, false) => format!("a fresh clone of {short}, the workspace's build included"),
            (false, true) => format!(
                "a checkout of {short} with uncommitted changes and no earlier build, the workspace's build included"
            ),
            (true, _) => format!("a checkout of {short} holding an earlier build of the workspace"),
        };
        let json = format!(
            "{{\n  \"task\": \"cargo xtask test\",\n  \"started_utc\": \"{}\",\n  \"duration_s\": {seconds:.0},\n  \"cores\": {cores},\n  \"commit\": \"{}\",\n  \"dirty\": {},\n  \"built_before\": {},\n  \"checkout\": \"{checkout}\",\n  \"passed\": {},\n  \"skipped\": {}\n}}\n",
            self.utc, self.commit, self.dirty, self.built_before, tally.passed, tally.skipped
        );
        std::fs::write(path, json)
            .map_err(|err| format!("could not write {}: {err}", path.display()))
    }
}

/// Whether `target` holds a build of the workspace's own crates from before this task:
/// `cargo xtask` builds xtask (and the crates it depends on) before any task runs, but
/// not the runtime, which only the workspace's build makes.
fn built_before(target: &Path) -> bool {
    ["debug", "release"].iter().any(|profile| {
        std::fs::read_dir(target.join(profile).join(".fingerprint")).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("streamlab-runtime-")
            })
        })
    })
}

fn test() -> Result<Tally, String> {
    // cust (the cust launcher's check test, the cust example) links libcuda at build time.
    let cust_env = cust::link_env(&root())?;
    let cust_cargo = |args: &[&str]| {
        let mut cmd = cargo();
        cmd.args(args).envs(cust_env.iter().map(|(k, v)| (k, v)));
        cmd
    };
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--", "--check"]);
    run(fmt)?;
    run(rustfmt_registered()?)?;
    run(cust_cargo(&[
        "fmt",
        "--all",
        "--manifest-path",
        cust::MANIFEST,
        "--",
        "--check",
    ]))?;
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
    run(cust_cargo(&[
        "clippy",
        "--manifest-path",
        cust::MANIFEST,
        "--target-dir",
        "target",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    // --nocapture so that a test's "skipped: …" line is seen, not swallowed; every test
    // binary runs, so the tally counts them all.
    let tests = cust_cargo(&["test", "--workspace", "--no-fail-fast", "--", "--nocapture"]);
    let mut tally = run_counting(tests)?;
    // The feature-gated launchers' examples, compiled as doctests.
    tally.add(run_counting(cust_cargo(&[
        "test",
        "--package",
        "nvptx-kernel",
        "--features",
        "cudarc,cust",
        "--doc",
    ]))?);
    render_docs(true)?;
    calibrate(true)?;
    let mut doc = cargo();
    doc.args(["doc", "--no-deps", "--workspace", "--exclude", "xtask"])
        .env("RUSTDOCFLAGS", "-D warnings");
    run(doc)?;
    let mut doc_features = cust_cargo(&[
        "doc",
        "--no-deps",
        "--package",
        "nvptx-kernel",
        "--features",
        "cudarc,cust",
    ]);
    doc_features.env("RUSTDOCFLAGS", "-D warnings");
    run(doc_features)?;
    run(cust_cargo(&[
        "build",
        "--manifest-path",
        cust::MANIFEST,
        "--target-dir",
        "target",
    ]))?;
    let mut publish = cargo();
    publish.args(["publish", "--dry-run", "--allow-dirty"]);
    for package in PUBLISHED {
        publish.args(["--package", package]);
    }
    run(publish)?;
    println!(
        "tests: {} passed, {} failed, {} skipped",
        tally.passed, tally.failed, tally.skipped
    );
    if tally.failed > 0 {
        return Err(format!("{} tests failed", tally.failed));
    }
    Ok(tally)
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
        } else if line.contains("skipped: ") {
            self.skipped += 1;
        }
    }

    fn add(&mut self, other: Tally) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.skipped += other.skipped;
    }
}

/// Run `cmd`, echoing its output as it comes, and count its tests.
fn run_counting(mut cmd: Command) -> Result<Tally, String> {
    use std::io::{BufRead, BufReader};
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
    tally.add(
        errors
            .join()
            .map_err(|_| "the output reader stopped".to_owned())?,
    );
    let status = child.wait().map_err(|err| format!("{shown}: {err}"))?;
    if !status.success() && tally.failed == 0 {
        return Err(format!("{shown} failed ({status})"));
    }
    Ok(tally)
}

fn render_docs(check: bool) -> Result<(), String> {
    for (document, figures) in docs::run(&root(), check)? {
        if check {
            eprintln!("xtask: {document} is its template's rendering ({figures} figures)");
        } else {
            eprintln!("xtask: rendered {document} ({figures} figures)");
        }
    }
    Ok(())
}

/// Fit the margins on the recorded pairs and write them (or, with `check`, fail where the
/// committed file differs).
fn calibrate(check: bool) -> Result<(), String> {
    let dir = root().join("crates/streamlab-results");
    let fitted = streamlab_results::compare::calibration::margins_file(&dir)
        .map_err(|err| err.to_string())?;
    let path = dir.join("calibration/margins.json");
    if check {
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed != fitted {
            return Err(format!(
                "{} is not the fit of the recorded pairs: run `cargo xtask calibrate`",
                path.display()
            ));
        }
        return Ok(());
    }
    std::fs::write(&path, fitted)
        .map_err(|err| format!("could not write {}: {err}", path.display()))?;
    println!("{}", path.display());
    Ok(())
}

fn ptx() -> Result<(), String> {
    let ptx = Builder::new(root().join("kernels-rs"))
        .kernels(&kernels_rs::KERNELS)
        .kernels(&kernels_rs::SPELLINGS)
        .copy_to(root().join("target/ptx/kernels.ptx"))
        .build()
        .map_err(|err| err.to_string())?;
    println!("{}", ptx.path.display());
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

/// The script that runs the shipped test executables on a GPU machine and prints the
/// same tally `cargo xtask test` prints.
const RUN_TESTS: &str = r#"#!/usr/bin/env bash
# Runs every test executable beside this script (built by `cargo xtask dist`), from the
# checkout two folders up (where docs/results/ is), and prints a tally.
# Usage: target/dist/run-tests.sh [test-name-filter]
set -u
here="$(cd "$(dirname "$0")" && pwd)"
export STREAMLAB_BIN="$here/streamlab"
export STREAMLAB_ROOT="$(cd "$here/../.." && pwd)"
cd "$STREAMLAB_ROOT"
passed=0; failed=0; skipped=0
for test in "$here"/tests/*; do
    echo "== $(basename "$test")"
    out="$("$test" --nocapture --test-threads=1 "$@" 2>&1)"; status=$?
    printf '%s\n' "$out"
    p=$(printf '%s\n' "$out" | sed -n 's/^test result: .* \([0-9]*\) passed; \([0-9]*\) failed.*/\1 \2/p')
    [ -n "$p" ] || p="0 0"  # no tally line: counted by its exit status below
    passed=$((passed + ${p% *})); failed=$((failed + ${p#* }))
    skipped=$((skipped + $(printf '%s\n' "$out" | grep -c 'skipped:')))
    [ "$status" -eq 0 ] || [ "${p#* }" -gt 0 ] || failed=$((failed + 1))
done
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
"#;

/// The example hosts `dist` carries, each built as `target/release/<name>`.
const EXAMPLES: [&str; 3] = ["vecadd", "reuse-sincos", "own-kernel"];

fn dist() -> Result<PathBuf, String> {
    let binary = build_release()?;
    let dir = root().join("target/dist");
    let tests_dir = dir.join("tests");
    let _ = std::fs::remove_dir_all(&tests_dir);
    std::fs::create_dir_all(&tests_dir)
        .map_err(|err| format!("could not create {}: {err}", tests_dir.display()))?;
    let copy = |from: &Path, to: &Path| {
        std::fs::copy(from, to).map(drop).map_err(|err| {
            format!(
                "could not copy {} to {}: {err}",
                from.display(),
                to.display()
            )
        })
    };
    copy(&binary, &dir.join("streamlab"))?;
    let mut examples = cargo();
    examples.args(["build", "--release"]);
    for example in EXAMPLES {
        examples.args(["--package", example]);
    }
    run(examples)?;
    for example in EXAMPLES {
        copy(
            &root().join("target/release").join(example),
            &dir.join(example),
        )?;
    }
    // cust-streams is a workspace of its own (it links libcuda at build time).
    let mut cust_streams = cargo();
    cust_streams
        .args([
            "build",
            "--release",
            "--manifest-path",
            cust::MANIFEST,
            "--target-dir",
            "target",
        ])
        .envs(cust::link_env(&root())?);
    run(cust_streams)?;
    copy(
        &root().join("target/release/cust-streams"),
        &dir.join("cust-streams"),
    )?;
    // own-kernel writes its kernel crate's PTX, which `streamlab overlap` runs.
    let mut own = Command::new(root().join("target/release/own-kernel"));
    own.arg(dir.join("own-kernel.ptx"));
    run(own)?;
    let listing = cargo()
        .args([
            "test",
            "--release",
            "--package",
            "streamlab",
            "--package",
            "streamlab-runtime",
            "--no-run",
            "--message-format=json",
        ])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|err| format!("could not build the tests: {err}"))?;
    if !listing.status.success() {
        return Err("building the test executables failed".into());
    }
    for (name, executable) in test_executables(&String::from_utf8_lossy(&listing.stdout)) {
        copy(Path::new(&executable), &tests_dir.join(name))?;
    }
    let script = dir.join("run-tests.sh");
    std::fs::write(&script, RUN_TESTS)
        .map_err(|err| format!("could not write {}: {err}", script.display()))?;
    make_executable(&script)?;
    Ok(dir)
}

/// The test executables in cargo's JSON messages, each with the name it is shipped under:
/// an integration test by its own name, a library's or binary's unit tests as
/// `<name>-lib` and `<name>-bin` (a package's library and binary share a name).
fn test_executables(messages: &str) -> Vec<(String, String)> {
    let field = |line: &str, key: &str| -> Option<String> {
        let (_, rest) = line.split_once(&format!("\"{key}\":\""))?;
        rest.split_once('"').map(|(value, _)| value.to_owned())
    };
    messages
        .lines()
        .filter(|line| line.contains("\"reason\":\"compiler-artifact\""))
        // The profile says whether this is a test build; the target's own `"test":true`
        // only says the target has tests, and is there for the release binary too.
        .filter(|line| {
            line.split_once("\"profile\":{")
                .and_then(|(_, rest)| rest.split_once('}'))
                .is_some_and(|(profile, _)| profile.contains("\"test\":true"))
        })
        .filter_map(|line| {
            let executable = field(line, "executable")?;
            let (_, target) = line.split_once("\"target\":{")?;
            let name = field(target, "name")?;
            let (_, kinds) = target.split_once("\"kind\":[\"")?;
            let (kind, _) = kinds.split_once('"')?;
            let shipped = match kind {
                "test" => name,
                other => format!("{name}-{other}"),
            };
            Some((shipped, executable))
        })
        .collect()
}

fn make_executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|err| format!("could not make {} executable: {err}", path.display()))
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

    #[test]
    fn test_executables_are_read_from_cargo_messages() {
        let messages = r#"{"reason":"compiler-artifact","target":{"kind":["test"],"crate_types":["bin"],"name":"gpu","src_path":"/t/tests/gpu.rs","test":true},"profile":{"opt_level":"3","test":true},"executable":"/t/release/deps/gpu-abc"}
{"reason":"compiler-artifact","target":{"kind":["lib"],"crate_types":["lib"],"name":"streamlab","src_path":"/t/src/lib.rs","test":true},"profile":{"opt_level":"3","test":true},"executable":"/t/release/deps/streamlab-111"}
{"reason":"compiler-artifact","target":{"kind":["bin"],"crate_types":["bin"],"name":"streamlab","src_path":"/t/src/main.rs","test":true},"profile":{"opt_level":"3","test":true},"executable":"/t/release/deps/streamlab-222"}
{"reason":"compiler-artifact","target":{"kind":["bin"],"crate_types":["bin"],"name":"streamlab","src_path":"/t/src/main.rs","test":true},"profile":{"opt_level":"3","test":false},"executable":"/t/release/streamlab"}
{"reason":"build-finished","success":true}"#;
        let found = test_executables(messages);
        let found: Vec<(&str, &str)> = (found.iter())
            .map(|(name, path)| (name.as_str(), path.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("gpu", "/t/release/deps/gpu-abc"),
                ("streamlab-lib", "/t/release/deps/streamlab-111"),
                ("streamlab-bin", "/t/release/deps/streamlab-222"),
            ]
        );
    }
}
