//! Work spread over streams and GPUs, and the GPUs `--devices` chooses on a machine.
use std::ops::Range;

use crate::saved::UsageError;

/// The element range each of `parts` streams handles: chunks that differ by at most one
/// element, together covering every element once (none empty while `parts <= elements`).
pub fn chunks(elements: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.max(1);
    let edge = |s: usize| (s as u128 * elements as u128 / parts as u128) as usize;
    (0..parts).map(|s| edge(s)..edge(s + 1)).collect()
}

/// One GPU's share of work spread over GPUs and streams, in global element indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Share {
    /// Its elements.
    pub elements: Range<usize>,
    /// One chunk per stream it uses: as many as the streams asked for, or one per
    /// element where it has fewer elements than that; none where it has no elements.
    pub parts: Vec<Range<usize>>,
}

/// `elements` spread over `gpus` GPUs ([`chunks`]), each GPU's share over at most
/// `streams` streams.
pub fn over_gpus(elements: usize, gpus: usize, streams: usize) -> Vec<Share> {
    chunks(elements, gpus)
        .into_iter()
        .map(|share| {
            let used = streams.min(share.len());
            // No stream where the share has no elements (its one chunk is empty).
            let parts = (chunks(share.len(), used).into_iter())
                .filter(|p| !p.is_empty())
                .map(|p| share.start + p.start..share.start + p.end)
                .collect();
            Share {
                elements: share,
                parts,
            }
        })
        .collect()
}

/// The GPUs a run uses, on a machine with the GPUs it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Devices {
    /// These ordinals, two or more.
    Chosen(Vec<usize>),
    /// Fewer than two: why the experiment does not run, in one line.
    TooFew(String),
}

/// Check `--devices` as given to `experiment`, before any GPU is opened: each GPU once,
/// and not one alone (an empty list means every GPU).
pub fn check_devices(experiment: &str, devices: &[usize]) -> Result<(), UsageError> {
    for (i, ordinal) in devices.iter().enumerate() {
        if devices[..i].contains(ordinal) {
            return Err(UsageError::new(format!(
                "--devices names GPU {ordinal} twice: name each GPU once, e.g. --devices 0,1"
            )));
        }
    }
    if let [only] = devices[..] {
        return Err(UsageError::new(format!(
            "{experiment} needs two or more GPUs but --devices names one ({only}): name two or more, e.g. --devices 0,1"
        )));
    }
    Ok(())
}

/// The GPUs `experiment` uses on a machine whose GPUs are named `machine` (by ordinal):
/// `devices`, or every GPU where it is empty; an ordinal the machine lacks is a usage
/// error.
pub fn devices_on(
    experiment: &str,
    devices: &[usize],
    machine: &[String],
) -> Result<Devices, UsageError> {
    if let Some(&missing) = devices.iter().find(|&&d| d >= machine.len()) {
        return Err(UsageError::new(format!(
            "--devices names GPU {missing}, but this machine has {} GPU(s) (0..={}): name GPUs it has",
            machine.len(),
            machine.len().saturating_sub(1)
        )));
    }
    let chosen = if devices.is_empty() {
        (0..machine.len()).collect()
    } else {
        devices.to_vec()
    };
    if chosen.len() >= 2 {
        return Ok(Devices::Chosen(chosen));
    }
    Ok(Devices::TooFew(format!(
        "{experiment} needs two or more GPUs; this machine has {} ({}): run it on a machine with several GPUs",
        machine.len(),
        machine.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_and_shares_over_gpus_and_streams_cover_every_element_once() {
        for (n, s) in [(10, 3), (16, 4), (5, 5), (1 << 20, 7), (7, 4), (5, 4)] {
            let parts = chunks(n, s);
            assert_eq!((parts.len(), parts[0].start, parts[s - 1].end), (s, 0, n));
            assert!(parts.windows(2).all(|w| w[0].end == w[1].start));
            let even = |p: &Range<usize>| p.len() == n / s || p.len() == n / s + 1;
            assert!(parts.iter().all(even));
        }
        assert_eq!(chunks(10, 3), [0..3, 3..6, 6..10]);
        // Each GPU's stream count: one element leaves the first two GPUs none.
        for (elements, counts) in [(1, [0, 0, 1]), (7, [2, 2, 3]), ((1 << 25) + 3, [4, 4, 4])] {
            let shares = over_gpus(elements, 3, 4);
            assert_eq!(shares.len(), 3, "{elements}");
            let used = shares.iter().map(|s| s.parts.len()).collect::<Vec<_>>();
            assert_eq!(used, counts, "{elements}");
            let mut next = 0;
            for share in &shares {
                assert_eq!(share.elements.start, next, "{elements}");
                let mut inside = share.elements.start;
                for part in &share.parts {
                    assert_eq!(part.start, inside, "{elements}");
                    assert!(!part.is_empty(), "{elements}: an empty chunk");
                    inside = part.end;
                }
                assert_eq!(inside, share.elements.end, "{elements}");
                assert_eq!(share.parts.len(), share.elements.len().min(4));
                next = share.elements.end;
            }
            assert_eq!(next, elements);
        }
        assert_eq!(over_gpus(1, 3, 4)[2].parts, vec![0..1]);
    }

    #[test]
    fn devices_are_checked_before_and_against_the_machine() {
        let machine = |n: usize| vec!["NVIDIA H100 80GB HBM3".to_owned(); n];
        let one = "x needs two or more GPUs; this machine has 1 (NVIDIA H100 80GB HBM3): run it on a machine with several GPUs";
        let too_few = devices_on("x", &[], &machine(1)).unwrap();
        assert_eq!(too_few, Devices::TooFew(one.into()));
        let chosen = devices_on("x", &[2, 0], &machine(3)).unwrap();
        assert_eq!(chosen, Devices::Chosen(vec![2, 0]));
        let err = devices_on("x", &[0, 2], &machine(2)).unwrap_err();
        assert!(err.to_string().contains("names GPU 2"), "{err}");
        let err = check_devices("x", &[1, 1]).unwrap_err();
        assert!(err.to_string().contains("GPU 1 twice"), "{err}");
        let err = check_devices("x", &[1]).unwrap_err().to_string();
        let said = "x needs two or more GPUs but --devices names one (1)";
        assert!(err.contains(said), "{err}");
        assert!(check_devices("x", &[]).is_ok() && check_devices("x", &[0, 1]).is_ok());
    }
}
