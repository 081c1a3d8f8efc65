//! memcpy-kernel's analysis and presentation on made-up results.
use super::*;
use crate::saved::Params as _;

#[test]
fn run_all_gives_the_options_it_states() {
    let (mut p, d) = (Params::run_all(), Params::default());
    assert_eq!((p.streams.start(), p.streams.end()), (8, 32));
    assert_eq!((p.streams_step, p.cycles_step), (24, 128));
    let by_default = (d.streams.start(), d.streams.end(), d.cycles_step);
    assert_eq!(by_default, (8, 8, 64));
    // Nothing else differs.
    (p.streams, p.streams_step, p.cycles_step) = (d.streams, d.streams_step, d.cycles_step);
    assert_eq!(p, d);
}

/// Where the kernel never outlasts the copies, the words say so, and where the streams
/// never gain, they do not call it a gain. A run stopped before a stream count was
/// measured shows the counts it measured, and its headline is the first of them; with no
/// row there is none.
#[test]
fn the_words_tables_and_headline_without_a_breakeven_a_gain_or_every_stream_count() {
    let finding = |r: &MemcpyKernelResult| {
        let words = Analyzed::<MemcpyKernel>::new(KernelSet::Rust, r.clone()).words;
        words.unwrap().part("finding").unwrap()
    };
    let mut r: MemcpyKernelResult = serde_json::from_str(include_str!(
        "../../../../../docs/results/h200-quick/memcpy-kernel.json"
    ))
    .unwrap();
    // Its best row is named apart only where it is not the breakeven row.
    let full = finding(&r);
    match full.split_once("; the most is ") {
        Some((breakeven, most)) => assert!(!breakeven.contains(&most[..most.find('×').unwrap()])),
        None => assert!(full.contains(", the most of any row."), "{full}"),
    }
    r.rows.retain(|x| x.cycles < 1000);
    // The committed quick run's figures may be measured again: only the words are held.
    let gained = finding(&r);
    assert!(gained.contains("the most gained by streams is ") && gained.ends_with(" cycles)."));
    for x in &mut r.rows {
        x.concurrent = Series::new(x.total.samples_ms.iter().map(|v| v * 1.2).collect()).unwrap();
    }
    assert!(finding(&r).contains("streams never beat copy, kernel, copy in turn: at best 0.83×"));
    let p = &mut r.run.params;
    (p.streams, p.streams_step) = ("8..=32".parse().unwrap(), 24);
    let a = MemcpyKernel::derive(&r, &[]);
    assert_eq!(
        (a.stream_counts.as_slice(), a.headline_streams),
        ([8].as_slice(), 8)
    );
    assert_eq!(MemcpyKernel::tables(&r, &a, None).len(), 1);
    r.rows.clear();
    assert!(finding(&r).ends_with("and no row's speedup was measured."));
    let a = MemcpyKernel::derive(&r, &[]);
    assert_eq!((a.stream_counts.len(), a.headline_streams), (0, 0));
    assert!(MemcpyKernel::tables(&r, &a, None).is_empty());
}
