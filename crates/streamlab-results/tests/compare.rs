//! Recorded runs compared (`tests/runs/`: A/A pairs of H100s and of H200s, each two
//! machines running one build, and an H200 running the H100 pair's build): every A/A pair
//! calls few rows changed, raw and controlled, and nothing that would fail `--fail-on`;
//! the H100 against the H200 still calls what the H200's memory changes; a change made on
//! purpose is caught; every verdict is in `comparison.json`; a run compared with itself
//! changes nothing; single-experiment folders compare; bad folders are one clear line
//! naming the file and the fault, and nothing is written for them; the output folder is
//! replaced whole.
use std::path::{Path, PathBuf};

use streamlab_results::compare::{self, CompareError, ComparedRun, FailOn};
use streamlab_results::saved::KernelSet;
use streamlab_results::verdict::Verdict;

/// A recorded run kept with the tests.
fn recorded(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/runs")
        .join(name)
}

/// The A/A pair: one build on two H100 machines.
const H100_A: &str = "h100-2026-11-25-0810";
const H100_B: &str = "h100-2026-11-25";
/// The same build on an H200.
const H200: &str = "h200-2026-11-25";
/// An A/A pair of H200s: two machines, the same kernels.
const H200_A: &str = "h200-2026-11-25-2255";
const H200_B: &str = "h200-2026-11-25-2346";
/// A second A/A pair of H200s: two more machines, one build.
const H200_C: &str = "h200-2026-11-26-0349";
const H200_D: &str = "h200-2026-11-26-0357";
/// A third A/A pair of H200s, whose machines differ most: matmul at the wiki's shape
/// 14% apart.
const H200_E: &str = "h200-2026-11-26-2355";
const H200_F: &str = "h200-2026-11-27-0014";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("streamlab-compare-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The JSON files of recorded run `name` whose names `keep` accepts, copied into a scratch
/// folder.
fn copy_of(name: &str, scratch_name: &str, keep: impl Fn(&str) -> bool) -> PathBuf {
    let dir = scratch(scratch_name);
    for entry in std::fs::read_dir(recorded(name)).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        if file.ends_with(".json") && keep(&file) {
            std::fs::copy(&path, dir.join(&file)).unwrap();
        }
    }
    dir
}

fn compared(a: &str, b: &str) -> compare::Comparison {
    let a = ComparedRun::load("A", &recorded(a)).unwrap();
    let b = ComparedRun::load("B", &recorded(b)).unwrap();
    compare::compare(&a, &b, 0.0)
}

/// The verdict of row `key` of experiment `name` (Rust kernels' result).
fn verdict(c: &compare::Comparison, name: &str, key: &str) -> Verdict {
    let section = (c.sections.iter())
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no section for {name}"));
    (section.rows.iter())
        .find(|r| r.row.key == key && r.row.set == KernelSet::Rust)
        .unwrap_or_else(|| panic!("{name} has no row {key}"))
        .verdicts
        .raw
        .verdict
}

#[test]
fn every_a_a_pair_calls_few_rows_changed_and_nothing_to_fail_on() {
    for (a, b) in [
        (H100_A, H100_B),
        (H200_A, H200_B),
        (H200_C, H200_D),
        (H200_E, H200_F),
    ] {
        let c = compared(a, b);
        let rows: Vec<_> = c.rows().collect();
        assert!(rows.len() > 500, "only {} rows", rows.len());
        let raw: Vec<String> = (rows.iter())
            .filter(|r| r.verdicts.raw_changed())
            .map(|r| {
                format!(
                    "{}: {} ({:?})",
                    r.row.experiment, r.row.label, r.verdicts.raw.b_over_a
                )
            })
            .collect();
        assert!(
            raw.len() * 20 <= rows.len(),
            "{a} vs {b}: {} of {} rows: {raw:?}",
            raw.len(),
            rows.len()
        );
        let controlled = rows
            .iter()
            .filter(|r| r.verdicts.controlled.is_some())
            .count();
        let called = (rows.iter())
            .filter(|r| r.verdicts.controlled.is_some_and(|c| c.verdict.changed()))
            .count();
        assert!(
            called * 50 <= controlled,
            "{a} vs {b}: {called} of {controlled} controlled"
        );
        assert!(
            !c.fails(FailOn::Slower) && !c.fails(FailOn::Changed),
            "{a} vs {b}"
        );
    }
}

