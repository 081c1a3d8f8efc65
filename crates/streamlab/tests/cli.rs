//! The `streamlab` binary from outside: help texts, usage errors (exit 2, one line,
//! nothing written), and a clear error on a machine without an NVIDIA driver (exit 1).
use std::path::PathBuf;
use std::process::{Command, Output};

fn streamlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_streamlab"))
        .args(args)
        .output()
        .expect("streamlab runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("streamlab-cli-{name}-{}", std::process::id()))
}

#[test]
fn every_command_explains_what_it_measures() {
    for (command, words) in [
        ("matmul-streams", "tasks-per-stream"),
        ("memcpy-kernel", "Amdahl"),
        ("sincos-overlap", "copy-engine bound"),
        ("run-all", "summary.json"),
        ("device-info", "copy engines"),
    ] {
        let out = streamlab(&[command, "--help"]);
        assert!(out.status.success(), "{command} --help failed");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(words),
            "{command} --help lacks {words:?}:\n{text}"
        );
        assert!(
            text.contains("--quick") && text.contains("--out"),
            "{command}: no global options"
        );
    }
    let text =
        String::from_utf8_lossy(&streamlab(&["memcpy-kernel", "--help"]).stdout).into_owned();
    for default in [
        "[default: 128]",
        "[default: 0..=4096]",
        "[default: 64]",
        "[default: 8]",
        "[default: 16]",
        "[default: 256]",
        "[default: 204]",
    ] {
        assert!(
            text.contains(default),
            "memcpy-kernel --help lacks {default}"
        );
    }
}

#[test]
fn bad_values_are_usage_errors_with_one_line_and_nothing_written() {
    let cases: [&[&str]; 8] = [
        &["sincos-overlap", "--streams", "0"],
        &["sincos-overlap", "--elements", "0"],
        &["sincos-overlap", "--elements", "8", "--stream-counts", "16"],
        &["matmul-streams", "--rows", "0"],
        &["matmul-streams", "--max-streams", "0"],
        &["memcpy-kernel", "--cycles-step", "0"],
        &["memcpy-kernel", "--streams", "0"],
        &["memcpy-kernel", "--size", "0"],
    ];
    for args in cases {
        let out_dir = scratch("usage");
        let mut full = vec!["--out", out_dir.to_str().unwrap()];
        full.extend_from_slice(args);
        let out = streamlab(&full);
        let message = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {message}");
        assert_eq!(message.lines().count(), 1, "{args:?}: {message}");
        assert!(message.starts_with("error: "), "{args:?}: {message}");
        assert!(!message.contains("panicked"), "{args:?}: {message}");
        assert!(!out_dir.exists(), "{args:?} created {}", out_dir.display());
    }
}

#[test]
fn malformed_values_are_rejected_by_the_parser() {
    for args in [
        &["memcpy-kernel", "--cycles", "9..=3"][..],
        &["memcpy-kernel", "--cycles", "1..5"],
        &["matmul-streams", "--rows", "-1"],
        &["sincos-overlap", "--iterations", "many"],
        &["frobnicate"],
    ] {
        let out = streamlab(args);
        let message = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {message}");
        assert!(message.starts_with("error: "), "{args:?}: {message}");
        assert!(!message.contains("panicked"));
    }
}

#[test]
fn no_driver_is_one_clear_line_and_exit_1() {
    if streamlab::runtime::driver_present() {
        eprintln!(
            "skipped: an NVIDIA driver is present on this machine, so the no-driver path cannot be shown"
        );
        return;
    }
    for args in [
        &["device-info"][..],
        &["--quick", "run-all"],
        &["sincos-overlap"],
    ] {
        let out_dir = scratch("nodriver");
        let mut full = vec!["--out", out_dir.to_str().unwrap()];
        full.extend_from_slice(args);
        let out = streamlab(&full);
        let message = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {message}");
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(message.contains("no NVIDIA driver found"), "{message}");
        assert!(!out_dir.exists(), "{args:?} created {}", out_dir.display());
    }
}

#[test]
fn report_from_a_folder_without_results_fails_clearly() {
    let empty = scratch("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = streamlab(&["report", "--from", empty.to_str().unwrap()]);
    let message = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{message}");
    assert!(message.contains("holds no streamlab results"), "{message}");
    std::fs::remove_dir_all(&empty).unwrap();
}
