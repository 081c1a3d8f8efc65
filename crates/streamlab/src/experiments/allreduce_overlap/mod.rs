//! allreduce-overlap on the GPUs: one host thread drives every GPU chosen, each with a
//! compute stream and two communication streams (the default priority and the
//! greatest), and NCCL's communicators made for each CTA budget in turn
//! ([`crate::runtime::nccl`]).
//!
//! Each GPU holds `--buckets` buckets of the largest size swept, its own pattern for them
//! (values in -2048..2048 drawn from a seed of the run, so any sum over GPUs is exact in
//! float32 in any order and a wrong index shows), a receive buffer for the out-of-place
//! all-reduces, two probe buffers for the independent all-reduce loop, and the product's
//! matrices: A's row i all `i % 7 + 1`, B's cell (k, j) `(5k + 3j) % 4`, so every cell of
//! C is known from B's column sums. A layer is the product, then `copy_u32` writing
//! bucket k from the pattern.
//!
//! For each (bucket size, budget): the all-reduces alone, then for each ratio the product's
//! inner size (from one product's time per unit of inner size, measured once, and the
//! part of a layer that does not grow with it, measured at each bucket size), and every
//! configuration: `--warmup` untimed iterations each, then `--samples` rounds of one
//! timed iteration each, behind a gate opened once every GPU's iteration is issued. The
//! first timed iteration of each configuration runs into poisoned buffers and every
//! element of every GPU's buckets (or receive buffer) is checked after it.
use streamlab_results::experiment::Experiment as _;
use streamlab_results::experiments::allreduce_overlap::{
    AllreduceOverlap, AllreduceOverlapResult, Budget, Params, Point, RatioPoint,
};
use streamlab_results::saved::{NcclUsed, Params as _, UsageError, Verification};
use streamlab_results::spread::Devices;
use streamlab_results::stats::Series;

use super::{Context, Rebind, Run, RunError, chosen_gpus, several_gpus};
use crate::measure::series;
use crate::runtime::gate::Gate;
use crate::runtime::nccl::{Communicators, CtaBudget, Nccl};
use crate::runtime::peer::portable_pinned;
use crate::runtime::{Gpu, PinnedBuffer, RuntimeError};
use schedule::{
    Config, Expected, INNER_MAX, INNER_PROBE, LOOP_MARGIN, Lanes, MOST_LOOPED, Schedule, Side,
    Sides, pattern,
};

mod schedule;

/// Every (bucket MiB, budget) measured, in order: the bucket sweep at NCCL's default
/// budget, then the budget sweep at `budget_mib`, NCCL's default first (the other
/// budgets run its products, so each ratio's compute is the same for every budget),
/// each pair once.
fn points(p: &Params) -> Vec<(u32, Budget)> {
    let mut out: Vec<(u32, Budget)> = Vec::new();
    let sweep = (p.bucket_mib.iter().map(|&m| (m, Budget::Default)))
        .chain([(p.budget_mib, Budget::Default)])
        .chain(p.budgets.iter().map(|&b| (p.budget_mib, b)));
    for point in sweep {
        if !out.contains(&point) {
            out.push(point);
        }
    }
    out
}

impl Run for AllreduceOverlap {
    const SUMMARY: &'static str = "compute against NCCL's all-reduce over several GPUs";
    const ABOUT: &'static str = "Layers of the project's matrix product, each writing a bucket that NCCL all-reduces \
        over every GPU on a communication stream: compute alone, all-reduces alone, \
        serialized and overlapped (default and greatest priority), each side beside a loop \
        of the other, over bucket sizes, compute : all-reduce ratios and NCCL CTA budgets, \
        against the bound max(C, M) + min(C, M)/K (needs two or more GPUs and NCCL 2.27 or \
        newer)";