#[test]
fn each_a_a_pair_left_out_of_the_fit_is_judged_as_the_targets_ask() {
    let m = streamlab_results::verdict::margins();
    assert!(m.held_out.len() >= 4);
    for h in &m.held_out {
        assert!(h.raw_rate() <= 0.05, "{}: raw {:.3}", h.pair, h.raw_rate());
        assert!(
            h.controlled_rate() <= 0.02,
            "{}: controlled {:.3}",
            h.pair,
            h.controlled_rate()
        );
    }
}

#[test]
fn a_change_made_on_purpose_is_called_raw_and_controlled() {
    // B's Rust matmul-streams made 25% slower: its rows, and only they, change, raw and
    // held against their C++ twins. (Two H200s of one build differ by up to 14% there,
    // so a smaller slowdown is not told from the machine raw.)
    let a = ComparedRun::load("A", &recorded(H200_A)).unwrap();
    let mut b = ComparedRun::load("B", &recorded(H200_B)).unwrap();
    use streamlab_results::experiments::matmul_streams::MatmulStreams;
    assert!(b.run.edit::<MatmulStreams>(KernelSet::Rust, |r| {
        for trial in &mut r.trials_ms {
            trial.iter_mut().for_each(|ms| *ms *= 1.25);
        }
    }));
    let c = compare::compare(&a, &b, 0.0);
    let section = c
        .sections
        .iter()
        .find(|s| s.name == "matmul-streams")
        .unwrap();
    for r in &section.rows {
        let slowed = r.row.set == KernelSet::Rust;
        assert_eq!(
            r.verdicts.verdict(),
            if slowed {
                Verdict::Slower
            } else {
                Verdict::Same
            },
            "{}",
            r.row.label
        );
        if slowed {
            assert!(r.verdicts.raw_changed(), "{} raw", r.row.label);
            assert_eq!(
                r.verdicts.controlled.map(|c| c.verdict),
                Some(Verdict::Slower)
            );
        }
    }
    let elsewhere = (c.rows())
        .filter(|r| r.row.experiment != "matmul-streams" && r.verdicts.verdict().changed())
        .count();
    assert_eq!(elsewhere, 0);
    assert!(c.fails(FailOn::Slower) && c.fails(FailOn::Changed) && !c.fails(FailOn::Faster));
}

#[test]
fn a_slowdown_the_gpus_clocks_account_for_is_not_the_codes() {
    // B's GPU ran matmul-streams at 1500 MHz where A's ran at 1980, and both its kernel
    // sets took 32% longer: the clocks say why, so no row is called; the same slowdown
    // at the same clocks is called.
    use streamlab_results::experiments::matmul_streams::MatmulStreams;
    use streamlab_results::saved::clocks::{ClockProbe, GpuClocks, Reading};
    let at = |sm_mhz: u32| {
        let clocks = GpuClocks {
            sm_mhz,
            sm_max_mhz: 1980,
            memory_mhz: 3201,
            memory_max_mhz: 3201,
            reasons: Reading::Read(Vec::new()),
            temperature_c: None,
            power_w: None,
        };
        Some(ClockProbe::Read {
            before: clocks.clone(),
            after: clocks,
        })
    };
    let slowed = |b_sm_mhz: u32| {
        let mut a = ComparedRun::load("A", &recorded(H200_A)).unwrap();
        let mut b = ComparedRun::load("B", &recorded(H200_B)).unwrap();
        for set in [KernelSet::Rust, KernelSet::Cuda] {
            assert!(
                a.run
                    .edit::<MatmulStreams>(set, |r| r.run.provenance.clocks = at(1980))
            );
            assert!(b.run.edit::<MatmulStreams>(set, |r| {
                r.run.provenance.clocks = at(b_sm_mhz);
                for trial in &mut r.trials_ms {
                    trial.iter_mut().for_each(|ms| *ms *= 1.32);
                }
            }));
        }
        compare::compare(&a, &b, 0.0)
    };
    let section = |c: &compare::Comparison| {
        let s = c.sections.iter().find(|s| s.name == "matmul-streams");
        s.unwrap()
            .rows
            .iter()
            .map(|r| r.verdicts.raw.verdict)
            .collect::<Vec<_>>()
    };
    let held = slowed(1500);
    assert!(section(&held).iter().all(|v| !v.changed()));
    let notes = &held
        .sections
        .iter()
        .find(|s| s.name == "matmul-streams")
        .unwrap()
        .notes;
    assert!(
        notes
            .iter()
            .any(|(k, v)| k.starts_with("Clocks") && v.contains("32.0%")),
        "{notes:?}"
    );
    let same_clocks = slowed(1980);
    assert!(section(&same_clocks).iter().all(|v| *v == Verdict::Slower));
}

