//! peer-copy's analysis and presentation on a made-up two-GPU result, and the helpers its
//! tests share with the other experiments on several GPUs.
use super::Method::*;
use super::analysis::{above, analyze};
use super::present::{size, span};
use super::*;
use crate::report::figures::Drawing;
use crate::saved::KernelSet;
use crate::saved::Params as _;
use crate::stats::tests::{close, series};

/// `r` analysed, as the report and `summary.json` read it.
pub(crate) fn analyzed<E: Experiment>(r: &E::Result) -> Analyzed<E> {
    Analyzed::new(KernelSet::Rust, r.clone())
}

/// `r`'s section of the report.
pub(crate) fn section<E: Experiment>(r: &E::Result) -> Section {
    E::section(&analyzed(r), None).unwrap()
}

/// The text of `section`'s note under `label`: empty where it has none.
pub(crate) fn note<'a>(section: &'a Section, label: &str) -> &'a str {
    (section.notes.iter())
        .find(|(l, _)| l == label)
        .map_or("", |(_, n)| n)
}

/// `r`'s line in `run-all`.
fn line(r: &PeerCopyResult) -> String {
    analyzed::<PeerCopy>(r).analysis.summary.line.unwrap()
}

/// One MiB, the made-up copies' size, as a float.
const MIB: f64 = (1u64 << 20) as f64;

/// The made-up two-GPU run as peer-copy recorded it before the links were read
/// (`tests/data/peer-copy-older.json`): 0 → 1 with peer access (1 MiB in 0.01 ms one way),
/// 1 → 0 without.
fn older() -> PeerCopyResult {
    let path = std::path::Path::new("peer-copy.json");
    let older = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/peer-copy-older.json"
    ));
    crate::folder::parse(path, older).expect("a peer-copy result from before the links reads")
}

/// The older run as a run records it now: 0 → 1 also on the destination's stream and each
/// direction of its copies both ways timed apart, over `links` NVLinks of `per_link` GB/s
/// each through NVSwitch, 1 → 0 over PCIe; GPU 0's copy to itself, the peer access checks
/// and the gate.
fn result(links: u32, per_link: f64) -> PeerCopyResult {
    use crate::saved::links::{Joined, PairLink, PcieLink, Reading};
    let mut r = older();
    for pair in &mut r.pairs {
        let (peer, point) = (pair.peer_access, &mut pair.points[0]);
        point.peer_dst = peer.then(|| series(&[0.011]));
        point.peer_both_each = peer.then(|| [series(&[0.0095]), series(&[0.0098])]);
        pair.access = Some(AccessCheck {
            found_on: [peer, false],
            staged_checked_off: true,
        });
    }
    let pcie = Reading::Read(PcieLink {
        generation: 5,
        width: 16,
    });
    let nvlink = Joined::NvLink {
        links,
        switched: true,
        version: Reading::Read(6),
        per_link_gbps: Reading::Read(per_link),
    };
    let (src, dst) = (pcie.clone(), pcie);
    let link = |src, dst, joined| PairLink { src, dst, joined };
    r.links = vec![link(0, 1, nvlink), link(1, 0, Joined::Pcie { src, dst })];
    let points = vec![LocalPoint {
        bytes: 1 << 20,
        passes: 64,
        time: series(&[0.001]),
    }];
    r.local = vec![LocalCopy { gpu: 0, points }];
    r.gated = true;
    r
}

