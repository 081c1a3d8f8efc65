//! compare-kernels: each Rust kernel against its CUDA C++ twin, in every form (plain, safe,
//! tuned), each side in every spelling it has of the form (`runtime::kernels::Spelling`),
//! at the shapes its module `shapes` lists: the write-ups', a sweep with tails, and
//! shapes drawn from the run's seed.
//!
//! At each shape and form, every spelling first runs once into a poisoned output on inputs
//! whose elements all differ (seeded from the run's seed), checked element by element
//! against the CPU (matmul in f64 within the bound of `verify::matmul_reference`, AddKernel
//! exactly, sincos bit for bit against its language's own sines and cosines: `sincos`);
//! then the spellings of both languages are launched in turn on one stream, an event
//! before and after each launch, so all see the same clocks and neighbours (fill, whose
//! launches last microseconds, runs as many launches back to back between the two events
//! as make up `BATCHED_SAMPLE_MS`). Each sample is issued behind a closed gate the host
//! opens once it is queued, so the GPU runs it as fast as it can, never waiting for the
//! host's next call. A case whose inputs fit in L2 is timed twice: warm (back to back, as
//! a kernel re-reading its inputs sees them) and cold (L2 flushed before each launch by
//! writing a buffer twice its size). matmul's warm launches are shared among
//! `--placements` places of its inputs in one allocation. Each spelling's card (the
//! driver's figures at the launch shape and the PTX's counts) is read beside its times.
//! The timed launches write the same output over and over; the one the last of them
//! leaves (matmul's where it ran at the checked place) is compared bit for bit with its
//! spelling's checked output. The math library functions alone (`sinf`, `cosf`,
//! `sincosf`: the `libm` crate's against CUDA's) run at the write-ups' sincos array, with
//! each output's largest error in ulps.
mod cases;
mod placement;
mod shapes;

use crate::rng::Rng;
use streamlab_results::card::KernelCard;
use streamlab_results::experiments::compare_kernels::{
    BATCHED_SAMPLE_MS, Cache, CompareKernels, KernelCase, KernelComparison, Origin, Params,
    SpellingRun,
};
use streamlab_results::saved::{KernelForm, KernelSet, Params as _, Verification};

use super::{Context, Run, RunError};
use crate::measure::series;
use crate::runtime::baseline::CudaKernels;
use crate::runtime::gate::Gate;
use crate::runtime::kernels::RUST_PTX;
use crate::runtime::kernels::Spelled;
use crate::runtime::spellings::Spelling;
use crate::runtime::{
    DeviceBuffer, Element, Function, Gpu, Kernels, PinnedBuffer, RuntimeError, Shape, Stream,
};
use crate::verify::Bits;

/// The most launches one sample runs back to back.
const MAX_LAUNCHES_PER_SAMPLE: u32 = 256;

impl Run for CompareKernels {
    const SUMMARY: &'static str =
        "Time each Rust kernel against its CUDA C++ twin, each side's best spelling";
    const ABOUT: &'static str = "Time each Rust kernel against its CUDA C++ twin (NVRTC), plain, safe and tuned \
        forms, each side's fastest spelling, at the write-ups' shapes, shapes with tails and shapes drawn from --seed";

    const NEEDS_CUDA_TWINS: bool = true;