#[test]
fn a_host_slower_at_every_copy_and_launch_is_not_taken_for_slower_code() {
    // B's overlap-map ran on a host that issues everything 1.9× slower: every probe of
    // its fixed costs and rates, and every time of its sweep. Held against the model the
    // same run's probes make, no row changed; the sweep slowed alone is called slower.
    use streamlab_results::experiments::overlap_map::OverlapMap;
    use streamlab_results::stats::Series;
    let slow = |s: &mut Series| {
        let scaled: Vec<f64> = s.samples_ms.iter().map(|ms| ms * 1.9).collect();
        *s = Series::new(scaled).unwrap();
    };
    let slowed = |probes_too: bool| {
        let a = ComparedRun::load("A", &recorded(H200_A)).unwrap();
        let mut b = ComparedRun::load("B", &recorded(H200_A)).unwrap();
        assert!(b.run.edit::<OverlapMap>(KernelSet::Rust, |r| {
            for size in &mut r.sizes {
                slow(&mut size.sequential);
                slow(&mut size.kernel_alone);
                for cell in &mut size.cells {
                    slow(&mut cell.async1);
                    slow(&mut cell.async2);
                }
            }
            if probes_too {
                let o = &mut r.overheads;
                for s in [&mut o.launch, &mut o.htod_latency, &mut o.dtoh_latency] {
                    slow(s);
                }
                let c = &mut r.copies;
                for s in [
                    &mut c.htod,
                    &mut c.dtoh,
                    &mut c.both,
                    &mut c.both_htod,
                    &mut c.both_dtoh,
                ] {
                    slow(s);
                }
            }
        }));
        let c = compare::compare(&a, &b, 0.0);
        let section = c.sections.iter().find(|s| s.name == "overlap-map").unwrap();
        (section.rows.iter())
            .filter(|r| r.row.key.contains("async") || r.row.key.ends_with("/seq"))
            .map(|r| (r.row.label.clone(), r.verdicts.verdict()))
            .collect::<Vec<_>>()
    };
    let host = slowed(true);
    assert!(host.len() > 50);
    for (label, verdict) in &host {
        assert!(!verdict.changed(), "{label}: {verdict:?}");
    }
    let code = slowed(false);
    for (label, verdict) in &code {
        assert_eq!(*verdict, Verdict::Slower, "{label}");
    }
}

#[test]
fn the_header_says_which_side_read_its_gpus_clocks() {
    // The H100 pair's build read no clocks; the third H200 pair's read them for every
    // result.
    let c = compared(H100_A, H200_F);
    let row = (c.header.rows.iter())
        .find(|r| r[0] == "GPU clocks (NVML, around each result)")
        .expect("a clocks row");
    assert!(
        row[1].starts_with("not recorded or unread for all "),
        "{row:?}"
    );
    assert!(row[2].starts_with("read for all "), "{row:?}");
}