    fn unavailable(params: &Params) -> Result<Option<String>, RunError> {
        if let Devices::TooFew(why) = several_gpus(AllreduceOverlap::NAME, &params.devices)? {
            return Ok(Some(why));
        }
        if let Some(why) = budget_overridden() {
            return Ok(Some(why));
        }
        Ok(Nccl::find().err().map(|e| e.0))
    }

    fn gpus(params: &Params) -> Result<Vec<usize>, RunError> {
        chosen_gpus(AllreduceOverlap::NAME, &params.devices)
    }

    fn run(ctx: &Context, p: &Params) -> Result<AllreduceOverlapResult, RunError> {
        p.validate()?;
        let ordinals = chosen_gpus(AllreduceOverlap::NAME, &p.devices)?;
        if let Some(why) = budget_overridden() {
            return Err(UsageError::new(why).into());
        }
        let nccl = Nccl::find().map_err(|e| UsageError::new(e.0))?;
        let _rebind = Rebind(ctx.gpu);
        let gpus = (ordinals.iter())
            .map(|&o| Gpu::open(o))
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<&Gpu> = gpus.iter().collect();
        let points = points(p);
        let most = points.iter().map(|&(mib, _)| mib).max().unwrap_or(1) as usize;
        let elements = most << 18;
        let seed = crate::rng::Rng::seed_from_clock();
        let mut host = portable_pinned(p.buckets * elements, f32::NAN)?;
        let mut sides = open_sides(p, &refs, (elements, seed), &mut host)?;
        let mut gate = Gate::across(&refs)?;
        let unit_ms = time_per_inner(&mut sides.0[0], p.side)?;
        let expected = Expected {
            seed,
            ranks: refs.len(),
        };
        let mut task = crate::progress::Task::start(AllreduceOverlap::NAME, points.len() as u64);
        let (mut done, mut checks) = (Vec::new(), Vec::new());
        let mut made: Option<(Budget, Communicators)> = None;
        // The products NCCL's default budget ran at the budget sweep's bucket size: every
        // other budget there runs the same, so that its compute is the same.
        let mut sweep_inners: Option<Vec<u32>> = None;
        for (mib, budget) in points {
            if ctx.stopping() {
                break;
            }
            if made.as_ref().is_none_or(|(b, _)| *b != budget) {
                drop(made.take());
                made = Some((budget, nccl.communicators(&refs, cta_budget(budget))?));
            }
            let comms = &made.as_ref().expect("made above").1;
            let mut schedule = Schedule {
                sides: &mut sides,
                comms,
                buckets: p.buckets,
                elements: (mib as usize) << 18,
                side: p.side,
                inner: INNER_PROBE,
                loops: (1, 1),
                drop_wait: p.drop_wait,
            };
            let inners = (mib == p.budget_mib && budget != Budget::Default)
                .then_some(sweep_inners.as_deref())
                .flatten();
            let point = measure_point(
                p,
                (&mut schedule, &mut gate),
                (&expected, &mut host),
                (unit_ms, budget, inners),
                &mut checks,
            )?;
            if mib == p.budget_mib && budget == Budget::Default {
                sweep_inners = Some(point.ratios.iter().map(|q| q.inner).collect());
            }
            done.push(point);
            task.step(&format!("{mib} MiB buckets, {}", budget.label()));
        }
        task.finish();
        drop(made);
        let devices = gpus.iter().map(|g| g.info().clone()).collect();
        drop(sides);
        let mut run = ctx.record(
            Params {
                devices: ordinals,
                ..p.clone()
            },
            crate::verify::combine(checks),
            !ctx.stopping(),
        );
        run.provenance.nccl = Some(NcclUsed {
            path: nccl.found.path.display().to_string(),
            found_in: nccl.found.how.to_owned(),
            version: nccl.found.version(),
            variables: crate::runtime::nccl::variables(),
        });
        Ok(AllreduceOverlapResult {
            run,
            gpus: devices,
            points: done,
        })
    }
}

