//! allreduce-overlap's bound, bus bandwidth, budgets and parameters.
use super::*;

#[test]
fn the_bound_hidden_fraction_and_bus_bandwidth() {
    assert_eq!(bound(8.0, 4.0, 8), 8.5);
    assert_eq!(bound(4.0, 8.0, 8), 8.5);
    assert_eq!(bound(2.0, 2.0, 1), 4.0, "one bucket overlaps nothing");
    assert!((hidden(4.0, 8.0, 8.5) - 3.5 / 4.0).abs() < 1e-12);
    assert_eq!(hidden(4.0, 8.0, 12.0), 0.0, "serialized hides nothing");
    // busbw is nccl-tests' bus bandwidth: 1 GB in 1 ms on 2 GPUs: algbw 1000 GB/s, factor 1; on 4, factor 1.5.
    assert_eq!(busbw(1_000_000_000, 1.0, 2), 1000.0);
    assert_eq!(busbw(1_000_000_000, 1.0, 4), 1500.0);
}

#[test]
fn budgets_read_as_given_and_bad_sweeps_are_refused_in_one_line() {
    let back = |text: &str| String::from(Budget::try_from(text.to_owned()).unwrap());
    for text in ["default", "efficiency", "4"] {
        assert_eq!(back(text), text);
    }
    let err = Budget::try_from("0".to_owned()).unwrap_err();
    assert!(err.contains("1 to 64"), "{err}");
    assert!(Budget::try_from("lots".to_owned()).is_err());
    use crate::saved::Params as _;
    let with = |change: fn(&mut Params)| {
        let mut p = Params::default();
        change(&mut p);
        p
    };
    for bad in [
        with(|p| p.ratios = vec![0.0]),
        with(|p| p.bucket_mib = vec![0]),
        with(|p| p.ratios = vec![1.0, 1.0]),
        with(|p| p.warmup = 0),
        with(|p| (p.buckets, p.bucket_mib) = (16, vec![512])),
        with(|p| p.devices = vec![1]),
    ] {
        let err = bad.validate().unwrap_err().to_string();
        assert!(!err.contains('\n') && err.contains(':'), "{err}");
    }
    Params::default().validate().unwrap();
    Params::quick().validate().unwrap();
}