#[test]
fn devices_are_checked_and_the_rates_come_from_the_medians_held_against_the_link() {
    let given = |devices: &[usize]| Params {
        devices: devices.to_vec(),
        ..Params::default()
    };
    // crate::spread's tests hold every check; its words name this experiment.
    let err = given(&[1]).validate().unwrap_err().to_string();
    assert!(err.contains("peer-copy needs two or more"), "{err}");
    assert!(given(&[0, 1]).validate().is_ok());
    assert_eq!(size(4096), "4 KiB");
    assert_eq!(size(1 << 30), "1 GiB");
    assert_eq!(size(0), "0 B");
    assert_eq!(span((377.04, 384.5), 1, 1.0), "377.0–384.5");
    let both_80 = "both ends read 80%";
    assert_eq!(span((0.8012, 0.8049), 0, 100.0), "80", "{both_80}");
    let r = result(18, 26.5625);
    let a = analyze(&r);
    let forward = a.pair(0, 1).unwrap();
    let rate = |m| forward.largest[m].gbps;
    assert!(close(rate(Peer), MIB / 0.01e6));
    assert!(close(rate(PeerBoth), 2.0 * MIB / 0.01e6));
    assert!(close(rate(Staged), MIB / 0.1e6));
    assert!(close(rate(KernelPush), MIB / 0.04e6));
    assert!(close(forward.latency_staged_us, 20.0));
    assert!(close(forward.latency_peer_us, 5.0));
    let back = a.pair(1, 0).unwrap();
    assert!(!back.peer_access && back.largest[Peer].gbps.is_nan());
    assert!(back.latency_peer_us.is_nan());
    let pcie = "PCIe: no NVLink rate";
    assert!(back.largest[Peer].efficiency.is_nan(), "{pcie}");
    assert!(a.range(Peer, |r| r.gbps).is_some_and(|(lo, hi)| lo == hi));
    assert_eq!(a.rows.len(), 2);
    assert_eq!(a.rows[0][Peer].gbps, rate(Peer));
    let forward = &forward.largest;
    let (one_way, both_ways) = (18.0 * 26.5625, 2.0 * 18.0 * 26.5625);
    let shares = [
        (Peer, MIB / 0.01e6 / one_way),
        (PeerBoth, 2.0 * MIB / 0.01e6 / both_ways),
        (KernelPull, MIB / 0.02e6 / one_way),
    ];
    for (m, share) in shares {
        assert!(close(forward[m].efficiency, share), "{m:?}");
    }
    assert!(forward[Staged].efficiency.is_nan(), "not over the link");
    assert!(forward.flagged().is_empty());
    let link = &a.links[0];
    assert!(close(link.one_way_gbps, one_way) && close(link.both_ways_gbps, both_ways));
    let [best, best_both] = link.fastest.each_ref().map(|b| b.as_ref().unwrap());
    assert_eq!((best.method, best.bytes), (Peer, 1 << 20));
    assert_eq!(best_both.method, PeerBoth);
    assert!(a.links[1].one_way_gbps.is_nan() && a.links[1].fastest[0].is_none());
    let (lo, hi) = a.range(Peer, |r| r.efficiency).unwrap();
    assert!(close(lo, hi) && close(lo, MIB / 0.01e6 / one_way));
    let [forward, back] = a.rows[0][PeerBoth].each_way;
    assert!(close(forward, MIB / 0.0095e6) && close(back, MIB / 0.0098e6));
    assert!(close(a.local[0].gbps, MIB / 0.001e6));
}

#[test]
fn a_run_renders_as_tables_csv_heat_maps_notes_and_measured_rows() {
    let r = result(18, 26.5625);
    let a = analyze(&r);
    let line = line(&r);
    assert!(line.starts_with("2 pair(s)") && line.ends_with("verified"));
    let share = "(22% of the link's 478.1 GB/s one way)";
    assert!(line.contains(share), "{line}");
    let tables = PeerCopy::tables(&r, &a, None);
    assert_eq!(tables.len(), 4, "links, matrix, sweep, local");
    let links = &tables[0];
    let caption = links.caption.as_deref().unwrap();
    assert!(caption.starts_with("How each pair is joined"));
    // pair, joined by, per link, the link one way and both ways, the fastest copy one way
    // and both ways (GB/s, copy), rows above the link.
    let nvlink = "0 → 1 | 18 × NVLink 4.0 through NVSwitch | 26.56 | 478.1 | 956.2 | \
        104.9 (22%) | copy, peer access on, 1 MiB | 209.7 (22%) | \
        copy both ways, peer access on, 1 MiB | 0";
    assert_eq!(links.rows[0].join(" | "), nvlink);
    let pcie = "1 → 0 | PCIe 5.0 x16 | – | – | – | – | – | – | – | 0";
    assert_eq!(links.rows[1].join(" | "), pcie);
    let matrix = &tables[1];
    assert_eq!(matrix.rows.len(), 2);
    assert_eq!(matrix.rows[0][..2], ["0 → 1", "yes"]);
    let peer = matrix.column("copy, peer access on").unwrap();
    assert_eq!(matrix.rows[0][peer], "104.9 (22%)");
    assert_eq!(matrix.rows[1][peer], "–");
    let sweep = &tables[2];
    let each = sweep.column("each way, peer access on").unwrap();
    assert_eq!(sweep.rows[0][each], "110.4 / 107.0");
    assert_eq!(tables[3].rows[0], ["0", "1 MiB", "1048.6", "0.0%"]);
    let files = PeerCopy::csv(&r, &a);
    let sweep = &files[0].contents;
    let mut lines = sweep.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("src,dst,bytes,staged,staged_noise,staged_both"));
    assert!(header.contains("peer_dst,peer_dst_noise"));
    assert!(lines.next().unwrap().starts_with("0,1,1048576,10.486,"));
    assert!(sweep.contains("peer_both_forward,peer_both_back"));
    assert_eq!(files[1].suffix, Some("local"));
    let local = "gpu,bytes,gbps,noise\n0,1048576,1048.576,";
    assert!(files[1].contents.starts_with(local));
    let section = section::<PeerCopy>(&r);
    assert_eq!(section.figures.len(), 2);
    let Drawing::HeatMap(map) = &section.figures[0].model.drawing else {
        panic!("a heat map")
    };
    assert_eq!(map.rows, ["0", "1"]);
    assert_eq!(map.values[0][0], None);
    assert!(map.values[0][1].is_some_and(|v| (v - 104.8576).abs() < 1e-9));
    let empty_diagonal = "the diagonal's empty cells would break a line";
    assert_eq!(map.contour, None, "{empty_diagonal}");
    assert_eq!(map.values[1][0], None);
    let link = note(&section, "Link");
    assert!(link.contains("18 × NVLink 4.0 through NVSwitch; PCIe 5.0 x16"));
    assert!(note(&section, "Timing").contains("behind a gate"));
    let access = note(&section, "Peer access");
    let said = [
        "No peer access for 1 → 0",
        "staged copies of 2 of 2 pair(s)",
        "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
        "already on for 0 → 1",
    ];
    for said in said {
        assert!(access.contains(said), "{access}");
    }
    let rows = PeerCopy::rows(&r, &a);
    assert_eq!(rows.len(), 9 + 2 + 2 + 1 + 1);
    let row = |key: &str| rows.iter().find(|x| x.key == key).expect(key);
    let host_link = "staged copies cross the host link";
    assert!(row("0-1/1048576/staged").over_link, "{host_link}");
    assert!(!row("0-1/1048576/peer").over_link);
    assert_eq!(row("0-1/1048576/peer_dst").value, 0.011);
    assert_eq!(row("0-1/1048576/peer_both/forward").value, 0.0095);
    let back = &row("0-1/1048576/peer_both/back").label;
    assert!(back.contains("1 → 0 direction"));
    assert_eq!(row("0-0/1048576/local").value, 0.001);
    let mut staged_only = result(18, 26.5625);
    staged_only.pairs.retain(|p| !p.peer_access);
    let staged_only = analyzed::<PeerCopy>(&staged_only);
    let finding = &staged_only.analysis.summary.overview.finding;
    assert!(finding.ends_with("no pair had peer access."), "{finding}");
}

