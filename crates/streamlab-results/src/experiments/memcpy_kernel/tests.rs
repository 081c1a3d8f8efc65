//! memcpy-kernel's analysis and presentation on made-up results.
use super::*;
use crate::saved::Params as _;

#[test]
fn run_all_gives_the_options_it_states() {
    let p = Params::run_all();
    assert_eq!((p.streams.start(), p.streams.end()), (8, 32));
    assert_eq!((p.streams_step, p.cycles_step), (24, 128));
    let d = Params::default();
    assert_eq!(
        (d.streams.start(), d.streams.end(), d.cycles_step),
        (8, 8, 64)
    );
    assert_eq!(
        Params {
            streams: d.streams,
            streams_step: d.streams_step,
            cycles_step: d.cycles_step,
            ..p
        },
        d
    );
}
