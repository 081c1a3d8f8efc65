//! The `streamlab` binary from outside, on a machine without a GPU: help texts, usage
//! errors (exit 2, one line, nothing written), a clear error without an NVIDIA driver
//! (exit 1), `report` writing only into `--out`, and SIGTERM during `report` (exit 143,
//! no half-written file).
use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use streamlab_results::experiments;

/// The binary under test: `STREAMLAB_BIN` (set by `run-tests.sh` on a GPU machine), else
/// cargo's.
fn binary() -> PathBuf {
    std::env::var_os("STREAMLAB_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_streamlab")),
        PathBuf::from,
    )
}

fn streamlab(args: &[&str]) -> Output {
    Command::new(binary())
        .args(args)
        .output()
        .expect("streamlab runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("streamlab-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The checkout `STREAMLAB_ROOT` names (set by `run-tests.sh`), else this one.
fn root() -> PathBuf {
    std::env::var_os("STREAMLAB_ROOT").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
        PathBuf::from,
    )
}

/// The committed H100 results.
fn h100() -> PathBuf {
    root().join("docs/results/h100")
}

/// A recorded H200 run kept with the results crate's tests.
fn h200() -> PathBuf {
    root().join("crates/streamlab-results/tests/runs/h200-2026-11-25")
}

fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    (std::fs::read_dir(dir).unwrap())
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

/// Whether this machine can load an NVIDIA driver (then the no-driver test skips).
fn driver_present() -> bool {
    [
        "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
        "/usr/lib64/libcuda.so.1",
        "/usr/lib/libcuda.so.1",
    ]
    .iter()
    .any(|p| Path::new(p).exists())
}

/// Every registered experiment's name, and whether it runs the project's kernels.
fn registered() -> Vec<(&'static str, bool)> {
    (experiments::ALL.iter())
        .map(|e| (e.name(), e.uses_kernel_sets()))
        .collect()
}

#[test]
fn every_command_has_help_and_only_its_own_options() {
    let out = streamlab(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().count() <= 40,
        "--help is more than a screen: {} lines",
        text.lines().count()
    );
    let experiments = registered();
    assert!(experiments.len() >= 14, "{experiments:?}");
    let others = [
        ("device-info", false),
        ("run-all", true),
        ("report", false),
        ("compare", false),
    ];
    for (command, kernels) in experiments.iter().copied().chain(others) {
        let listed: Vec<&str> = (text.lines())
            .filter(|l| l.trim_start().starts_with(&format!("{command} ")))
            .collect();
        assert_eq!(listed.len(), 1, "--help lists {command} on one line");
        let next = text.lines().skip_while(|l| !listed.contains(l)).nth(1);
        assert!(
            next.is_some_and(|l| !l.starts_with("                    ")),
            "{command}'s line in --help runs on"
        );
        let help = streamlab(&[command, "--help"]);
        assert!(help.status.success(), "{command} --help failed");
        let text = String::from_utf8_lossy(&help.stdout);
        let short = streamlab(&[command, "-h"]);
        assert!(
            short.stdout.len() < help.stdout.len(),
            "{command}: -h is not shorter than --help"
        );
        for line in text
            .lines()
            .chain(String::from_utf8_lossy(&short.stdout).lines())
        {
            assert!(line.chars().count() <= 100, "{command}: {line}");
        }
        let measures = !matches!(command, "report" | "compare" | "device-info");
        assert_eq!(text.contains("--quick"), measures, "{command}: --quick");
        assert_eq!(
            text.contains("--out"),
            command != "device-info",
            "{command}: --out"
        );
        assert_eq!(
            text.contains("--device"),
            !matches!(command, "report" | "compare"),
            "{command}: --device"
        );
        assert_eq!(text.contains("--kernels"), kernels, "{command}: --kernels");
    }
    let text =
        String::from_utf8_lossy(&streamlab(&["memcpy-kernel", "--help"]).stdout).into_owned();
    for default in [
        "[default: 128]",
        "[default: 0..=4096]",
        "[default: 64]",
        "[default: 8]",
        "[default: 16]",
    ] {
        assert!(
            text.contains(default),
            "memcpy-kernel --help lacks {default}"
        );
    }
}

#[test]
fn bad_values_are_usage_errors_in_one_line_with_nothing_written() {
    let out_dir = scratch("usage");
    let out = out_dir.to_str().unwrap();
    for (args, expected) in [
        (vec!["sincos-overlap", "--iterations", "0"], "--iterations"),
        (
            vec!["sincos-overlap", "--iterations", "2", "--batches", "5"],
            "--batches 5 exceeds --iterations 2",
        ),
        (
            vec!["memcpy-kernel", "--streams", "5000000"],
            "--streams 5000000 is out of range",
        ),
        (vec!["memcpy-kernel", "--cycles", "9..=3"], "--cycles"),
        (
            vec!["kernel-concurrency", "--stream-counts", "0"],
            "--stream-counts",
        ),
        (vec!["kernel-concurrency", "--queues", "64"], "--queues"),
        (vec!["launch-overhead", "--launches", "0"], "--launches"),
        (
            vec![
                "overlap-map",
                "--min-exponent",
                "20",
                "--max-exponent",
                "12",
            ],
            "exceeds --max-exponent",
        ),
        (
            vec!["overlap", "--ptx", "/nonexistent.ptx", "--kernel", "k"],
            "no such file",
        ),
        (vec!["sincos-overlap", "--bogus"], "unexpected argument"),
        (
            vec!["peer-copy", "--devices", "0,1,0"],
            "--devices names GPU 0 twice",
        ),
        (vec!["peer-copy", "--devices", "0,x"], "--devices"),
        (vec!["peer-copy", "--devices", "1"], "names one (1)"),
        (
            vec!["multi-gpu-overlap", "--devices", "2,2"],
            "--devices names GPU 2 twice",
        ),
        (vec!["multi-gpu-overlap", "--devices", "1,y"], "--devices"),
        (
            vec!["multi-gpu-overlap", "--devices", "0"],
            "multi-gpu-overlap needs two or more GPUs but --devices names one (0)",
        ),
        (
            vec!["multi-gpu-overlap", "--iterations", "3", "--batches", "4"],
            "--batches 4 exceeds --iterations 3",
        ),
    ] {
        let mut all = args.clone();
        all.extend(["--out", out]);
        let output = streamlab(&all);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(expected),
            "{args:?}: {err}"
        );
        assert!(!out_dir.exists(), "{args:?} wrote {}", out_dir.display());
    }
}

