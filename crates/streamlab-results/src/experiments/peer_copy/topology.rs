//! How peer-copy shows the links between the GPUs: a row per pair with how NVML says
//! they are joined, what the link allows one way and both ways, and the fastest copy
//! over it; and the section's notes on the links, on peer access and on the timing.
use super::analysis::{Best, LinkRow, PeerCopyAnalysis};
use super::present::{pair_label, size};
use super::{AccessCheck, PeerCopyResult};
use crate::experiments::prelude::*;
use crate::saved::links::{Joined, Reading};

/// A fastest copy's GB/s with its share of the link: "395.2 (83%)".
fn best_rate(best: Option<&Best>) -> String {
    match best {
        Some(b) if b.efficiency.is_finite() => {
            format!("{:.1} ({:.0}%)", b.gbps, 100.0 * b.efficiency)
        }
        Some(b) => num(b.gbps, 1),
        None => "–".into(),
    }
}

/// Which copy a fastest one is: "copy, peer access on, 1 GiB".
fn best_copy(best: Option<&Best>) -> String {
    best.map_or("–".into(), |b| {
        format!("{}, {}", b.method.label(), size(b.bytes))
    })
}

/// Each NVLink's rate one way, as NVML gave it.
fn per_link(row: &LinkRow) -> String {
    match &row.link.joined {
        Joined::NvLink {
            per_link_gbps: Reading::Read(rate),
            ..
        } => num(*rate, 2),
        Joined::NvLink {
            per_link_gbps: Reading::Unread(_),
            ..
        } => "not read".into(),
        Joined::Pcie { .. } | Joined::Unread(_) => "–".into(),
    }
}

/// The one declaration of the link table: a row per pair.
pub(super) fn link_columns<'a>() -> Columns<'a, LinkRow> {
    Columns::new()
        .show("pair", |x: &LinkRow| pair_label(x.src, x.dst))
        .show("joined by", |x| x.link.describe())
        .show("per link (GB/s)", per_link)
        .show("link one way (GB/s)", |x| num(x.one_way_gbps, 1))
        .show("link both ways (GB/s)", |x| num(x.both_ways_gbps, 1))
        .show("fastest one way (GB/s)", |x| {
            best_rate(x.best_one_way.as_ref())
        })
        .show("one way: copy", |x| best_copy(x.best_one_way.as_ref()))
        .show("fastest both ways (GB/s)", |x| {
            best_rate(x.best_both_ways.as_ref())
        })
        .show("both ways: copy", |x| best_copy(x.best_both_ways.as_ref()))
        .show("rows above the link", |x| x.above_link.to_string())
}

pub(super) fn link_note(r: &PeerCopyResult, a: &PeerCopyAnalysis) -> String {
    if r.links.is_empty() {
        return "How the GPUs are joined: not recorded (a run from before peer-copy read the links through NVML), so no row is held against its link.".into();
    }
    let mut kinds: Vec<String> = Vec::new();
    for kind in r.links.iter().map(|l| l.describe()) {
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    let mut note = format!(
        "NVML reports the pairs joined by {}. A copy over NVLink is held against the links' rate in its directions (links × each link's rate one way, twice that both ways): its efficiency, as nvbandwidth reports one.",
        kinds.join("; ")
    );
    let above = a.rows_above_link();
    if above > 0 {
        note += &format!(
            " {above} row(s) ran above their link's rate beyond their noise: flagged in the tables and left out of the headline, since no copy can outrun its link (NVML's rate or that timing is wrong)."
        );
    }
    note
}

pub(super) fn access_note(r: &PeerCopyResult) -> String {
    let without: Vec<String> = (r.pairs.iter())
        .filter(|p| !p.peer_access)
        .map(|p| pair_label(p.src, p.dst))
        .collect();
    let mut note = String::new();
    if !without.is_empty() {
        note += &format!(
            "No peer access for {}: only the staged copies ran there. ",
            without.join(", ")
        );
    }
    let checks: Vec<(String, AccessCheck)> = (r.pairs.iter())
        .filter_map(|p| Some((pair_label(p.src, p.dst), p.access?)))
        .collect();
    let checked = checks.iter().filter(|(_, c)| c.staged_checked_off).count();
    if checked == 0 {
        note += "Peer access off before the staged copies: not checked (a run from before the check); where something had left it on, those copies crossed the link.";
        return note;
    }
    note += &format!(
        "Before the staged copies of {checked} of {} pair(s), peer access was turned off both ways once both GPUs had finished their work, and the driver confirmed it off: a second cuCtxDisablePeerAccess answered CUDA_ERROR_PEER_ACCESS_NOT_ENABLED.",
        r.pairs.len()
    );
    let found_on: Vec<&str> = (checks.iter())
        .filter(|(_, c)| c.found_on.contains(&true))
        .map(|(pair, _)| pair.as_str())
        .collect();
    if !found_on.is_empty() {
        note += &format!(
            " Peer access was already on for {} when the pair began, and is on again after it.",
            found_on.join(", ")
        );
    }
    note
}

pub(super) fn timing_note(r: &PeerCopyResult) -> &'static str {
    if r.gated {
        "The copies with peer access on, the kernels and the copies within one GPU are issued behind a gate that every stream of a sample waits at, opened once the whole sample is queued: their times are the GPUs', not the host's issue time. The staged copies are issued as the host goes: the driver may hold the host while it stages a copy through host memory, which behind a closed gate would never end."
    } else {
        "Every copy was issued as the host went (a run from before the gate): the small sizes and the latencies include the host's time to issue them."
    }
}
