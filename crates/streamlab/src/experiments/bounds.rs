//! bounds: the machine's physical limits over one buffer size: a pinned copy each way
//! alone and both ways at once (many pairs back to back, the steady state a pipeline
//! sees), a device-to-device copy (bytes read + bytes written), and the cost of a launch
//! (empty kernels back to back). The copies are checked at the end: what went in came
//! back out.
use streamlab_results::experiments::bounds::{Bounds, BoundsResult, Params};
use streamlab_results::saved::Params as _;

use streamlab_results::saved::timeline::OpKind;

use super::{Context, Run, RunError};
use crate::measure::{StageSampler, series};
use crate::runtime::{DeviceBuffer, Region, Shape};
use streamlab_results::spread::chunks;

/// Whole-array copies back to back per sample, so that both directions at once reach
/// their steady state (one pair alone under-reports the rate: the two copies never
/// start and end together).
const PASSES: usize = 8;

impl Run for Bounds {
    const SUMMARY: &'static str =
        "Measure the physical limits: the link both ways, device copies, a launch";
    const ABOUT: &'static str = "Measure the physical limits: pinned HtoD and DtoH alone and both at once, \
        device-to-device bandwidth and launch cost";

    fn run(ctx: &Context, p: &Params) -> Result<BoundsResult, RunError> {
        p.validate()?;
        let gpu = ctx.gpu;
        let n = p.elements;
        let bytes = (n * size_of::<f32>()) as u64;
        gpu.ensure_fits(2 * bytes)?;
        let mut rng = crate::rng::Rng::new(crate::rng::Rng::seed_from_clock());
        let mut host_in = gpu.pinned(n, 0.0f32)?;
        rng.fill_unit(host_in.as_mut_slice()?);
        let mut host_out = gpu.pinned(n, f32::NAN)?;
        let mut dev_a: DeviceBuffer<f32> = gpu.alloc(n)?;
        let mut dev_b: DeviceBuffer<f32> = gpu.alloc(n)?;
        let streams = gpu.streams(2)?;
        let mut task = crate::progress::Task::start("bounds", 3);
        let copies = StageSampler::measure(
            gpu,
            &streams,
            &chunks(n, 1),
            bytes,
            (p.sampling.repeats, PASSES),
            false,
            |kind, stream, part| match kind {
                OpKind::HtoD => stream.htod(&mut dev_a, part.start, &host_in, part.clone()),
                OpKind::DtoH => stream.dtoh(&mut host_out, part.start, &dev_b, part.clone()),
                _ => Ok(()),
            },
        )?
        .finish();
        task.step("copies alone and both ways");
        let region = Region::new(gpu, 1)?;
        let s = &streams[..1];
        let mut dtod = Vec::with_capacity(p.sampling.repeats);
        for _ in 0..p.sampling.repeats {
            region.begin(s)?;
            s[0].dtod(&mut dev_b, 0, &dev_a, 0..n)?;
            dtod.push(region.end(s)?);
        }
        task.step("device to device");
        let empty = ctx.kernels.empty;
        s[0].launch(&empty, Shape::linear(1, 1), ())?;
        let mut launch = Vec::with_capacity(p.sampling.repeats);
        for _ in 0..p.sampling.repeats {
            region.begin(s)?;
            for _ in 0..p.launches {
                s[0].launch(&empty, Shape::linear(1, 1), ())?;
            }
            launch.push(region.end(s)? / p.launches as f64);
        }
        task.step("launch cost");
        task.finish();
        // What went in must come back out: a → b on the device, b → host.
        s[0].poison(&mut dev_b)?;
        s[0].dtod(&mut dev_b, 0, &dev_a, 0..n)?;
        s[0].dtoh(&mut host_out, 0, &dev_b, 0..n)?;
        s[0].synchronize()?;
        let verification = crate::verify::identical(
            "the array copied in, across the device and back out",
            host_out.as_slice()?,
            host_in.as_slice()?,
            |_| String::new(),
        );
        Ok(BoundsResult {
            run: ctx.record(p.clone(), verification, true),
            copies,
            dtod: series(dtod),
            launch: series(launch),
        })
    }
}