/// `args` is a usage error of one line, exit 2, naming each of `names` and the help of
/// `command`.
fn names_in_one_line(args: &[&str], names: &[&str], command: &str) {
    let output = streamlab(args);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
    for name in names {
        assert!(err.contains(name), "{args:?} does not name {name}: {err}");
    }
    let help = match command {
        "" => "(see streamlab --help)".to_owned(),
        command => format!("(see streamlab {command} --help)"),
    };
    assert!(err.trim_end().ends_with(&help), "{args:?}: {err}");
}

#[test]
fn every_command_names_its_missing_or_bad_argument_in_one_line() {
    let experiments = registered();
    let others = [("device-info", false), ("run-all", true)];
    for (command, kernels) in experiments.iter().copied().chain(others) {
        names_in_one_line(
            &[command, "--no-such-option"],
            &["'--no-such-option'"],
            command,
        );
        names_in_one_line(
            &[command, "--device", "x"],
            &["'--device <DEVICE>'"],
            command,
        );
        if command != "device-info" {
            names_in_one_line(&[command, "--out"], &["'--out <OUT>'"], command);
        }
        if kernels {
            names_in_one_line(
                &[command, "--form", "fast"],
                &["'fast'", "'--form <FORM>'", "plain, safe, tuned"],
                command,
            );
            names_in_one_line(
                &[command, "--kernels", "c"],
                &["'--kernels <KERNELS>'", "rust, cuda, both"],
                command,
            );
        }
    }
    names_in_one_line(&["report"], &["<DIR>"], "report");
    names_in_one_line(&["report", "--from"], &["'--from <DIR>'"], "report");
    names_in_one_line(&["compare"], &["<A>", "<B>"], "compare");
    names_in_one_line(&["compare", "/tmp"], &["<B>"], "compare");
    names_in_one_line(
        &["compare", "a", "b", "--min-change", "200%"],
        &["'--min-change <MIN_CHANGE>'", "200%"],
        "compare",
    );
    names_in_one_line(
        &["overlap"],
        &["--ptx <PTX>", "--kernel <KERNEL>"],
        "overlap",
    );
    names_in_one_line(&["no-such-command"], &["'no-such-command'"], "");
}