    fn run(ctx: &Context, p: &Params) -> Result<KernelComparison, RunError> {
        p.validate()?;
        let Some(cuda) = ctx.cuda else {
            return Err(RunError::Input(
                "compare-kernels needs the CUDA C++ twins, but NVRTC is not available: install the CUDA toolkit's NVRTC or add its lib64 folder to LD_LIBRARY_PATH".into(),
            ));
        };
        let seed = p.seed.unwrap_or_else(Rng::seed_from_clock);
        crate::progress::note(&format!(
            "compare-kernels: seed {seed} (--seed {seed} draws the same shapes and inputs)"
        ));
        let shapes = shapes::shapes(p, seed);
        let l2_bytes = ctx.gpu.info().l2_bytes;
        let flush_len = (2 * l2_bytes as usize).max(16 << 20);
        ctx.gpu.ensure_fits(flush_len as u64)?;
        let mut bench = Bench {
            gpu: ctx.gpu,
            sets: [ctx.gpu.kernels(), &cuda.kernels],
            ptx: [RUST_PTX, &cuda.ptx],
            params: p,
            l2_bytes,
            seed,
            stream: ctx.gpu.streams(1)?.remove(0),
            flush: ctx.gpu.alloc::<u8>(flush_len)?,
            gate: Gate::new(ctx.gpu)?,
        };
        let steps =
            shapes.fill.len() + shapes.matmul.len() + shapes.add.len() + shapes.sincos.len() + 1;
        let mut task = crate::progress::Task::start("rust vs cuda", steps as u64);
        let mut cases = Vec::new();
        for shape in &shapes.fill {
            cases.extend(bench.fill(shape)?);
            task.step(&format!("fill {}×{}", shape.rows, shape.cols));
        }
        for shape in &shapes.matmul {
            cases.extend(bench.matmul(shape)?);
            task.step(&format!("matmul {}", shape.case()));
        }
        let longest = |lens: &mut dyn Iterator<Item = usize>| lens.max().unwrap_or(1);
        let mut ints = Buffers::new(
            ctx.gpu,
            &bench.stream,
            longest(&mut shapes.add.iter().map(|s| s.elements)),
            -1,
            |input| Rng::new(input_seed(seed, 2)).fill_any_i32(input),
        )?;
        for shape in &shapes.add {
            cases.extend(bench.add_kernel(ctx, shape, &mut ints)?);
            task.step(&format!("add_kernel {}", shape.case(p)));
        }
        drop(ints);
        let mut floats = Buffers::new(
            ctx.gpu,
            &bench.stream,
            longest(&mut shapes.sincos.iter().map(|s| s.elements)),
            f32::NAN,
            |input| Rng::new(input_seed(seed, 3)).fill_unit(input),
        )?;
        for shape in &shapes.sincos {
            cases.extend(bench.sincos(shape, &mut floats)?);
            task.step(&format!("sincos over {}", shape.elements));
        }
        drop(floats);
        cases.extend(bench.math()?);
        task.step("math libraries");
        task.finish();
        Ok(comparison(ctx, cuda, p, seed, cases))
    }
}

fn comparison(
    ctx: &Context,
    cuda: &CudaKernels,
    p: &Params,
    seed: u64,
    cases: Vec<KernelCase>,
) -> KernelComparison {
    KernelComparison {
        run: ctx.record(
            p.clone(),
            crate::verify::combine(cases.iter().map(|k| k.verification.clone()).collect()),
            true,
        ),
        cuda_build: cuda.build.clone(),
        seed: Some(seed),
        cases,
    }
}

/// Both kernel sets on one GPU and one stream, and a buffer whose writing flushes L2.
struct Bench<'a> {
    gpu: &'a Gpu,
    /// The Rust and the CUDA C++ kernels.
    sets: [&'a Kernels; 2],
    /// The Rust and the CUDA C++ PTX, for the cards.
    ptx: [&'a str; 2],
    params: &'a Params,
    l2_bytes: u64,
    seed: u64,
    stream: Stream<'a>,
    flush: DeviceBuffer<u8>,
    /// Each timed sample waits behind it until the host has issued the whole sample.
    gate: Gate,
}

/// An input and an output on the GPU and on the host, for the largest array of a
/// kernel's shapes (each shape uses their first elements): made and filled once.
struct Buffers<T> {
    host_in: PinnedBuffer<T>,
    dev_in: DeviceBuffer<T>,
    dev_out: DeviceBuffer<T>,
    host_out: PinnedBuffer<T>,
}

impl<T: Element> Buffers<T> {
    /// Buffers of `len` elements, the input filled by `fill` and copied to the GPU.
    fn new(
        gpu: &Gpu,
        stream: &Stream,
        len: usize,
        poison: T,
        fill: impl FnOnce(&mut [T]),
    ) -> Result<Self, RuntimeError> {
        gpu.ensure_fits(2 * (len * size_of::<T>()) as u64)?;
        let mut host_in = gpu.pinned(len, poison)?;
        fill(host_in.as_mut_slice()?);
        let mut dev_in = gpu.alloc(len)?;
        stream.htod(&mut dev_in, 0, &host_in, 0..len)?;
        stream.synchronize()?;
        Ok(Buffers {
            host_in,
            dev_in,
            dev_out: gpu.alloc(len)?,
            host_out: gpu.pinned(len, poison)?,
        })
    }
}

/// One entry a case times: its language, what it is, and its function.
#[derive(Clone, Copy)]
struct Entry<P> {
    language: KernelSet,
    spelling: Spelling,
    function: Function<P>,
}

const LANGUAGES: [KernelSet; 2] = [KernelSet::Rust, KernelSet::Cuda];

/// A seed of its own for each input, drawn from the run's.
fn input_seed(seed: u64, salt: u64) -> u64 {
    Rng::new(seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15)).next_u64()
}