#[test]
fn the_h100_against_the_h200_calls_what_the_h200s_memory_changes() {
    for h100 in [H100_A, H100_B] {
        let c = compared(h100, H200);
        assert_eq!(verdict(&c, "bounds", "dtod"), Verdict::Faster, "{h100}");
        // Bound by memory: the H200's faster.
        for key in [
            "add_kernel/cycles 0/tuned/cuda",
            "add_kernel/cycles 0/plain/cuda",
        ] {
            assert_eq!(
                verdict(&c, "compare-kernels", key),
                Verdict::Faster,
                "{h100} {key}"
            );
        }
        // Bound by latency, inputs in L2: the tuned matmul at the wiki's shape differs
        // between two H200s of one build by as much as between the H100 and the H200.
        assert_eq!(
            verdict(&c, "compare-kernels", "matmul/tuned/rust"),
            Verdict::Same,
            "{h100}"
        );
        // Bound by arithmetic: the same on both chips.
        assert_eq!(
            verdict(&c, "compare-kernels", "add_kernel/cycles 256/tuned/rust"),
            Verdict::Same
        );
        // The link is the same PCIe 5 link: not called changed.
        assert_eq!(verdict(&c, "bounds", "dtoh"), Verdict::Same, "{h100}");
        // Each section's line counts every row once: changed, moved with the machine,
        // the same, too noisy, or without a ratio.
        for s in &c.sections {
            let moved = s.machine_moved().map_or(0, |m| m.0);
            let counted = compare::changed(&s.rows).len()
                + moved
                + [Verdict::Same, Verdict::TooNoisy, Verdict::NotComparable]
                    .into_iter()
                    .map(|v| s.count(v))
                    .sum::<usize>();
            assert_eq!(
                counted,
                s.rows.len(),
                "{h100} {}: {}",
                s.name,
                s.summary_line()
            );
        }
    }
}

#[test]
fn the_comparison_is_written_as_markdown_html_and_json() {
    let out = scratch("gpus").join("report");
    let (written, _) =
        compare::write(&recorded(H100_A), &recorded(H200), Some(out.as_path()), 0.0).unwrap();
    assert_eq!(written, out);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("comparison.json")).unwrap())
            .unwrap();
    let dtod = &json["experiments"]["bounds"]["rust"]["dtod"];
    assert_eq!(dtod["verdict"], "faster", "{dtod}");
    assert!(dtod["b_over_a"].as_f64().unwrap() < 0.8);
    assert!(dtod["p_value"].as_f64().unwrap() < 0.01);
    assert_eq!(json["rule"]["min_change"].as_f64(), Some(0.0));
    assert!(json["rule"]["false_calls"]["raw"].as_f64().unwrap() <= 0.05);
    assert_eq!(json["a"]["commit"], "not recorded");
    let totals = &json["totals"]["raw"];
    let sum: u64 = ["faster", "slower", "same", "too_noisy", "not_comparable"]
        .iter()
        .map(|k| totals[k].as_u64().unwrap())
        .sum();
    assert_eq!(Some(sum), totals["rows"].as_u64());
    for name in [
        "bounds",
        "matmul-streams",
        "sincos-overlap",
        "memcpy-kernel",
    ] {
        assert!(
            md.contains(&format!("## {name}\n")),
            "{name} not in report.md"
        );
        assert!(html.contains(&format!("<h2 id=\"{name}\">")), "{name}");
        assert!(
            json["experiments"][name]["rows"].as_u64().unwrap() > 0,
            "{name}"
        );
    }
    assert!(md.contains("▼ faster** |"), "no bold verdict in report.md");
    assert!(html.contains("<tr class=\"faster\">"));
    assert!(html.contains("▼ faster</td>"));
    assert!(md.contains("NVIDIA H100 80GB HBM3 | NVIDIA H200 |"));
    assert!(md.contains("| Commit | not recorded | not recorded |"));
    // The page opens with what was compared and what changed, and the provenance that
    // differs before the rest.
    let first = md.find("**What was compared.**").unwrap();
    assert!(first < md.find("provenance that differs").unwrap());
    assert!(md.find("provenance that differs").unwrap() < md.find("## bounds").unwrap());
    // Every chart of the comparison is written beside it.
    let c = compared(H100_A, H200);
    for figure in c.sections.iter().flat_map(|s| &s.figures) {
        assert!(
            out.join(figure.file()).exists(),
            "{} not written",
            figure.file()
        );
    }
    std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
}

#[test]
fn a_run_compared_with_itself_changes_nothing() {
    let c = compared(H100_A, H100_A);
    assert!(c.only.is_empty() && c.banners.is_empty());
    let rows: Vec<_> = c.sections.iter().flat_map(|s| &s.rows).collect();
    assert!(rows.len() > 500);
    for r in rows {
        assert!(!r.verdicts.raw.verdict.changed(), "{} changed", r.row.label);
        assert_eq!(r.verdicts.raw.b_over_a, Some(1.0), "{}", r.row.label);
        assert_ne!(
            r.verdicts.raw.verdict,
            Verdict::TooNoisy,
            "{}: identical rows are the same",
            r.row.label
        );
    }
    let md = compare::render::markdown(&c);
    assert!(!md.contains("faster**") && !md.contains("slower**"));
}