#[test]
fn help_of_help_and_list_defaults_as_they_are_typed() {
    let help = streamlab(&["help", "--help"]);
    assert!(help.status.success(), "{}", stderr(&help));
    assert!(String::from_utf8_lossy(&help.stdout).contains("Usage: streamlab"));
    let text =
        String::from_utf8_lossy(&streamlab(&["sincos-overlap", "--help"]).stdout).into_owned();
    assert!(text.contains("[default: 2,4,8,16]"), "{text}");
    // What the help shows is what the option takes.
    let typed = streamlab(&["sincos-overlap", "--stream-counts", "2,4,8,16", "--help"]);
    assert!(typed.status.success(), "{}", stderr(&typed));
}

#[test]
fn negative_values_parse_where_a_value_may_be_negative() {
    let output = streamlab(&["memcpy-kernel", "--add-value", "-7", "--help"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let output = streamlab(&["memcpy-kernel", "--add-value", "-7", "--cycles", "-1"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--cycles"), "{}", stderr(&output));
}

#[test]
fn no_driver_is_one_clear_line_exit_1_and_nothing_written() {
    if driver_present() {
        eprintln!("skipped: this machine has an NVIDIA driver");
        return;
    }
    let out_dir = scratch("nodriver");
    for command in [
        "sincos-overlap",
        "peer-copy",
        "multi-gpu-overlap",
        "run-all",
        "device-info",
    ] {
        let mut args = vec![command];
        if command != "device-info" {
            args.extend(["--quick", "--out", out_dir.to_str().unwrap()]);
        }
        let output = streamlab(&args);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{command}: {err}");
        assert_eq!(err.lines().count(), 1, "{command}: {err}");
        assert!(
            err.contains("no NVIDIA driver") && err.contains("machine with an NVIDIA GPU"),
            "{command}: {err}"
        );
        assert!(!out_dir.exists(), "{command} wrote {}", out_dir.display());
    }
}

#[test]
fn report_writes_into_out_and_leaves_the_results_untouched() {
    let before = contents(&h100());
    let out = scratch("report-out");
    let output = streamlab(&[
        "report",
        "--from",
        h100().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(contents(&h100()), before, "docs/results/h100 changed");
    let written = contents(&out);
    for name in [
        "report.md",
        "report.html",
        "sincos-overlap.svg",
        "sincos-overlap-timeline-1.svg",
        "sincos-overlap-trace-1.json",
    ] {
        assert!(written.contains_key(name), "{name} not written");
    }
    assert!(String::from_utf8_lossy(&output.stdout).contains("report.html"));
    std::fs::remove_dir_all(&out).unwrap();
    let empty = scratch("report-empty");
    std::fs::create_dir_all(&empty).unwrap();
    let output = streamlab(&["report", "--from", empty.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("holds no streamlab results"),
        "{}",
        stderr(&output)
    );
    // A folder that is not there is worded as compare words it.
    let missing = empty.join("missing");
    let report = streamlab(&["report", missing.to_str().unwrap()]);
    let compare = streamlab(&[
        "compare",
        missing.to_str().unwrap(),
        h100().to_str().unwrap(),
    ]);
    assert_eq!(report.status.code(), Some(2));
    assert_eq!(stderr(&report), stderr(&compare));
    std::fs::remove_dir_all(&empty).unwrap();
}

#[test]
fn compare_writes_into_out_and_a_bad_folder_is_a_usage_error_writing_nothing() {
    let out = scratch("compare-out");
    let h100 = h100();
    let output = streamlab(&[
        "compare",
        h100.to_str().unwrap(),
        h200().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--min-change",
        "4%",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let written = contents(&out);
    for name in ["report.md", "report.html", "comparison.json"] {
        assert!(written.contains_key(name), "{name} not written");
    }
    let json = String::from_utf8_lossy(&written["comparison.json"]).into_owned();
    assert!(json.contains("\"min_change\": 0.04"), "{json}");
    std::fs::remove_dir_all(&out).unwrap();
    let empty = scratch("compare-empty");
    std::fs::create_dir_all(&empty).unwrap();
    for (a, expected) in [
        (empty.clone(), "holds no streamlab results"),
        (empty.join("missing"), "does not exist"),
        (h200(), "are the same folder"),
    ] {
        let b = if a == h200() { h200() } else { h100.clone() };
        let output = streamlab(&[
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "not one line: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(expected),
            "{err}"
        );
        assert!(!out.exists(), "{} written", out.display());
    }
    std::fs::remove_dir_all(&empty).unwrap();
}

#[test]
fn sigterm_during_report_exits_143_and_leaves_no_half_written_file() {
    let complete = {
        let out = scratch("report-whole");
        assert!(
            streamlab(&[
                "report",
                "--from",
                h100().to_str().unwrap(),
                "--out",
                out.to_str().unwrap()
            ])
            .status
            .success()
        );
        let files = contents(&out);
        std::fs::remove_dir_all(&out).unwrap();
        files
    };
    // The signal must land after the handler is installed and before the last file is
    // written; try delays until one does.
    for delay_ms in [40, 20, 80, 10, 160, 5, 320] {
        let out = scratch(&format!("report-term-{delay_ms}"));
        let child = Command::new(binary())
            .args([
                "report",
                "--from",
                h100().to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let output = child.wait_with_output().unwrap();
        let files = if out.exists() {
            contents(&out)
        } else {
            BTreeMap::new()
        };
        let _ = std::fs::remove_dir_all(&out);
        if output.status.code() != Some(143) {
            assert!(
                output.status.success() || output.status.signal() == Some(15),
                "{:?}",
                output.status
            );
            continue;
        }
        let err = stderr(&output);
        assert_eq!(
            err.lines().filter(|l| l.starts_with("error")).count(),
            1,
            "{err}"
        );
        assert!(err.contains("SIGTERM"), "{err}");
        assert!(files.len() < complete.len(), "every file was written");
        for (name, bytes) in &files {
            assert_eq!(Some(bytes), complete.get(name), "{name} is not whole");
        }
        return;
    }
    panic!("no SIGTERM landed while the report was being written");
}

#[test]
fn a_used_out_folder_is_refused_before_anything_runs() {
    let out = scratch("used-out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    for command in ["sincos-overlap", "run-all"] {
        let output = streamlab(&[command, "--quick", "--out", out.to_str().unwrap()]);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{command}: {err}");
        assert_eq!(err.lines().count(), 1, "{command}: {err}");
        assert!(
            err.contains("already holds files (notes.txt)") && err.contains("one run"),
            "{command}: {err}"
        );
    }
    assert_eq!(contents(&out).len(), 1);
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn report_of_a_folder_missing_an_experiment_names_it() {
    let dir = scratch("report-missing");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in contents(&h100()) {
        if name.ends_with(".json") && !name.contains("-trace-") && name != "mapped.json" {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
    }
    let output = streamlab(&["report", "--from", dir.to_str().unwrap()]);
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert!(
        err.contains("mapped (mapped.json) is not in"),
        "not named on stderr: {err}"
    );
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("> **Not in this folder.** mapped (mapped.json)"));
    assert!(!md.contains("](mapped.md)") && !dir.join("mapped.md").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