/// NCCL's variables that take precedence over a communicator's CTA budget.
const BUDGET_VARIABLES: [&str; 5] = [
    "NCCL_MAX_CTAS",
    "NCCL_MIN_CTAS",
    "NCCL_CTA_POLICY",
    "NCCL_MAX_NCHANNELS",
    "NCCL_MIN_NCHANNELS",
];

/// Why the CTA budgets cannot be swept here, where one of [`BUDGET_VARIABLES`] is set.
fn budget_overridden() -> Option<String> {
    let set = BUDGET_VARIABLES
        .iter()
        .find(|v| std::env::var_os(v).is_some())?;
    Some(format!(
        "{set} is set, and NCCL would take it over the CTA budgets allreduce-overlap sweeps: unset it"
    ))
}

fn cta_budget(budget: Budget) -> CtaBudget {
    match budget {
        Budget::Default => CtaBudget::Default,
        Budget::Efficiency => CtaBudget::Efficiency,
        Budget::MaxCtas(n) => CtaBudget::MaxCtas(n),
    }
}

/// Every GPU with its streams, events and buffers: the pattern and B uploaded through
/// `host`, A for [`INNER_PROBE`].
fn open_sides<'g>(
    p: &Params,
    gpus: &[&'g Gpu],
    (elements, seed): (usize, u64),
    host: &mut PinnedBuffer<f32>,
) -> Result<Sides<'g>, RuntimeError> {
    let total = p.buckets * elements;
    let side = p.side as usize;
    let matrix = side * INNER_MAX as usize;
    let mut b_host = portable_pinned(matrix, 0.0f32)?;
    crate::parallel::for_each_chunk_mut(b_host.as_mut_slice()?, |start, chunk| {
        for (i, v) in chunk.iter_mut().enumerate() {
            *v = b_cell((start + i) / side, (start + i) % side);
        }
    });
    let mut sides = Sides(Vec::new());
    for (rank, &gpu) in gpus.iter().enumerate() {
        gpu.bind()?;
        gpu.ensure_fits(((3 * total + 2 * elements + 2 * matrix + side * side) * 4) as u64)?;
        let (_, greatest) = gpu.stream_priorities()?;
        let mut s = Side {
            gpu,
            rank,
            lanes: Lanes {
                compute: gpu.streams(1)?.remove(0),
                comm: gpu.streams(1)?.remove(0),
                high: gpu.streams_at(1, greatest)?.remove(0),
            },
            buckets: gpu.alloc(total)?,
            pattern: gpu.alloc(total)?,
            received: gpu.alloc(total)?,
            probe_src: gpu.alloc(elements)?,
            probe_dst: gpu.alloc(elements)?,
            a: gpu.alloc(matrix)?,
            b: gpu.alloc(matrix)?,
            c: gpu.alloc(side * side)?,
            written: (0..p.buckets)
                .map(|_| gpu.event())
                .collect::<Result<_, _>>()?,
            start: gpu.event()?,
            end: gpu.event()?,
            done: gpu.event()?,
        };
        crate::parallel::for_each_chunk_mut(host.as_mut_slice()?, |start, chunk| {
            for (i, v) in chunk.iter_mut().enumerate() {
                *v = pattern(seed, rank, start + i);
            }
        });
        s.lanes.compute.htod(&mut s.pattern, 0, host, 0..total)?;
        s.lanes
            .compute
            .dtod(&mut s.probe_src, 0, &s.pattern, 0..elements)?;
        s.lanes.compute.htod(&mut s.b, 0, &b_host, 0..matrix)?;
        s.lanes.compute.synchronize()?;
        sides.0.push(s);
    }
    fill_a(&mut sides, p.side, INNER_PROBE)?;
    Ok(sides)
}

/// A's cell in row `i`, whatever its column: every cell of the product is then B's column
/// sum times it.
fn a_cell(i: usize) -> f32 {
    (i % 7 + 1) as f32
}

/// B's cell (`k`, `j`), an integer 0..4, so that every sum of products is exact.
fn b_cell(k: usize, j: usize) -> f32 {
    ((5 * k + 3 * j) % 4) as f32
}