#[test]
fn the_same_folder_twice_is_one_line_and_a_usage_error() {
    let out = scratch("same").join("out");
    let err = compare::write(&recorded(H100_A), &recorded(H100_A), Some(&out), 0.0)
        .err()
        .unwrap();
    assert!(matches!(err, CompareError::SameFolder(_)), "{err}");
    assert!(
        err.is_usage() && err.to_string().lines().count() == 1,
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn single_experiment_folders_compare_on_what_they_share() {
    let one = copy_of(H100_B, "single", |f| f.starts_with("sincos-overlap"));
    let c = {
        let a = ComparedRun::load("A", &recorded(H100_A)).unwrap();
        let b = ComparedRun::load("B", &one).unwrap();
        assert!(!b.summary_saved, "no summary.json: derived");
        compare::compare(&a, &b, 0.0)
    };
    assert_eq!(
        c.sections.iter().map(|s| s.name).collect::<Vec<_>>(),
        ["sincos-overlap"]
    );
    assert!(c.sections[0].rows.len() >= 18);
    let only_a = &c.only[0].names;
    assert!(
        only_a.contains(&"bounds") && only_a.contains(&"mapped"),
        "{only_a:?}"
    );
    let md = compare::render::markdown(&c);
    assert!(md.contains("none (derived from the results)"), "{md}");
    std::fs::remove_dir_all(&one).unwrap();
}

/// The error `compare` gives for a copy of the A/A pair's first run with `file` rewritten
/// by `edit`, after checking it is one line, a usage error, and that nothing was written.
fn fault(name: &str, file: &str, edit: impl FnOnce(String) -> String) -> String {
    let dir = copy_of(H100_A, name, |_| true);
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, edit(text)).unwrap();
    let out = dir.join("out");
    let err = compare::write(&recorded(H100_B), &dir, Some(&out), 0.0)
        .err()
        .unwrap();
    let line = err.to_string();
    assert!(err.is_usage(), "{line}");
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(!out.exists(), "{} written", out.display());
    std::fs::remove_dir_all(&dir).unwrap();
    line
}

#[test]
fn bad_input_names_the_file_and_the_fault() {
    let cut = fault("truncated", "summary.json", |t| t[..t.len() / 2].to_owned());
    assert!(
        cut.contains("summary.json ends early, at line") && cut.contains("truncated"),
        "{cut}"
    );
    let typed = fault("typed", "summary.json", |t| {
        t.replacen("\"sm_count\": 132", "\"sm_count\": \"many\"", 1)
    });
    assert!(
        typed.contains(
            "summary.json: field \"device.sm_count\" cannot be read (invalid type: string \"many\""
        ),
        "{typed}"
    );
    let missing = fault("missing-field", "mapped.json", |t| {
        t.replacen("\"complete\": true,", "", 1)
    });
    assert!(
        missing.contains(
            "mapped.json: field \"complete\" is missing: the file was not written by this streamlab"
        ),
        "{missing}"
    );
    let newer = fault("newer", "bounds.json", |t| {
        t.replacen('{', "{\n  \"format\": 99,", 1)
    });
    assert!(
        newer.contains("bounds.json is in format 99, newer than this build reads"),
        "{newer}"
    );
    let mixed = fault("mixed", "mapped.json", |t| {
        t.replacen("2026-11-25T08:10:59Z", "2026-11-24T00:00:00Z", 1)
    });
    assert!(
        mixed.contains("holds more than one run")
            && mixed.contains("mapped.json from the run started 2026-11-24T00:00:00Z"),
        "{mixed}"
    );
}

#[test]
fn folders_that_are_not_results_are_clear_errors_and_nothing_is_written() {
    let empty = scratch("not-results");
    let out = empty.join("out");
    for (dir, expected) in [
        (empty.clone(), "holds no streamlab results"),
        (empty.join("missing"), "does not exist"),
    ] {
        let err = compare::write(&dir, &recorded(H100_A), Some(out.as_path()), 0.0)
            .err()
            .unwrap();
        assert!(
            err.is_usage() && err.to_string().contains(expected),
            "{err}"
        );
        let err = compare::write(&recorded(H100_A), &dir, Some(out.as_path()), 0.0)
            .err()
            .unwrap();
        assert!(err.to_string().contains(expected), "{err}");
        assert!(!out.exists(), "{} written", out.display());
    }
    let file = empty.join("file.txt");
    std::fs::write(&file, "x").unwrap();
    let err = ComparedRun::load("A", &file).err().unwrap();
    assert!(err.to_string().contains("is not a folder"));
    std::fs::remove_dir_all(&empty).unwrap();
}

#[test]
fn the_output_folder_is_replaced_whole() {
    let dir = scratch("replace");
    let out = dir.join("cmp");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("compare-old-experiment.svg"), "stale").unwrap();
    compare::write(&recorded(H100_A), &recorded(H200), Some(&out), 0.0).unwrap();
    assert!(!out.join("compare-old-experiment.svg").exists());
    assert!(out.join("comparison.json").exists());
    // A folder holding the user's own files is not replaced.
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let err = compare::write(&recorded(H100_A), &recorded(H200), Some(&out), 0.0)
        .err()
        .unwrap();
    assert!(err.to_string().contains("notes.txt"), "{err}");
    assert!(out.join("notes.txt").exists() && out.join("report.md").exists());
    // Nothing is left beside it.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["cmp"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_incomplete_run_is_compared_and_marked() {
    let dir = copy_of(H100_A, "incomplete", |_| true);
    let path = dir.join("summary.json");
    let mut summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    summary["complete"] = false.into();
    summary["interrupted_by"] = "SIGINT".into();
    summary["steps_not_run"] = serde_json::json!(["overlap"]);
    std::fs::write(&path, serde_json::to_string_pretty(&summary).unwrap()).unwrap();
    let a = ComparedRun::load("A", &recorded(H100_A)).unwrap();
    let b = ComparedRun::load("B", &dir).unwrap();
    let c = compare::compare(&a, &b, 0.0);
    assert!(!c.sections.is_empty());
    let md = compare::render::markdown(&c);
    let html = compare::render::html(&c);
    let marked = "incomplete run (stopped by SIGINT; not run or not finished: overlap)";
    let banner = format!("{}: {marked}", b.heading());
    assert!(
        md.contains(&format!("> **Incomplete run.** {banner}")),
        "{md}"
    );
    assert!(md.contains(&format!("| Run | complete | {marked} |")));
    assert!(html.contains(&format!("<strong>Incomplete run.</strong> {banner}")));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_output_is_never_a_folder_compared_nor_a_run() {
    let a = copy_of(H100_A, "out-inside", |_| true);
    let before = std::fs::read_dir(&a).unwrap().count();
    for out in [a.clone(), a.join("cmp")] {
        let err = compare::write(&a, &recorded(H200), Some(&out), 0.0)
            .err()
            .unwrap();
        assert!(
            err.is_usage() && err.to_string().contains("is inside"),
            "{err}"
        );
    }
    // A folder holding another run's results is not replaced.
    let other = copy_of(H100_B, "out-a-run", |f| f == "bounds.json");
    let err = compare::write(&a, &recorded(H200), Some(&other), 0.0)
        .err()
        .unwrap();
    assert!(err.to_string().contains("bounds.json"), "{err}");
    assert!(other.join("bounds.json").exists());
    assert_eq!(std::fs::read_dir(&a).unwrap().count(), before);
    std::fs::remove_dir_all(&a).unwrap();
    std::fs::remove_dir_all(&other).unwrap();
}

#[test]
fn a_folder_of_the_cuda_twins_alone_compares() {
    let cuda = copy_of(H100_B, "cuda-only", |f| f.ends_with("-cuda.json"));
    let a = ComparedRun::load("A", &recorded(H100_A)).unwrap();
    let b = ComparedRun::load("B", &cuda).unwrap();
    assert_eq!(b.summary.provenance.kernels.label(), "CUDA C++");
    let c = compare::compare(&a, &b, 0.0);
    assert!(
        c.sections.iter().any(|s| s.name == "sincos-overlap"),
        "the C++ rows are compared"
    );
    std::fs::remove_dir_all(&cuda).unwrap();
}

/// Every line of `page` that calls anything both faster and slower.
fn both_ways(page: &str) -> Vec<&str> {
    (page.lines())
        .filter(|l| l.contains('▲') && l.contains('▼'))
        .collect()
}

#[test]
fn the_comparison_opens_with_builds_and_gpus_and_calls_no_row_both_ways() {
    let out = scratch("opening").join("report");
    // The committed runs: different builds on different GPU kinds, where rows held to
    // their C++ twins moved one way and their raw times the other.
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/results");
    let (_, c) = compare::write(
        &docs.join("h100"),
        &docs.join("h200"),
        Some(out.as_path()),
        0.0,
    )
    .unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let first = (md.lines()).find(|l| l.starts_with("**")).unwrap();
    assert!(
        first.starts_with("**What was compared.** The two runs are of different builds (A ")
            && first.contains("on different GPU kinds (A NVIDIA H100"),
        "{first}"
    );
    let [alone, controlled] = [
        "**The machine.** Rows judged alone",
        "**The code.** Rows held",
    ]
    .map(|lead| md.find(lead).unwrap_or_else(|| panic!("no {lead}")));
    assert!(alone < controlled && controlled < md.find("**In all.**").unwrap());
    let text = compare::terminal::text(&c);
    assert!(
        text.starts_with("The two runs are of different builds"),
        "{text}"
    );
    // A row called faster raw and slower against its control is printed one way only,
    // by its control.
    let mut c = c;
    let row = (c.sections.iter_mut().flat_map(|s| &mut s.rows))
        .find(|r| r.verdicts.controlled.is_some())
        .expect("a row with a control");
    row.verdicts.raw.verdict = Verdict::Faster;
    row.verdicts.raw.b_over_a = Some(0.5);
    let controlled = row.verdicts.controlled.as_mut().unwrap();
    controlled.verdict = Verdict::Slower;
    controlled.b_over_a = Some(1.5);
    let pages = [
        compare::render::markdown(&c),
        compare::render::html(&c),
        compare::terminal::text(&c),
    ];
    for page in pages.iter().chain([&md]) {
        assert_eq!(both_ways(page), Vec::<&str>::new());
    }
    assert!(pages.iter().all(|p| p.contains("▲ slower")));
    // One build on one GPU kind says so.
    let same = compared(H200_A, H200_B);
    assert!(
        same.identity().contains("on one GPU kind (NVIDIA H200)"),
        "{}",
        same.identity()
    );
    let _ = std::fs::remove_dir_all(out.parent().unwrap());
}

/// Each chart of a comparison draws the ratio its rows' verdicts used (against the row's
/// control where it has one), coloured by that verdict, every point on a category named
/// by its row; past 30 rows, only the rows not called the same.
#[test]
fn every_chart_plots_the_ratio_its_verdict_used_by_row_name() {
    use streamlab_results::report::figures::Drawing;
    let c = compared(H100_A, H200);
    let mut charts = 0;
    for section in &c.sections {
        for figure in &section.figures {
            let Drawing::Chart(chart) = &figure.model.drawing else {
                panic!("a comparison draws charts");
            };
            charts += 1;
            let streamlab_results::report::chart::XAxis::Categories(names) = &chart.x else {
                panic!("{}: rows are named", figure.model.file);
            };
            for series in &chart.lines {
                for &(x, y) in &series.points {
                    let name = &names[x as usize];
                    let set = match figure.model.file.ends_with("-cuda.svg") {
                        true => KernelSet::Cuda,
                        false => KernelSet::Rust,
                    };
                    let row = (section.rows.iter())
                        .find(|r| r.row.label == *name && r.row.set == set)
                        .unwrap_or_else(|| panic!("{name}: no such row"));
                    let judged = row.verdicts.controlled.unwrap_or(row.verdicts.raw);
                    assert_eq!(Some(y), judged.b_over_a, "{name}");
                    assert_eq!(series.name, row.verdicts.verdict().text(), "{name}");
                    if section.rows.iter().filter(|r| r.row.set == set).count() > 30 {
                        assert_ne!(row.verdicts.verdict(), Verdict::Same, "{name}");
                    }
                }
            }
        }
    }
    assert!(charts > 0);
}
