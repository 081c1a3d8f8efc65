//! The whole program on a GPU: `streamlab run-all --quick` must finish, verify every
//! experiment, pass every trace check from the GPU's own records (or mark the trace
//! disturbed once its retraces ran out), and write the summary and the report; a shape
//! whose chunks do not divide evenly must hold every row to bounds it does not beat.
//! Skips, saying so, where there is no NVIDIA driver (as on CI); on a GPU machine it runs
//! from `cargo xtask dist`'s `run-tests.sh` (which points STREAMLAB_BIN at the shipped
//! binary).
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use streamlab_results::derived::summary::RunSummary;
use streamlab_results::saved::timeline::{OpKind, Timeline};

fn binary() -> PathBuf {
    std::env::var_os("STREAMLAB_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_streamlab")),
        PathBuf::from,
    )
}

/// `streamlab <args> --out <out>`, run to its end.
fn streamlab(args: &[&str], out: &Path) -> Output {
    let output = Command::new(binary())
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .expect("streamlab runs");
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    output
}

/// `output` ran to success, else its standard error.
fn succeeded(output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}: {stderr}", output.status);
}

fn gpu_present() -> bool {
    if streamlab::runtime::driver_present() {
        return true;
    }
    eprintln!("skipped: no NVIDIA driver on this machine, so the GPU run cannot be tested here");
    false
}

fn json(dir: &Path, name: &str) -> Value {
    let text = std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn quick_run_all_verifies_every_experiment_and_every_trace() {
    if !gpu_present() {
        return;
    }
    let out = std::env::temp_dir().join(format!("streamlab-gpu-{}", std::process::id()));
    let output = streamlab(&["run-all", "--quick"], &out);
    succeeded(&output);
    // Every line it prints, results and news alike, keeps to 100 columns.
    for printed in [&output.stdout, &output.stderr] {
        let text = String::from_utf8_lossy(printed);
        let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > 100).collect();
        assert!(wide.is_empty(), "lines past 100 columns: {wide:#?}");
    }
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    let summary: RunSummary = serde_json::from_str(&text).expect("summary.json parses");
    assert!(summary.complete, "{:?}", summary.steps_not_run);
    let headline = |name: &str| summary.experiment(name).cloned().unwrap_or_default();
    let sincos = headline("sincos-overlap");
    assert!(
        sincos["verified"] == true && sincos["rows_beyond_bound"] == 0,
        "{sincos}"
    );
    // The hosts are compared once per session: in the Rust kernels' run (where nvcc is
    // found), not again in the CUDA C++ kernels' run.
    let rust_hosts = json(&out, "sincos-overlap.json")["cpp_host"].clone();
    assert!(
        rust_hosts.get("built").is_some()
            || rust_hosts["skipped"]
                .as_str()
                .is_some_and(|s| s.contains("nvcc")),
        "{rust_hosts}"
    );
    let cuda_hosts = json(&out, "sincos-overlap-cuda.json")["cpp_host"].clone();
    assert!(
        cuda_hosts["skipped"]
            .as_str()
            .is_some_and(|s| s.contains("once per session, in the run with the Rust kernels")),
        "{cuda_hosts}"
    );
    let matmul = headline("matmul-streams");
    assert!(
        matmul["verified"] == true
            && matmul["ms_by_streams"]
                .as_array()
                .is_some_and(|ms| ms.len() == 16),
        "{matmul}"
    );
    assert_eq!(headline("memcpy-kernel")["verified"], true);
    for name in [
        "kernel-concurrency",
        "launch-overhead",
        "graph-overlap",
        "overlap-map",
        "mapped",
    ] {
        assert_eq!(
            json(&out, &format!("{name}.json"))["verification"]["passed"],
            true,
            "{name}"
        );
    }
    every_trace_from_cupti_passes_or_is_marked_disturbed(&out);
    // Every break beside its remedies, measured in the same run.
    let breaks = json(&out, "concurrency-breaks.json");
    assert_eq!(breaks["verification"]["passed"], true);
    let remedies = breaks["derived"]["remedies"].as_array().expect("remedies");
    use streamlab_results::experiments::concurrency_breaks::Case;
    let remedy_cases = Case::ALL.iter().filter(|c| c.remedies().is_some()).count();
    assert_eq!(remedies.len(), remedy_cases, "{remedies:?}");
    assert!(out.join("concurrency-breaks-remedies.csv").is_file());
    // Every way of launching a dependent chain, with both kernel sets, every step counted.
    let dependent = json(&out, "dependent-launch.json");
    assert_eq!(
        dependent["verification"]["passed"], true,
        "{}",
        dependent["verification"]
    );
    assert_eq!(
        dependent["points"].as_array().expect("points").len(),
        3 * 2 * 2
    );
    // Both kinds of work, both ways, each probe's wait read from the GPU's records.
    let priorities = json(&out, "stream-priorities.json");
    assert_eq!(priorities["verification"]["passed"], true);
    let ways = priorities["ways"].as_array().expect("ways");
    assert_eq!(ways.len(), 4, "{ways:?}");
    for way in ways {
        assert!(!way["waits_ms"].as_array().unwrap().is_empty(), "{way}");
    }
    assert!(out.join("report.html").is_file());
    std::fs::remove_dir_all(&out).expect("clean up");
}