/// A (`side` × `inner`, row i all [`a_cell`]) on every GPU.
fn fill_a(sides: &mut Sides, side: u32, inner: u32) -> Result<(), RuntimeError> {
    let n = side as usize * inner as usize;
    let mut a = portable_pinned(n, 0.0f32)?;
    crate::parallel::for_each_chunk_mut(a.as_mut_slice()?, |start, chunk| {
        for (i, v) in chunk.iter_mut().enumerate() {
            *v = a_cell((start + i) / inner as usize);
        }
    });
    for s in sides.0.iter_mut() {
        s.gpu.bind()?;
        s.lanes.compute.htod(&mut s.a, 0, &a, 0..n)?;
        s.lanes.compute.synchronize()?;
    }
    Ok(())
}

/// Milliseconds of one product per unit of inner size, on the first GPU (the median of
/// five after three untimed).
fn time_per_inner(s: &mut Side, side: u32) -> Result<f64, RuntimeError> {
    s.gpu.bind()?;
    let mut times = Vec::new();
    for i in 0..8 {
        s.lanes.compute.record(&s.start)?;
        s.multiply(false, side, INNER_PROBE)?;
        s.lanes.compute.record(&s.end)?;
        let ms = s.start.elapsed_ms(&s.end)?;
        if i >= 3 {
            times.push(ms);
        }
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2] / f64::from(INNER_PROBE))
}

/// The inner size whose product takes about `ms`, a multiple of 16 within
/// 16..=[`INNER_MAX`].
fn inner_for(ms: f64, unit_ms: f64) -> u32 {
    let units = (ms / unit_ms / 16.0)
        .round()
        .clamp(1.0, f64::from(INNER_MAX / 16));
    units as u32 * 16
}

/// `configs` round-robin: `--warmup` untimed iterations each, then `--samples` rounds of
/// one timed iteration each, the first of each checked. Each configuration's times, and
/// how many samples' independent loop ended before the side it was to slow.
fn rounds(
    p: &Params,
    (schedule, gate): (&mut Schedule, &mut Gate),
    configs: &[Config],
    (expected, host): (&Expected, &mut PinnedBuffer<f32>),
    checks: &mut Vec<Verification>,
) -> Result<(Vec<Series>, usize), RunError> {
    for &config in configs {
        for _ in 0..p.warmup {
            schedule.sample(config, None, None)?;
        }
    }
    let mut times = vec![Vec::new(); configs.len()];
    let mut short = 0;
    for round in 0..p.samples {
        for (i, &config) in configs.iter().enumerate() {
            let check = (round == 0).then_some((expected, &mut *host));
            let sample = schedule.sample(config, Some(&mut *gate), check)?;
            times[i].push(sample.ms);
            short += usize::from(!sample.loop_outlasted);
            checks.extend(sample.check);
        }
    }
    Ok((times.into_iter().map(series).collect(), short))
}

