//! Where matmul's inputs lie in one allocation at each placement, and the order the
//! placements are visited in.
use std::ops::Range;

/// How far apart `--placements` put an input: the GPU's large page.
pub(super) const PLACEMENT_STEP_BYTES: usize = 2 << 20;

/// The elements an allocation needs for two inputs of `lens` elements at `places`
/// placements `step` elements apart ([`placed_inputs`]).
pub(super) fn placed_len(places: usize, lens: [usize; 2], step: usize) -> usize {
    lens[0].next_multiple_of(step) + 2 * (places - 1) * step + lens[1]
}

/// Where placement `place` of `places` puts two inputs of `lens` elements in one
/// allocation of [`placed_len`] elements, `step` elements apart per placement: the first
/// `place` steps in, the second `places − 1 − place` steps after the first step boundary
/// past the first's furthest end, so that both move at every placement, in opposite
/// directions, and both start on a step boundary.
pub(super) fn placed_inputs(
    place: usize,
    places: usize,
    lens: [usize; 2],
    step: usize,
) -> [Range<usize>; 2] {
    let first = place * step;
    let second =
        (lens[0] + (places - 1) * step).next_multiple_of(step) + (places - 1 - place) * step;
    [first..first + lens[0], second..second + lens[1]]
}

/// The order the placements are visited in, and each visit's share of `launches`: every
/// placement on the way there and again on the way back (once where there is one), so
/// that a drift of the machine over the case does not pass for a difference between
/// places; the launches split as evenly as they go, earlier visits taking the remainder.
pub(super) fn placement_visits(places: usize, launches: usize) -> Vec<(usize, usize)> {
    let mut order: Vec<usize> = (0..places).collect();
    if places > 1 {
        order.extend((0..places).rev());
    }
    let (share, rest) = (launches / order.len(), launches % order.len());
    (order.into_iter().enumerate())
        .map(|(i, place)| (place, share + usize::from(i < rest)))
        .filter(|&(_, launches)| launches > 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{placed_inputs, placed_len, placement_visits};

    #[test]
    fn every_placement_keeps_both_inputs_apart_inside_the_allocation_on_step_boundaries() {
        for places in 1..=6 {
            for lens in [[10, 7], [3, 40], [1, 1], [15, 5]] {
                let step = 5;
                let len = placed_len(places, lens, step);
                let all: Vec<_> = (0..places)
                    .map(|p| placed_inputs(p, places, lens, step))
                    .collect();
                for [a, b] in &all {
                    assert_eq!((a.len(), b.len()), (lens[0], lens[1]));
                    assert!(a.end <= b.start && b.end <= len, "{a:?} {b:?} in {len}");
                    assert!(a.start % step == 0 && b.start % step == 0, "{a:?} {b:?}");
                }
                // The allocation is no larger than the placements need.
                assert_eq!(all.iter().map(|[_, b]| b.end).max(), Some(len));
                for pair in all.windows(2) {
                    assert_ne!(pair[0][0].start, pair[1][0].start);
                    assert_ne!(pair[0][1].start, pair[1][1].start);
                }
            }
        }
    }

    #[test]
    fn placements_are_visited_there_and_back_with_every_launch_shared_out() {
        assert_eq!(placement_visits(1, 7), vec![(0, 7)]);
        let visits = placement_visits(3, 100);
        let order: Vec<usize> = visits.iter().map(|v| v.0).collect();
        assert_eq!(order, [0, 1, 2, 2, 1, 0]);
        assert_eq!(visits.iter().map(|v| v.1).sum::<usize>(), 100);
        assert!(visits.iter().all(|v| v.1 == 16 || v.1 == 17));
        for places in 2..=5 {
            for launches in 2 * places..40 {
                let visits = placement_visits(places, launches);
                assert_eq!(visits.iter().map(|v| v.1).sum::<usize>(), launches);
                for place in 0..places {
                    let got: usize = (visits.iter()).filter(|v| v.0 == place).map(|v| v.1).sum();
                    assert!(got >= 2, "{places} places, {launches} launches");
                }
            }
        }
        // The sweep's few launches may leave a visit with none: it is dropped.
        assert!(placement_visits(4, 5).iter().all(|v| v.1 > 0));
    }
}