#[test]
fn a_row_above_its_link_is_flagged_and_a_run_stopped_before_its_first_size_says_so() {
    // One NVLink of 50 GB/s: the made-up peer copy's 104.9 GB/s cannot cross it.
    let r = result(1, 50.0);
    let a = analyze(&r);
    let forward = &a.pair(0, 1).unwrap().largest;
    let flagged = [Peer, PeerBoth, KernelPull, PeerDst];
    assert_eq!(forward.flagged(), flagged);
    assert!(!forward[KernelPush].above_link, "26.2 GB/s fits 50");
    assert_eq!(a.rows_above_link(), 4);
    assert_eq!(a.range(Peer, |r| r.gbps), None, "the one pair is flagged");
    let flagged_line = line(&r);
    let none = "peer access off 10.5 GB/s, none counted with it on";
    assert!(flagged_line.contains(none), "{flagged_line}");
    let above_link = "4 row(s) above the link's NVML";
    assert!(flagged_line.contains(above_link), "{flagged_line}");
    let flagged_section = section::<PeerCopy>(&r);
    let result = note(&flagged_section, "Result");
    assert!(result.contains("each ran above its link"), "{result}");
    let tables = PeerCopy::tables(&r, &a, None);
    let matrix = &tables[1];
    let flag = matrix.column("above the link").unwrap();
    assert_eq!(
        matrix.rows[0][flag],
        "copy, peer access on; copy both ways, peer access on; kernel on destination (pull); \
         copy on destination's stream, peer access on"
    );
    let csv = PeerCopy::csv(&r, &a)[0].contents.clone();
    let row = csv.lines().nth(1).unwrap();
    assert!(row.ends_with(",peer;peer_both;kernel_pull;peer_dst"));
    // Within the noise of the link it is not flagged: a 4% spread against 2% over it.
    assert!(!above(102.0, 0.04, 100.0));
    assert!(above(110.0, 0.01, 100.0));
    let mut stopped = r;
    stopped.pairs.iter_mut().for_each(|p| p.points.clear());
    let line = line(&stopped);
    assert!(line.contains("2 pair(s): no size copied before"), "{line}");
    let section = section::<PeerCopy>(&stopped);
    let said = note(&section, "Result");
    assert!(said.starts_with("No pair copied its first size"), "{said}");
    assert!(!said.contains("none") && !line.contains("none"), "{said}");
}

#[test]
fn an_older_result_without_links_checks_or_gate_reads_and_renders() {
    let r = older();
    assert!(r.links.is_empty() && r.local.is_empty() && !r.gated);
    assert!(r.pairs.iter().all(|p| p.access.is_none()));
    assert!(r.pairs[0].points[0].peer_dst.is_none());
    let a = analyze(&r);
    assert!(a.links.is_empty() && a.rows_above_link() == 0);
    let tables = PeerCopy::tables(&r, &a, None);
    assert_eq!(tables.len(), 2, "no link table, no local table");
    let section = section::<PeerCopy>(&r);
    assert!(note(&section, "Link").contains("not recorded"));
    assert!(note(&section, "Peer access").contains("not checked"));
    assert!(note(&section, "Timing").contains("as the host went"));
    assert_eq!(section.figures.len(), 2);
    let keys: Vec<String> = PeerCopy::rows(&r, &a).into_iter().map(|x| x.key).collect();
    let had = "the keys rows had";
    assert!(keys.contains(&"0-1/1048576/peer".to_owned()), "{had}");
    assert!(keys.contains(&"1-0/latency/staged".to_owned()));
}
