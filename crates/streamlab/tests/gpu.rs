//! The whole program on a GPU: `streamlab --quick run-all` must finish, verify every
//! experiment, and write the summary and the report. Skips, saying so, where there is
//! no NVIDIA driver (as on CI).
use std::process::Command;

use streamlab::results::{RunSummary, files};

#[test]
fn quick_run_all_verifies_every_experiment() {
    if !streamlab::runtime::driver_present() {
        eprintln!(
            "skipped: no NVIDIA driver on this machine, so the GPU run cannot be tested here"
        );
        return;
    }
    let out = std::env::temp_dir().join(format!("streamlab-gpu-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_streamlab"))
        .args(["--quick", "run-all", "--out"])
        .arg(&out)
        .status()
        .expect("streamlab runs");
    assert!(status.success(), "run-all failed: {status}");
    let text = std::fs::read_to_string(out.join(files::SUMMARY)).expect("summary.json written");
    let summary: RunSummary = serde_json::from_str(&text).expect("summary.json parses");
    let e = &summary.experiments;
    assert!(e.sincos_overlap.as_ref().is_some_and(|x| x.verified));
    assert!(
        e.matmul_streams
            .as_ref()
            .is_some_and(|x| x.verified && x.ms_by_streams.len() == 16)
    );
    assert!(e.memcpy_kernel.as_ref().is_some_and(|x| x.verified));
    assert!(out.join("report.html").is_file());
    std::fs::remove_dir_all(&out).expect("clean up");
}