impl<'a> Bench<'a> {
    /// Every spelling of `form` in both languages, Rust's first, from `pick`'s list.
    fn entries<P>(
        &self,
        pick: impl Fn(&Kernels) -> &[Spelled<P>],
        form: KernelForm,
    ) -> Vec<Entry<P>> {
        (LANGUAGES.iter().zip(self.sets))
            .flat_map(|(&language, set)| {
                (pick(set).iter())
                    .filter(|s| s.spelling.form == form)
                    .map(move |s| Entry {
                        language,
                        spelling: s.spelling,
                        function: s.function,
                    })
            })
            .collect()
    }

    /// The card of `function` of `language`, launched with `threads` threads a block.
    fn card_of<P>(
        &self,
        language: KernelSet,
        function: &Function<P>,
        threads: u32,
    ) -> Result<Option<KernelCard>, RuntimeError> {
        let ptx = self.ptx[usize::from(language == KernelSet::Cuda)];
        let driver = function.driver_card(threads)?;
        Ok(nvptx_builder::ptx::counts(ptx, function.name()).map(|ptx| KernelCard { driver, ptx }))
    }

    /// Each entry's card at `shape`.
    fn cards<P>(
        &self,
        entries: &[Entry<P>],
        shape: Shape,
    ) -> Result<Vec<Option<KernelCard>>, RuntimeError> {
        let threads = shape.block.0 * shape.block.1;
        (entries.iter())
            .map(|e| self.card_of(e.language, &e.function, threads))
            .collect()
    }

    /// Launch entry `e` of `n` in turn, `launches` times each after `warmup` each, an event
    /// before and after every launch (and L2 flushed before it, `cold`), each issued behind
    /// the closed gate; each entry's milliseconds.
    fn round_robin(
        &mut self,
        n: usize,
        launches: usize,
        cold: bool,
        launch: impl FnMut(&Stream, usize) -> Result<(), RuntimeError>,
    ) -> Result<Vec<Vec<f64>>, RuntimeError> {
        self.batched_round_robin(n, launches, 1, cold, launch)
    }

    /// [`Self::round_robin`] with `per_sample` launches back to back between each sample's
    /// two events, the sample their mean per launch.
    fn batched_round_robin(
        &mut self,
        n: usize,
        launches: usize,
        per_sample: u32,
        cold: bool,
        mut launch: impl FnMut(&Stream, usize) -> Result<(), RuntimeError>,
    ) -> Result<Vec<Vec<f64>>, RuntimeError> {
        for _ in 0..self.params.warmup {
            for e in 0..n {
                launch(&self.stream, e)?;
            }
        }
        let mut marks = Vec::with_capacity(launches * n);
        for _ in 0..launches {
            for e in 0..n {
                // The sample runs once the host has issued all of it: its time is the GPU's,
                // not the host's (a launch of microseconds outruns the host's calls).
                self.gate.close();
                self.gate.hold(&self.stream)?;
                if cold {
                    self.stream.poison(&mut self.flush)?;
                }
                let (start, end) = (self.gpu.event()?, self.gpu.event()?);
                self.stream.record(&start)?;
                for _ in 0..per_sample {
                    launch(&self.stream, e)?;
                }
                self.stream.record(&end)?;
                self.gate.open();
                marks.push((e, start, end));
            }
        }
        let mut times = vec![Vec::with_capacity(launches); n];
        for (e, start, end) in &marks {
            times[*e].push(start.elapsed_ms(end)? / f64::from(per_sample));
        }
        Ok(times)
    }

