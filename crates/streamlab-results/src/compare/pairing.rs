//! Two runs' experiments paired: for each experiment both hold, its headlines, differing
//! parameters, notes on how each ran, its measured rows and a chart of B/A per kernel
//! set; and the header of both runs' provenance.
use super::rows::{self, PairedRow};
use super::{ComparedRow, ComparedRun, ComparedSection, significant};

/// An experiment's section, before its rows are judged, and its rows.
pub(super) type Pairing = (ComparedSection, Vec<PairedRow>);
use crate::derived::rates::{faster, link_moved};
use crate::derived::summary::Json;
use crate::experiment::Analysis;
use crate::report::chart::{BOUND_COLOR, Band, Level, XAxis, YScale};
use crate::report::figures::{FigureModel, blank, points};
use crate::report::provenance;
use crate::report::table::{self, Table};
use crate::run::SavedRun;
use crate::run::summary::listed;
use crate::saved::{KernelSet, files};
use crate::verdict::Verdict;

/// Each leaf of `value` by its path, e.g. `ms_by_streams[3]`, in order.
pub(super) fn leaves(prefix: &str, value: &Json, out: &mut Vec<(String, Json)>) {
    match value {
        Json::Object(entries) => {
            for (k, v) in entries {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                leaves(&path, v, out);
            }
        }
        Json::Array(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                leaves(&format!("{prefix}[{i}]"), v, out);
            }
        }
        other => out.push((prefix.to_owned(), other.clone())),
    }
}

