//! How peer-copy shows the links between the GPUs: a row per pair with how NVML says
//! they are joined, what the link allows one way and both ways, and the fastest copy
//! over it.
use super::analysis::{Best, LinkRow};
use super::present::{pair_label, size};
use crate::experiments::prelude::*;
use crate::saved::links::Joined;

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
        Joined::NvLink { per_link_gbps, .. } => {
            (per_link_gbps.read()).map_or("not read".into(), |rate| num(*rate, 2))
        }
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