/// One (bucket size, budget): the all-reduces alone, then each ratio's configurations,
/// and the last product's every cell.
fn measure_point(
    p: &Params,
    (schedule, gate): (&mut Schedule, &mut Gate),
    (expected, host): (&Expected, &mut PinnedBuffer<f32>),
    (unit_ms, budget, inners): (f64, Budget, Option<&[u32]>),
    checks: &mut Vec<Verification>,
) -> Result<Point, RunError> {
    let (alone, _) = rounds(
        p,
        (schedule, gate),
        &[Config::InPlace, Config::OutOfPlace],
        (expected, host),
        checks,
    )?;
    let [in_place, out_of_place] = <[Series; 2]>::try_from(alone).expect("two configurations");
    let k = p.buckets as f64;
    let reduce_ms = in_place.median();
    let inners = match inners {
        Some(inners) => inners.to_vec(),
        None => {
            // A layer's part that does not grow with the inner size (the bucket's
            // writer, the launches), from a layer at the probe's inner size.
            fill_a(schedule.sides, p.side, INNER_PROBE)?;
            schedule.inner = INNER_PROBE;
            schedule.sample(Config::Compute, None, None)?;
            let probe_ms = schedule.sample(Config::Compute, None, None)?.ms;
            let fixed_ms = (probe_ms / k - unit_ms * f64::from(INNER_PROBE)).max(0.0);
            (p.ratios.iter())
                .map(|ratio| inner_for(ratio * reduce_ms / k - fixed_ms, unit_ms))
                .collect()
        }
    };
    let mut ratios = Vec::new();
    for (&ratio, &inner) in p.ratios.iter().zip(&inners) {
        fill_a(schedule.sides, p.side, inner)?;
        schedule.inner = inner;
        let compute_ms = schedule.sample(Config::Compute, None, None)?.ms;
        // Each loop outlasts the side it slows by a margin, as far as the gate lets it
        // queue; a sample where it did not is counted.
        let looped =
            |ms: f64, each: f64| ((LOOP_MARGIN * ms / each).ceil() as usize + 1).min(MOST_LOOPED);
        let product_ms = (unit_ms * f64::from(inner)).max(f64::MIN_POSITIVE);
        schedule.loops = (
            looped(compute_ms, reduce_ms / k),
            looped(reduce_ms, product_ms),
        );
        let configs = [
            Config::Compute,
            Config::Serialized,
            Config::Overlapped,
            Config::OverlappedHigh,
            Config::ComputeInterfered,
            Config::ReduceInterfered,
        ];
        let (timed, short_loops) = rounds(p, (schedule, gate), &configs, (expected, host), checks)?;
        // The product the layers wrote, not the loop beside the all-reduces.
        schedule.sample(Config::Compute, None, None)?;
        checks.push(check_product(schedule, p.side, inner)?);
        let [
            compute,
            serialized,
            overlapped,
            overlapped_high,
            compute_interfered,
            reduce_interfered,
        ] = <[Series; 6]>::try_from(timed).expect("six configurations");
        ratios.push(RatioPoint {
            ratio,
            inner,
            compute,
            serialized,
            overlapped,
            overlapped_high,
            compute_interfered,
            reduce_interfered,
            short_loops,
        });
    }
    Ok(Point {
        bucket_bytes: (schedule.elements * size_of::<f32>()) as u64,
        budget,
        in_place,
        out_of_place,
        ratios,
    })
}

/// Every cell of each GPU's last product: row `i`'s [`a_cell`] times B's column sum.
fn check_product(
    schedule: &mut Schedule,
    side: u32,
    inner: u32,
) -> Result<Verification, RuntimeError> {
    let n = side as usize;
    let column: Vec<f64> = (0..n)
        .map(|j| (0..inner as usize).map(|k| f64::from(b_cell(k, j))).sum())
        .collect();
    let mut checks = Vec::new();
    for s in &schedule.sides.0 {
        s.gpu.bind()?;
        let mut c = s.gpu.pinned(n * n, f32::NAN)?;
        s.lanes.compute.dtoh(&mut c, 0, &s.c, 0..n * n)?;
        let what = format!(
            "the product on GPU {}, {side} × {side} × {inner}",
            s.gpu.info().ordinal
        );
        checks.push(crate::verify::compare(
            &what,
            c.as_slice()?,
            |i| f64::from(a_cell(i / n)) * column[i % n],
            0.0,
        ));
    }
    Ok(crate::verify::combine(checks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_point_is_measured_once_the_bucket_sweep_first() {
        let p = Params {
            bucket_mib: vec![1, 25],
            budgets: vec![Budget::Default, Budget::MaxCtas(4)],
            budget_mib: 25,
            ..Params::default()
        };
        let once = vec![
            (1, Budget::Default),
            (25, Budget::Default),
            (25, Budget::MaxCtas(4)),
        ];
        assert_eq!(points(&p), once);
    }
}