/// Every traced timeline of the quick run in `out` comes from CUPTI and passes every
/// check, or, where the machine's other traffic kept failing one through every retrace,
/// says so: marked disturbed after its four retraces.
fn every_trace_from_cupti_passes_or_is_marked_disturbed(out: &Path) {
    for name in [
        "sincos-overlap",
        "memcpy-kernel",
        "matmul-streams",
        "kernel-concurrency",
    ] {
        let doc = json(out, &format!("{name}.json"));
        let checks = doc["trace_checks"].as_array().expect("trace checks");
        assert!(
            !checks.is_empty() || name == "kernel-concurrency",
            "{name} traced nothing"
        );
        for c in checks {
            assert_eq!(c["source"], "cupti", "{name}: {c}");
            let failed =
                (c["checks"].as_array().unwrap().iter()).any(|check| check["outcome"] == "failed");
            assert_eq!(c["disturbed"], failed, "{name}: {c}");
            if failed {
                assert_eq!(
                    c["retraces"], 4,
                    "{name}: disturbed before its retraces ran out: {c}"
                );
            }
            assert!(
                c["occupancy"]["span_ms"].as_f64().unwrap() > 0.0,
                "{name}: {c}"
            );
        }
    }
}

/// `output` is a refusal: exit status 2, one line saying `why`, nothing written to `out`.
fn refused(output: &Output, out: &Path, why: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr}");
    assert!(stderr.contains(why), "{stderr}");
    assert!(!out.exists(), "wrote {}", out.display());
}

/// Runs `experiment --quick` with `args`, which needs two or more GPUs: `false` where this
/// machine has `gpus` < 2 and it refused, saying so in one line; `true` where it succeeded.
fn ran_on_several_gpus(experiment: &str, args: &[&str], out: &Path, gpus: usize) -> bool {
    let output = streamlab(&[&[experiment, "--quick"][..], args].concat(), out);
    if gpus < 2 {
        let why = format!("{experiment} needs two or more GPUs; this machine has 1");
        refused(&output, out, &why);
        return false;
    }
    succeeded(&output);
    true
}

#[test]
fn peer_copy_runs_every_ordered_pair_or_says_in_one_line_why_it_cannot() {
    if !gpu_present() {
        return;
    }
    let gpus = streamlab::runtime::peer::gpu_names().expect("the driver lists its GPUs");
    let out = std::env::temp_dir().join(format!("streamlab-gpu-peer-{}", std::process::id()));
    if !ran_on_several_gpus("peer-copy", &[], &out, gpus.len()) {
        return;
    }
    let doc = json(&out, "peer-copy.json");
    assert_eq!(doc["verification"]["passed"], true);
    let pairs = doc["pairs"].as_array().expect("pairs");
    assert_eq!(pairs.len(), gpus.len() * (gpus.len() - 1));
    for src in 0..gpus.len() {
        for dst in (0..gpus.len()).filter(|&d| d != src) {
            assert!(
                pairs.iter().any(|p| p["src"] == src && p["dst"] == dst),
                "no result for GPU {src} to {dst}"
            );
        }
    }
    let matrix = doc["derived"]["matrix"].as_array().expect("matrix");
    assert!(
        matrix
            .iter()
            .all(|p| p["rates"][0]["gbps"].as_f64().is_some_and(|r| r > 0.0)),
        "{matrix:?}"
    );
    peer_copy_staged_rows_ran_with_peer_access_off(&doc, gpus.len());
    std::fs::remove_dir_all(&out).expect("clean up");
    let missing = gpus.len().to_string();
    let output = streamlab(
        &["peer-copy", "--quick", "--devices", &format!("0,{missing}")],
        &out,
    );
    refused(&output, &out, &format!("names GPU {missing}"));
}

