//! peer-copy's analysis and presentation on a made-up two-GPU result.
use super::analysis::analyze;
use super::present::{figures, size};
use super::*;
use crate::report::figures::Drawing;
use crate::saved::Params as _;

fn series(ms: &[f64]) -> Series {
    Series::new(ms.to_vec()).unwrap()
}

/// Two GPUs: 0 → 1 with peer access (1 MiB in 0.01 ms one way), 1 → 0 without.
fn result() -> PeerCopyResult {
    let mib = 1u64 << 20;
    let point = |peer: bool| PeerPoint {
        bytes: mib,
        passes: Params::passes(mib),
        staged: series(&[0.1, 0.1, 0.2]),
        staged_both: series(&[0.1]),
        peer: peer.then(|| series(&[0.01, 0.01])),
        peer_both: peer.then(|| series(&[0.01])),
        kernel_pull: peer.then(|| series(&[0.02])),
        kernel_push: peer.then(|| series(&[0.04])),
    };
    let pair = |src, dst, peer: bool| PairResult {
        src,
        dst,
        peer_access: peer,
        points: vec![point(peer)],
        latency_staged: series(&[0.02, 0.03, 0.02]),
        latency_peer: peer.then(|| series(&[0.005])),
    };
    PeerCopyResult {
        run: RunRecord::made_up(Params::quick()),
        devices: vec![DeviceInfo::made_up(0), DeviceInfo::made_up(1)],
        pairs: vec![pair(0, 1, true), pair(1, 0, false)],
    }
}

#[test]
fn rates_come_from_the_medians_and_count_both_directions() {
    let a = analyze(&result());
    let forward = a.pair(0, 1).unwrap();
    let mib = (1u64 << 20) as f64;
    assert!((forward.rate(Method::Peer) - mib / 0.01e6).abs() < 1e-9);
    assert!((forward.rate(Method::PeerBoth) - 2.0 * mib / 0.01e6).abs() < 1e-9);
    assert!((forward.rate(Method::Staged) - mib / 0.1e6).abs() < 1e-9);
    assert!((forward.rate(Method::KernelPush) - mib / 0.04e6).abs() < 1e-9);
    assert!((forward.latency_staged_us - 20.0).abs() < 1e-9);
    assert!((forward.latency_peer_us - 5.0).abs() < 1e-9);
    let back = a.pair(1, 0).unwrap();
    assert!(!back.peer_access && back.rate(Method::Peer).is_nan());
    assert!(back.latency_peer_us.is_nan());
    let (lo, hi) = a.range(Method::Peer).unwrap();
    assert_eq!(lo, hi);
    assert_eq!(a.rows.len(), 2);
    assert_eq!(a.rows[0].rate(Method::Peer), forward.rate(Method::Peer));
}

#[test]
fn the_matrix_renders_as_tables_csv_and_heat_maps() {
    let r = result();
    let tables = PeerCopy::tables(&r, &analyze(&r), None);
    let matrix = &tables[0];
    assert_eq!(matrix.rows.len(), 2);
    assert_eq!(matrix.rows[0][0], "0 → 1");
    assert_eq!(matrix.rows[0][1], "yes");
    let peer = matrix.column("copy, peer access on").unwrap();
    assert_eq!(matrix.rows[0][peer], "104.9");
    assert_eq!(matrix.rows[1][peer], "–");
    let csv = PeerCopy::csv(&r, &analyze(&r))[0].contents.clone();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("src,dst,bytes,staged,staged_noise,staged_both"));
    assert!(lines.next().unwrap().starts_with("0,1,1048576,10.486,"));
    let a = analyze(&r);
    let figures = figures(&a);
    assert_eq!(figures.len(), 2);
    let Drawing::HeatMap(map) = &figures[0].drawing else {
        panic!("a heat map")
    };
    assert_eq!(map.rows, ["0", "1"]);
    assert_eq!(map.values[0][0], None);
    assert!(map.values[0][1].is_some_and(|v| (v - 104.8576).abs() < 1e-9));
    assert_eq!(map.values[1][0], None);
    let section = PeerCopy::section(
        &Analyzed::new(crate::saved::KernelSet::Rust, r.clone()),
        None,
    )
    .unwrap();
    assert_eq!(section.figures.len(), 2);
    assert!(section.notes.iter().any(|(_, n)| n.contains("1 → 0")));
    let headline = PeerCopy::summary(&r, &analyze(&r)).line.unwrap();
    assert!(headline.starts_with("2 pair(s)") && headline.ends_with("verified"));
    assert_eq!(PeerCopy::rows(&r, &analyze(&r)).len(), 6 + 2 + 2 + 1);
}

#[test]
fn devices_are_checked_before_the_gpus_are_opened() {
    let given = |devices: &[usize]| Params {
        devices: devices.to_vec(),
        ..Params::default()
    };
    let err = given(&[1, 1]).validate().unwrap_err();
    assert!(err.to_string().contains("GPU 1 twice"), "{err}");
    let err = given(&[1]).validate().unwrap_err();
    assert!(err.to_string().contains("names one (1)"), "{err}");
    assert!(given(&[0, 1]).validate().is_ok());
}

#[test]
fn sizes_and_passes_cover_the_sweep() {
    let sizes = Params::default().sizes();
    assert_eq!(sizes.first(), Some(&4096));
    assert_eq!(sizes.last(), Some(&(1 << 30)));
    assert_eq!(Params::passes(4096), 256);
    assert_eq!(Params::passes(1 << 30), 1);
    assert_eq!(Params::passes(1 << 20), 64);
    assert_eq!(size(4096), "4 KiB");
    assert_eq!(size(1 << 30), "1 GiB");
}