    /// How many launches each sample of a kernel runs back to back so that it lasts
    /// [`BATCHED_SAMPLE_MS`] (at most [`MAX_LAUNCHES_PER_SAMPLE`]): from the fastest of
    /// three launches of each of the `n` entries, each timed alone.
    fn launches_per_sample(
        &mut self,
        n: usize,
        mut launch: impl FnMut(&Stream, usize) -> Result<(), RuntimeError>,
    ) -> Result<u32, RuntimeError> {
        let probe = self.round_robin(n, 3, false, &mut launch)?;
        let fastest = (probe.iter().flatten().copied())
            .filter(|ms| *ms > 0.0)
            .fold(f64::INFINITY, f64::min);
        if !fastest.is_finite() {
            return Ok(MAX_LAUNCHES_PER_SAMPLE);
        }
        let wanted = (BATCHED_SAMPLE_MS / fastest).ceil();
        Ok(wanted.clamp(1.0, f64::from(MAX_LAUNCHES_PER_SAMPLE)) as u32)
    }

    /// Run each entry once into `out` (poisoned first), copy its first `len` elements
    /// back into `host` and check them: the checks, and the last entry's output (which
    /// the last timed launch of the case writes again: [`Self::timed_check`]).
    fn checked<T: Element, P>(
        &self,
        entries: &[Entry<P>],
        (out, host, len): (&mut DeviceBuffer<T>, &mut PinnedBuffer<T>, usize),
        mut launch: impl FnMut(&Stream, &Entry<P>, &mut DeviceBuffer<T>) -> Result<(), RuntimeError>,
        check: impl Fn(&Entry<P>, &[T]) -> Verification,
    ) -> Result<(Vec<Verification>, Vec<T>), RuntimeError> {
        let mut checks = Vec::with_capacity(entries.len());
        for entry in entries {
            self.stream.poison(out)?;
            launch(&self.stream, entry, out)?;
            self.stream.dtoh(host, 0, out, 0..len)?;
            self.stream.synchronize()?;
            checks.push(check(entry, &host.as_slice()?[..len]));
        }
        Ok((checks, host.as_slice()?[..len].to_vec()))
    }

    /// The output the case's last timed launch left in `out` (the last entry's, on the
    /// inputs it was checked on) against what its checked launch wrote, bit for bit: the
    /// timed launches computed what the checked one did.
    fn timed_check<T: Element + Bits>(
        &self,
        what: &str,
        (out, host): (&DeviceBuffer<T>, &mut PinnedBuffer<T>),
        checked: &[T],
    ) -> Result<Verification, RuntimeError> {
        let len = checked.len();
        self.stream.dtoh(host, 0, out, 0..len)?;
        self.stream.synchronize()?;
        let what = format!("{what}, the last timed launch's output");
        Ok(crate::verify::identical(
            &what,
            &host.as_slice()?[..len],
            checked,
            |i| format!("element {i}"),
        ))
    }

    /// The case of `entries` at one shape and cache state, from their times and checks.
    #[allow(clippy::too_many_arguments)]
    fn case<P>(
        &self,
        kernel: &str,
        case: String,
        form: Option<KernelForm>,
        launch: String,
        entries: &[Entry<P>],
        times: Vec<Vec<f64>>,
        checks: &[Verification],
        cards: &[Option<KernelCard>],
        cache: Option<Cache>,
        input_bytes: Option<u64>,
        origin: Origin,
    ) -> KernelCase {
        let spellings: Vec<SpellingRun> = (entries.iter().zip(times))
            .zip(checks.iter().zip(cards))
            .map(|((entry, times), (check, card))| SpellingRun {
                language: entry.language,
                entry: entry.spelling.entry.to_owned(),
                how: entry.spelling.how.to_owned(),
                times: series(times),
                by_place: Vec::new(),
                card: *card,
                verification: check.clone(),
            })
            .collect();
        KernelCase {
            kernel: kernel.to_owned(),
            case,
            form,
            launch,
            rust: None,
            cuda: None,
            verification: crate::verify::combine(checks.to_vec()),
            cards: None,
            max_ulps: None,
            placements: Vec::new(),
            spellings,
            cache,
            input_bytes,
            origin,
            launches_per_sample: 1,
        }
    }

    /// Launches a spelling gets at a shape of `origin`.
    fn launches(&self, origin: Origin) -> usize {
        match origin {
            Origin::Defaults => self.params.launches,
            _ => self.params.sweep_launches.max(1),
        }
    }

    /// The cache states to time a case whose inputs are `bytes` in: warm, and cold where
    /// they fit in L2.
    fn caches(&self, bytes: u64) -> Vec<Cache> {
        if bytes <= self.l2_bytes {
            vec![Cache::Warm, Cache::Cold]
        } else {
            vec![Cache::Warm]
        }
    }
}