/// peer-copy's result `doc` over `gpus` GPUs: every GPU named in its parameters, every
/// pair's staged copies run with peer access checked off by the driver, and, where NVML
/// reports NVLinks between a pair, its staged copies far below its copies over them and
/// no row above the links' rate; the copies over the link timed behind the gate, and
/// each GPU's copy to itself measured.
fn peer_copy_staged_rows_ran_with_peer_access_off(doc: &Value, gpus: usize) {
    let ordinals: Vec<usize> = (0..gpus).collect();
    assert_eq!(doc["params"]["devices"], serde_json::json!(ordinals));
    assert_eq!(doc["gated"], true);
    for pair in doc["pairs"].as_array().expect("pairs") {
        assert_eq!(
            pair["access"]["staged_checked_off"], true,
            "{}",
            pair["access"]
        );
    }
    let links = doc["links"].as_array().expect("links");
    assert_eq!(links.len(), gpus * (gpus - 1), "{links:?}");
    let matrix = doc["derived"]["matrix"].as_array().expect("matrix");
    let mut over_nvlink = 0;
    for link in links {
        let Some(nvlink) = link["joined"].get("nv_link") else {
            eprintln!("GPU {} to {}: {}", link["src"], link["dst"], link["joined"]);
            continue;
        };
        over_nvlink += 1;
        let row = (matrix.iter())
            .find(|p| p["src"] == link["src"] && p["dst"] == link["dst"])
            .expect("a matrix row per pair");
        let rate = |method: usize| row["rates"][method]["gbps"].as_f64();
        let (staged, peer) = (rate(0), rate(2));
        assert!(
            staged.zip(peer).is_some_and(|(off, on)| off < on / 3.0),
            "staged {staged:?} GB/s is not far below {peer:?} GB/s over {nvlink}"
        );
    }
    let derived_links = doc["derived"]["links"].as_array().expect("derived links");
    assert!(
        derived_links.iter().all(|l| l["above_link"] == 0),
        "a row above its link: {derived_links:?}"
    );
    let local = doc["derived"]["local"].as_array().expect("local");
    assert!(
        !local.is_empty()
            && local
                .iter()
                .all(|l| l["gbps"].as_f64().is_some_and(|r| r > 0.0)),
        "{local:?}"
    );
    eprintln!("{over_nvlink} of {} ordered pairs over NVLink", links.len());
}

/// allreduce-overlap's quick run with `args` into `out`: `None` where it refused in one
/// line (fewer than two GPUs, or no NCCL here), saying which.
fn allreduce_overlap(args: &[&str], out: &Path, gpus: usize) -> Option<Output> {
    let output = streamlab(&[&["allreduce-overlap", "--quick"][..], args].concat(), out);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if gpus < 2 {
        refused(
            &output,
            out,
            "allreduce-overlap needs two or more GPUs; this machine has 1",
        );
        return None;
    }
    if output.status.code() == Some(2) && stderr.contains("NCCL") {
        refused(&output, out, "pip install nvidia-nccl-cu13");
        eprintln!("skipped: no usable NCCL on this machine: {stderr}");
        return None;
    }
    Some(output)
}