/// A leaf as the parameters table shows it: a float to four significant digits, a
/// string bare.
pub(super) fn leaf_text(value: &Json) -> String {
    match value {
        Json::Number(n) if n.is_f64() => n.as_f64().map_or_else(|| n.to_string(), significant),
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The union of two lists of keyed items, A's order first: each key with A's and B's as
/// `text` writes them (`None` where a side lacks it); only those that differ where
/// `differing`.
pub(super) fn side_by_side<T: PartialEq>(
    a: &[(String, T)],
    b: &[(String, T)],
    differing: bool,
    text: impl Fn(Option<&T>) -> String,
) -> Vec<(String, String, String)> {
    fn find<'a, T>(list: &'a [(String, T)], key: &str) -> Option<&'a T> {
        list.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    let only_b = b.iter().filter(|(k, _)| find(a, k).is_none());
    (a.iter().map(|(k, x)| (k, Some(x), find(b, k))))
        .chain(only_b.map(|(k, y)| (k, None, Some(y))))
        .filter(|(_, x, y)| !differing || x != y)
        .map(|(k, x, y)| (k.clone(), text(x), text(y)))
        .collect()
}

/// The headline of experiment `name` as each run words it, by kernel set: (label, A, B).
fn headlines(name: &str, a: &SavedRun, b: &SavedRun) -> Vec<(String, String, String)> {
    let of = |run: &SavedRun| -> Vec<(String, String)> {
        let label = |x: &Analysis| match x.set {
            KernelSet::Rust => "headline",
            KernelSet::Cuda => "headline, CUDA C++ kernels",
        };
        (run.analyses().filter(|x| x.name == name))
            .filter_map(|x| Some((label(x).to_owned(), x.summary.line.clone()?)))
            .collect()
    };
    side_by_side(&of(a), &of(b), false, |v| {
        v.cloned().unwrap_or_else(|| "–".into())
    })
}

/// The parameters that differ between two results, by path: (parameter, A, B).
fn differing_params(a: &Analysis, b: &Analysis) -> Vec<(String, String, String)> {
    let leaves_of = |x: &Analysis| {
        let mut out = Vec::new();
        leaves("", &x.params, &mut out);
        out
    };
    let text = |v: Option<&Json>| v.map_or("–".to_owned(), leaf_text);
    side_by_side(&leaves_of(a), &leaves_of(b), true, text)
}

/// The rows of one kernel set as B/A, each the ratio its verdict used and coloured by that
/// verdict, around 1 with the band of no change shaded. Where there are more than
/// [`MAX_LABELLED`] rows, those called the same are left out, and of the rest the largest
/// changes are drawn; none where no row is left to draw.
pub(super) fn ratio_chart(
    name: &'static str,
    set: KernelSet,
    rows: &[&ComparedRow],
    heads: (&str, &str),
) -> Option<FigureModel> {
    let judged = |r: &ComparedRow| r.verdicts.controlled.unwrap_or(r.verdicts.raw);
    let mut shown: Vec<&ComparedRow> = rows.to_vec();
    let mut left_out = String::new();
    if shown.len() > MAX_LABELLED {
        shown.retain(|r| r.verdicts.verdict() != Verdict::Same);
        if shown.len() > MAX_LABELLED {
            shown.sort_by(|x, y| y.size().total_cmp(&x.size()));
            shown.truncate(MAX_LABELLED);
            shown.sort_by_key(|r| rows.iter().position(|x| std::ptr::eq(*x, *r)));
        }
        left_out = format!(
            " ({} of {} rows drawn: the rest the same)",
            shown.len(),
            rows.len()
        );
    }
    if shown.is_empty() {
        return None;
    }
    let mut c = blank(
        format!(
            "{}: {} / {} per row, against its control where it has one{left_out}",
            table::heading(name, set),
            heads.1,
            heads.0
        ),
        "row",
        "B / A as judged",
        XAxis::Categories(shown.iter().map(|r| r.row.label.clone()).collect()),
        YScale::Linear,
    );
    let spread = shown.iter().map(|r| judged(r).spread).fold(0.0, f64::max);
    let half = 1.96 * spread;
    c.bands.push(Band {
        name: format!("no change (± {})", crate::verdict::percent(half)),
        color: "#cfd8dc",
        lo: (-half).exp(),
        hi: half.exp(),
    });
    c.levels.push(Level {
        name: "B = A".to_owned(),
        color: BOUND_COLOR,
        y: 1.0,
    });
    let drawn = [
        (Verdict::Faster, "#1f5fa8"),
        (Verdict::Slower, "#b35806"),
        (Verdict::Same, "#9c9c9c"),
        (Verdict::TooNoisy, "#edc948"),
    ];
    for (verdict, color) in drawn {
        let pts: Vec<(f64, f64)> = (shown.iter().enumerate())
            .filter(|(_, r)| r.verdicts.verdict() == verdict)
            .filter_map(|(i, r)| judged(r).b_over_a.map(|y| (i as f64, y)))
            .collect();
        if !pts.is_empty() {
            c.lines.push(points(verdict.text(), color, pts));
        }
    }
    Some(FigureModel::chart(
        format!("compare-{}.svg", files::stem(name, set)),
        c,
    ))
}

/// More rows than this are not all drawn: those called the same are left out.
const MAX_LABELLED: usize = 30;

/// Experiment `name`'s section, its rows paired but not yet judged, if both folders hold
/// it.
fn pairing(name: &'static str, a: &ComparedRun, b: &ComparedRun) -> Option<Pairing> {
    let mut p = ComparedSection {
        name,
        headlines: headlines(name, &a.run, &b.run),
        ..ComparedSection::default()
    };
    let mut paired = Vec::new();
    let launch = rows::launch_probes(&a.run, &b.run);
    let mut any = false;
    for set in [KernelSet::Rust, KernelSet::Cuda] {
        let kernels = set.label();
        let mut note = |label: String, text: String| p.notes.push((label, text));
        let (x, y) = match (a.run.analysis(name, set), b.run.analysis(name, set)) {
            (Some(x), Some(y)) => (x, y),
            (None, None) => continue,
            (x, _) => {
                let side = if x.is_some() { "A" } else { "B" };
                let only = format!("measured only in {side}");
                note(format!("{kernels} kernels"), only);
                continue;
            }
        };
        any = true;
        for (side, r) in [("A", x), ("B", y)] {
            if !r.provenance.complete {
                let stopped = format!(
                    "the {kernels} kernels' result stopped before every configuration was measured"
                );
                note(format!("Incomplete in {side}"), stopped);
            }
            if !r.verification.passed {
                let detail = r.verification.detail.clone();
                note(format!("Verification FAILED in {side}"), detail);
            }
            if let Some(link) = provenance::link(&r.provenance).filter(|_| set == KernelSet::Rust) {
                note(format!("Link in {side}"), link);
            }
            if let Some(why) = r.provenance.held_back() {
                note(format!("GPU held back in {side} ({kernels} kernels)"), why);
            }
        }
        let cuda = [a, b].map(|r| r.run.analysis(name, KernelSet::Cuda));
        let twins = cuda[0].zip(cuda[1]).filter(|_| set == KernelSet::Rust);
        let (rows, [only_a, only_b]) = rows::paired((x, y), twins, launch);
        let moved = rows.first().and_then(|r| r.clocks_moved);
        if let Some(moved) = moved.filter(|m| *m > 0.0) {
            let by = 100.0 * moved.exp_m1();
            let text = format!(
                "the GPU's SM or memory clock after the work differs by {by:.1}% between the results: a raw change within that is not called"
            );
            note(format!("Clocks ({kernels} kernels)"), text);
        }
        if set == KernelSet::Rust || a.run.analysis(name, KernelSet::Rust).is_none() {
            p.params = differing_params(x, y);
        }
        let only = [("A", only_a), ("B", only_b)].into_iter();
        let only = only.filter(|(_, list)| !list.is_empty());
        p.only.extend(
            only.map(|(side, list)| (format!("Rows only in {side} ({kernels} kernels)"), list)),
        );
        paired.extend(rows);
    }
    any.then_some((p, paired))
}

/// Every experiment both folders hold, paired; and the names only one holds.
pub(super) fn pairings(a: &ComparedRun, b: &ComparedRun) -> (Vec<Pairing>, [Vec<&'static str>; 2]) {
    let mut found = Vec::new();
    let mut only = [Vec::new(), Vec::new()];
    for name in listed([&a.run, &b.run]).iter().map(|l| l.name()) {
        match (
            a.run.experiment(name).is_some(),
            b.run.experiment(name).is_some(),
        ) {
            (true, false) => only[0].push(name),
            (false, true) => only[1].push(name),
            (true, true) => found.extend(pairing(name, a, b)),
            (false, false) => {}
        }
    }
    (found, only)
}

/// Every row both folders measured, of every experiment both hold.
pub fn all_rows(a: &ComparedRun, b: &ComparedRun) -> Vec<PairedRow> {
    pairings(a, b)
        .0
        .into_iter()
        .flat_map(|(_, rows)| rows)
        .collect()
}

/// How many of `r`'s results read every GPU's clocks: "read for 3 of 14 results".
fn clocks_read(r: &ComparedRun) -> String {
    let analyses: Vec<_> = r.run.analyses().collect();
    let read = (analyses.iter())
        .filter(|a| a.provenance.clocks_read())
        .count();
    match (read, analyses.len()) {
        (_, 0) => "–".to_owned(),
        (read, all) if read == all => format!("read for all {all} results"),
        (0, all) => format!("not recorded or unread for all {all} results"),
        (read, all) => format!("read for {read} of {all} results"),
    }
}

/// The header: each side's folder, run status, device and provenance.
pub(super) fn header(a: &ComparedRun, b: &ComparedRun) -> Table {
    let mut t = Table::new(None, &["", &a.heading(), &b.heading()]);
    let facts = |r: &ComparedRun| -> Vec<(&'static str, String)> {
        let (d, p) = (&r.summary.device, &r.summary.provenance);
        let (major, minor) = d.compute_capability;
        let link = p.link.as_ref().map_or("–".into(), |probe| {
            let (before, after, moved) = link_moved(probe);
            format!(
                "{before:.1} → {after:.1} GB/s (moved {:.1}%)",
                100.0 * moved
            )
        });
        let fastest = (r.run.analyses().filter_map(|x| x.link)).reduce(faster);
        let fastest = fastest.map_or("–".into(), |f| {
            let (htod, dtoh, both) = (f.htod_gbps, f.dtoh_gbps, f.both_gbps);
            format!("{htod:.1}, {dtoh:.1}, {both:.1} GB/s")
        });
        let summary = match r.summary_saved {
            true => "saved by the run",
            false => "none (derived from the results)",
        };
        let memory = format!("{:.1} GiB", provenance::gib(d.total_memory_bytes));
        let status = r.summary.incomplete().unwrap_or_else(|| "complete".into());
        let pcie = d.pcie_link.clone().unwrap_or_else(|| "–".into());
        let mut facts = vec![
            ("Folder", r.dir.display().to_string()),
            ("Run", status),
            ("summary.json", summary.to_owned()),
            ("GPU", d.name.clone()),
            ("Compute capability", format!("{major}.{minor}")),
            ("SMs", d.sm_count.to_string()),
            ("Copy engines", d.copy_engines.to_string()),
            ("Memory", memory),
            ("CUDA version of the driver", d.driver_cuda_version.clone()),
            ("PCIe link", pcie),
            (
                "Link both ways, before → after (first experiment, probes' medians)",
                link,
            ),
            ("Fastest copies (HtoD, DtoH, both ways)", fastest),
            ("GPU clocks (NVML, around each result)", clocks_read(r)),
            ("Started (UTC)", p.started_utc.clone()),
        ];
        facts.extend(provenance::build_facts(p));
        facts
    };
    for ((label, x), (_, y)) in facts(a).into_iter().zip(facts(b)) {
        t.rows.push(vec![label.to_owned(), x, y]);
    }
    t
}