#[test]
fn allreduce_overlap_verifies_every_bucket_and_fails_without_its_stream_wait() {
    if !gpu_present() {
        return;
    }
    let gpus = streamlab::runtime::peer::gpu_names()
        .expect("the driver lists its GPUs")
        .len();
    let out = std::env::temp_dir().join(format!("streamlab-gpu-allreduce-{}", std::process::id()));
    let small = [
        "--bucket-mib",
        "1,4",
        "--budgets",
        "default,2",
        "--budget-mib",
        "4",
    ];
    let Some(output) = allreduce_overlap(&small, &out, gpus) else {
        return;
    };
    succeeded(&output);
    let doc = json(&out, "allreduce-overlap.json");
    assert_eq!(doc["verification"]["passed"], true);
    assert_eq!(doc["gpus"].as_array().map(Vec::len), Some(gpus));
    let nccl = &doc["provenance"]["nccl"];
    assert!(
        nccl["version"].as_str().is_some_and(|v| v.starts_with('2')),
        "{nccl}"
    );
    let variables = nccl["variables"].as_array().expect("the NCCL variables");
    assert!(
        variables.contains(&serde_json::json!("NCCL_NVLS_ENABLE=0")),
        "{nccl}"
    );
    // Bucket sizes 1 and 4 MiB at the default budget, and 4 MiB capped at 2 CTAs.
    let rows = doc["derived"]["overlap"].as_array().expect("overlap rows");
    assert_eq!(rows.len(), 3);
    let buckets = doc["params"]["buckets"].as_f64().expect("buckets");
    for row in rows {
        assert!(row["bound_ms"].as_f64().is_some_and(|b| b > 0.0), "{row}");
        // At the bound the overlap hides 1 − 1/K of the shorter side, and no more (a
        // few percent of noise aside).
        let hidden = row["hidden"].as_f64().expect("hidden");
        assert!(hidden <= 1.0 - 1.0 / buckets + 0.05, "{row}");
    }
    assert!(out.join("allreduce-overlap.csv").is_file());
    assert!(out.join("allreduce-overlap-alone.csv").is_file());
    std::fs::remove_dir_all(&out).expect("clean up");
    // Without the wait for its bucket, an all-reduce sums the poison: the check fails.
    let broken = [
        "--bucket-mib",
        "4",
        "--budgets",
        "default",
        "--budget-mib",
        "4",
        "--drop-wait",
    ];
    let output = allreduce_overlap(&broken, &out, gpus).expect("it ran above");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("overlapped") && stderr.contains("wrong"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn multi_gpu_overlap_verifies_every_gpus_share_or_says_in_one_line_why_it_cannot() {
    if !gpu_present() {
        return;
    }
    let gpus = streamlab::runtime::peer::gpu_names().expect("the driver lists its GPUs");
    let out = std::env::temp_dir().join(format!("streamlab-gpu-multi-{}", std::process::id()));
    // An element count that leaves the GPUs uneven shares.
    let uneven = ["--elements", "4194307"];
    if !ran_on_several_gpus("multi-gpu-overlap", &uneven, &out, gpus.len()) {
        return;
    }
    let doc = json(&out, "multi-gpu-overlap.json");
    assert_eq!(doc["verification"]["passed"], true);
    let shares = doc["gpus"].as_array().expect("gpus");
    assert_eq!(shares.len(), gpus.len());
    let covered: u64 = shares.iter().map(|g| g["elements"].as_u64().unwrap()).sum();
    assert_eq!(covered, 4_194_307);
    let derived = &doc["derived"];
    for key in ["/speedup", "/bound_speedup", "/bound/ms", "/host_link_gbps"] {
        assert!(
            derived
                .pointer(key)
                .and_then(Value::as_f64)
                .is_some_and(|x| x > 0.0),
            "{key}: {derived}"
        );
    }
    // The GPUs it ran on are named, and the host link's bound is the best of probes
    // before, between and after the timed batches.
    let every: Vec<usize> = (0..gpus.len()).collect();
    assert_eq!(doc["params"]["devices"], serde_json::json!(every));
    let probes = &derived["host_link_probes"];
    for when in ["before", "between", "after"] {
        assert!(probes[when].as_u64().is_some_and(|n| n > 0), "{probes}");
    }
    // Every GPU's clocks, read before and after, and its host link are in the record.
    let recorded = doc["provenance"]["gpus"]
        .as_array()
        .expect("every GPU's probe");
    assert_eq!(recorded.len(), gpus.len());
    for (ordinal, g) in recorded.iter().enumerate() {
        assert_eq!(g["ordinal"], ordinal);
        let read = &g["clocks"]["read"];
        for at in ["before", "after"] {
            assert!(read[at]["sm_mhz"].as_u64().is_some_and(|m| m > 0), "{g}");
        }
        assert!(
            g["pcie"].get("generation").is_some() || g["pcie"].get("unread").is_some(),
            "{g}"
        );
    }
    // The traced batch has records of every GPU, each on that GPU's own rows.
    let timeline = &doc["timeline"];
    let traced = timeline["devices"].as_array().expect("the traced GPUs");
    assert_eq!(traced.len(), gpus.len(), "{traced:?}");
    let timeline: Timeline =
        serde_json::from_value(timeline.clone()).expect("the timeline reads back");
    for ordinal in 0..gpus.len() {
        assert!(
            (timeline.ops.iter())
                .any(|op| timeline.gpu_of(op) == Some(ordinal) && op.kind == OpKind::Kernel),
            "no kernel of GPU {ordinal} in the timeline"
        );
    }
    assert!(timeline.ops.iter().all(|op| timeline.gpu_of(op).is_some()));
    assert!(out.join("multi-gpu-overlap-timeline-1.svg").is_file());
    assert!(out.join("multi-gpu-overlap.csv").is_file());
    std::fs::remove_dir_all(&out).expect("clean up");
}

#[test]
fn the_four_stream_timeline_runs_the_copies_in_one_after_another_and_the_run_writes_its_report() {
    if !gpu_present() {
        return;
    }
    let out = std::env::temp_dir().join(format!("streamlab-gpu-trace-{}", std::process::id()));
    // 16 MiB chunks: large enough that copy durations are checked too and the host's issue
    // rate does not set the time.
    let chunks = ["--stream-counts", "4", "--elements", "16777216"];
    let rust = ["sincos-overlap", "--quick", "--kernels", "rust"];
    succeeded(&streamlab(&[&rust[..], &chunks].concat(), &out));
    // A single experiment writes what its help says: JSON, CSV, charts and a report.
    for file in [
        "sincos-overlap.csv",
        "sincos-overlap.svg",
        "sincos-overlap-timeline-1.svg",
        "report.md",
        "report.html",
        "sincos-overlap.md",
        "sincos-overlap.html",
    ] {
        assert!(out.join(file).is_file(), "{file} not written");
    }
    let doc = json(&out, "sincos-overlap.json");
    let timeline = &doc["timelines"][0];
    assert_eq!(timeline["source"], "cupti");
    let mut copies: Vec<(f64, f64)> = (timeline["ops"].as_array().unwrap().iter())
        .filter(|op| op["kind"] == "htod" && op["iteration"] == 1)
        .map(|op| {
            (
                op["start_ms"].as_f64().unwrap(),
                op["end_ms"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(copies.len(), 4);
    copies.sort_by(|a, b| a.0.total_cmp(&b.0));
    for pair in copies.windows(2) {
        assert!(
            pair[1].0 >= pair[0].1 - 0.001,
            "copies in overlap: {copies:?}"
        );
    }
    std::fs::remove_dir_all(&out).expect("clean up");
}

#[test]
fn uneven_small_chunks_keep_every_row_at_or_under_its_bounds_with_its_noise() {
    if !gpu_present() {
        return;
    }
    let out = std::env::temp_dir().join(format!("streamlab-gpu-uneven-{}", std::process::id()));
    let shape = [
        "--elements",
        "1000003",
        "--streams",
        "7",
        "--stream-counts",
        "1,3,7,13",
    ];
    let rust = [
        "sincos-overlap",
        "--kernels",
        "rust",
        "--iterations",
        "50",
        "--warmup",
        "5",
    ];
    succeeded(&streamlab(&[&rust[..], &shape].concat(), &out));
    let doc = json(&out, "sincos-overlap.json");
    assert_eq!(doc["verification"]["passed"], true);
    let link = &doc["provenance"]["link"];
    assert!(
        link["before"]["both"]["summary"]["min"].as_f64().unwrap() > 0.0,
        "{link}"
    );
    let configs = doc["derived"]["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 1 + 2 * 4);
    for c in configs {
        let median = c["median_ms"].as_f64().unwrap();
        assert!(c["noise"].as_f64().unwrap().is_finite(), "{c}");
        assert!(c["bound"]["ms"].as_f64().unwrap() <= median * 1.01, "{c}");
        if let Some(busiest) = c["busiest_bound"]["ms"].as_f64() {
            assert!(busiest <= median * 1.01, "{c}");
        }
    }
    let beyond_busiest = (configs.iter())
        .filter_map(|c| c["busiest_bound"]["timed_over_bound"].as_f64())
        .filter(|&over| streamlab_results::derived::pipeline::beyond(over, 1.0))
        .count();
    assert_eq!(beyond_busiest, 0, "{configs:?}");
    std::fs::remove_dir_all(&out).expect("clean up");
}

#[test]
fn rust_and_cuda_twins_agree_in_every_form_and_have_cards() {
    if !gpu_present() {
        return;
    }
    if !streamlab::runtime::baseline::nvrtc_present() {
        eprintln!("skipped: no NVRTC on this machine, so the CUDA C++ twins cannot be compiled");
        return;
    }
    let out = std::env::temp_dir().join(format!("streamlab-gpu-twins-{}", std::process::id()));
    succeeded(&streamlab(&["compare-kernels", "--quick"], &out));
    let doc = json(&out, "compare-kernels.json");
    assert!(doc["seed"].as_u64().is_some(), "the seed is recorded");
    let cases = doc["cases"].as_array().unwrap();
    for kernel in ["matmul", "add_kernel", "sincos"] {
        for form in ["plain", "safe", "tuned"] {
            assert!(
                cases.iter().any(|c| c["kernel"] == kernel
                    && c["form"] == form
                    && c["verification"]["passed"] == true),
                "{kernel} {form}"
            );
        }
    }
    assert!(
        cases
            .iter()
            .any(|c| c["kernel"] == "fill" && c["form"] == "safe")
    );
    // The sweep: shapes with tails and drawn ones, and matmul cold where it fits in L2.
    for origin in ["tail", "random"] {
        assert!(cases.iter().any(|c| c["origin"] == origin), "{origin}");
    }
    assert!(
        (cases.iter()).any(|c| c["kernel"] == "matmul" && c["cache"] == "cold"),
        "a cold matmul case"
    );
    // Every spelling ran, was checked, and has its card; C++ has more than one spelling
    // of the tuned matmul, and so has Rust.
    for c in cases {
        let spellings = c["spellings"].as_array().expect("spellings");
        for language in ["rust", "cuda"] {
            assert!(spellings.iter().any(|s| s["language"] == language), "{c}");
        }
        for s in spellings {
            assert_eq!(s["verification"]["passed"], true, "{s}");
            let card = &s["card"];
            assert!(card["driver"]["registers"].as_i64().unwrap() > 0, "{s}");
            assert!(card["driver"]["occupancy"].as_f64().unwrap() > 0.0, "{s}");
            assert!(card["ptx"]["global_stores"].as_u64().unwrap() >= 1, "{s}");
        }
    }
    let tuned = (cases.iter())
        .find(|c| c["kernel"] == "matmul" && c["form"] == "tuned")
        .unwrap();
    for language in ["rust", "cuda"] {
        let n = (tuned["spellings"].as_array().unwrap().iter())
            .filter(|s| s["language"] == language)
            .count();
        assert!(n > 1, "{language}: {n} spellings");
    }
    // --quick times the write-ups' matmul (warm) at two places, each with its own
    // launches, and each spelling's launches are its places' launches.
    let warm_defaults = (cases.iter())
        .filter(|c| c["kernel"] == "matmul" && c["origin"] == "defaults" && c["cache"] == "warm");
    for c in warm_defaults {
        let places = c["placements"].as_array().expect("placements");
        assert_eq!(places.len(), 2, "{c}");
        assert_ne!(places[0]["offsets_bytes"], places[1]["offsets_bytes"]);
        assert!(places.iter().all(|p| p["visits"] == 2), "{c}");
        for s in c["spellings"].as_array().unwrap() {
            let launches = |v: &Value| v["samples_ms"].as_array().unwrap().len();
            let each: usize = s["by_place"].as_array().unwrap().iter().map(launches).sum();
            assert_eq!(launches(&s["times"]), each, "{s}");
        }
    }
    // The safe forms leave no bounds check inside sincos, and the tuned ones none at all.
    let card = |kernel: &str, form: &str| {
        let c = (cases.iter())
            .find(|c| c["kernel"] == kernel && c["form"] == form)
            .unwrap();
        let rust = (c["spellings"].as_array().unwrap().iter())
            .find(|s| s["language"] == "rust" && s["entry"].as_str().unwrap().starts_with(kernel))
            .unwrap();
        rust["card"]["ptx"]["traps"].as_u64().unwrap()
    };
    assert_eq!(card("sincos", "safe"), 0);
    // Both math libraries within their documented error (libm 1 ulp, CUDA 2 ulps).
    for function in ["sinf", "cosf", "sincosf"] {
        let c = (cases.iter())
            .find(|c| c["kernel"] == function)
            .expect(function);
        assert_eq!(c["verification"]["passed"], true, "{c}");
        for ulps in c["max_ulps"].as_array().unwrap() {
            assert!(ulps.as_f64().unwrap() <= 2.0, "{c}");
        }
    }
    assert_eq!(card("matmul", "tuned"), 0);
    std::fs::remove_dir_all(&out).expect("clean up");
}
