//! compare-kernels: each Rust kernel against its CUDA C++ twin, in every form (plain, safe,
//! tuned), each side in every spelling it has of the form (`runtime::kernels::Spelling`),
//! at the shapes `streamlab_results::experiments::compare_kernels::shapes` lists: the
//! write-ups', a sweep with tails, and shapes drawn from the run's seed.
//!
//! At each shape and form, every spelling first runs once into a poisoned output on inputs
//! whose elements all differ (seeded from the run's seed), checked element by element
//! against the CPU (matmul in f64 within the bound of `verify::matmul_reference`, AddKernel
//! exactly, sincos within 1e-6); then the spellings of both languages are launched in
//! turn on one stream, an event before and after each launch, so all see the same clocks
//! and neighbours. A case whose inputs fit in L2 is timed twice: warm (back to back, as a
//! kernel re-reading its inputs sees them) and cold (L2 flushed before each launch by
//! writing a buffer twice its size). matmul's warm launches are shared among `--placements`
//! places of its inputs in one allocation. Each spelling's card (the driver's figures at
//! the launch shape and the PTX's counts) is read beside its times. The math library
//! functions alone (`sinf`, `cosf`, `sincosf`: the `libm` crate's against CUDA's) run at
//! the write-ups' sincos array, with each output's largest error in ulps.
use std::ops::Range;

use streamlab_results::card::{self, KernelCard};
use streamlab_results::experiments::compare_kernels::shapes::{
    self, AddShape, FillShape, MatmulShape, SincosShape,
};
use streamlab_results::experiments::compare_kernels::{
    Cache, CompareKernels, KernelCase, KernelComparison, Origin, PLACEMENT_STEP_BYTES, Params,
    Placement, SpellingRun,
};
use streamlab_results::experiments::matmul_streams;
use streamlab_results::rng::Rng;
use streamlab_results::saved::{KernelForm, KernelSet, Params as _, Verification};

use super::{Context, Run, RunError};
use crate::measure::series;
use crate::runtime::baseline::CudaKernels;
use crate::runtime::kernels::RUST_PTX;
use crate::runtime::spellings::{Spelled, Spelling};
use crate::runtime::{
    DeviceBuffer, Element, Function, Gpu, Kernels, PinnedBuffer, RuntimeError, Shape, Stream,
};

/// sincos tolerance: CUDA's `sinf`/`cosf` and the `libm` crate's differ in the last bit,
/// which `sqrt(s² + c²) ≈ 1` carries into a few units of 2^-23 (1.2e-7).
const SINCOS_TOLERANCE: f64 = 1e-6;

impl Run for CompareKernels {
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
        eprintln!("compare-kernels: seed {seed} (--seed {seed} draws the same shapes and inputs)");
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
        params: p.clone(),
        device: ctx.gpu.info().clone(),
        provenance: ctx.provenance(true),
        cuda_build: cuda.build.clone(),
        seed: Some(seed),
        verification: crate::verify::combine(
            cases.iter().map(|k| k.verification.clone()).collect(),
        ),
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
        Ok(card::ptx_counts(ptx, function.name()).map(|ptx| KernelCard { driver, ptx }))
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
    /// before and after every launch (and L2 flushed before it, `cold`); each entry's
    /// milliseconds.
    fn round_robin(
        &mut self,
        n: usize,
        launches: usize,
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
                if cold {
                    self.stream.poison(&mut self.flush)?;
                }
                let (start, end) = (self.gpu.event()?, self.gpu.event()?);
                self.stream.record(&start)?;
                launch(&self.stream, e)?;
                self.stream.record(&end)?;
                marks.push((e, start, end));
            }
        }
        let mut times = vec![Vec::with_capacity(launches); n];
        for (e, start, end) in &marks {
            times[*e].push(start.elapsed_ms(end)?);
        }
        Ok(times)
    }

    /// Run each entry once into `out` (poisoned first), copy its first `len` elements
    /// back into `host` and check them.
    fn checked<T: Element, P>(
        &self,
        entries: &[Entry<P>],
        (out, host, len): (&mut DeviceBuffer<T>, &mut PinnedBuffer<T>, usize),
        mut launch: impl FnMut(&Stream, &Entry<P>, &mut DeviceBuffer<T>) -> Result<(), RuntimeError>,
        check: impl Fn(&Entry<P>, &[T]) -> Verification,
    ) -> Result<Vec<Verification>, RuntimeError> {
        let mut checks = Vec::with_capacity(entries.len());
        for entry in entries {
            self.stream.poison(out)?;
            launch(&self.stream, entry, out)?;
            self.stream.dtoh(host, 0, out, 0..len)?;
            self.stream.synchronize()?;
            checks.push(check(entry, &host.as_slice()?[..len]));
        }
        Ok(checks)
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

    /// `fill` (one raw-pointer store: its plain and tuned forms are one) and `fill_safe`
    /// over a `rows × cols` matrix.
    fn fill(&mut self, s: &FillShape) -> Result<Vec<KernelCase>, RuntimeError> {
        let (rows, cols) = (s.rows as usize, s.cols as usize);
        self.gpu.ensure_fits((rows * cols * 4) as u64)?;
        let mut a: DeviceBuffer<f32> = self.gpu.alloc(rows * cols)?;
        let m = matmul_streams::Params::default();
        let shape = fill_shape(&m, rows, cols);
        let value = Rng::new(input_seed(self.seed, 1)).signed_unit_f32();
        let sets = self.sets;
        let mut cases = Vec::new();
        for safe in [false, true] {
            // One entry a language: each set's own fill.
            let launch = |stream: &Stream, language: usize, out: &mut DeviceBuffer<f32>| {
                let args = (out.all_mut(), s.rows, s.cols, value);
                if safe {
                    stream.launch(&sets[language].fill_safe, shape, args)
                } else {
                    stream.launch(&sets[language].fill, shape, args)
                }
            };
            let name = if safe { "fill_safe" } else { "fill" };
            let mut runs = Vec::new();
            for (language, set) in LANGUAGES.into_iter().zip(sets) {
                let mut host = self.gpu.pinned(rows * cols, f32::NAN)?;
                self.stream.poison(&mut a)?;
                launch(&self.stream, runs.len(), &mut a)?;
                self.stream.dtoh(&mut host, 0, &a, 0..rows * cols)?;
                self.stream.synchronize()?;
                let check = crate::verify::compare(
                    &format!("{name} {rows}×{cols} ({})", language.label()),
                    host.as_slice()?,
                    |_| f64::from(value),
                    0.0,
                );
                let threads = shape.block.0 * shape.block.1;
                let card = if safe {
                    self.card_of(language, &set.fill_safe, threads)?
                } else {
                    self.card_of(language, &set.fill, threads)?
                };
                runs.push((check, card));
            }
            let launches = self.launches(s.origin);
            let times =
                self.round_robin(2, launches, false, |stream, e| launch(stream, e, &mut a))?;
            let spellings = (LANGUAGES.into_iter().zip(times).zip(&runs))
                .map(|((language, times), (check, card))| SpellingRun {
                    language,
                    entry: name.to_owned(),
                    how: if safe {
                        "the store through a slice, its index checked".into()
                    } else {
                        "one raw-pointer store".into()
                    },
                    times: series(times),
                    by_place: Vec::new(),
                    card: *card,
                    verification: check.clone(),
                })
                .collect();
            cases.push(KernelCase {
                kernel: "fill".into(),
                case: s.case(),
                form: safe.then_some(KernelForm::Safe),
                launch: format!(
                    "{rows} × {cols} matrix, grid {:?} × block {:?}",
                    shape.grid, shape.block
                ),
                rust: None,
                cuda: None,
                verification: crate::verify::combine(runs.into_iter().map(|r| r.0).collect()),
                cards: None,
                max_ulps: None,
                placements: Vec::new(),
                spellings,
                cache: None,
                input_bytes: None,
                origin: s.origin,
            });
        }
        Ok(cases)
    }

    /// Every form of `matmul` at `s`, `c = a · b` on inputs whose elements all differ,
    /// placed at each of `--placements` places in one allocation (warm) and at the first
    /// (cold, where they fit in L2).
    fn matmul(&mut self, s: &MatmulShape) -> Result<Vec<KernelCase>, RuntimeError> {
        let (rows, cols, inner) = (s.rows as usize, s.cols as usize, s.inner as usize);
        // The write-ups' shapes at every placement; the sweep's (few launches) at one.
        let places = match s.origin {
            Origin::Defaults => self.params.placements,
            _ => 1,
        };
        let (a_len, b_len) = (rows * inner, inner * cols);
        let step = PLACEMENT_STEP_BYTES / size_of::<f32>();
        let slab_len = placed_len(places, [a_len, b_len], step);
        self.gpu
            .ensure_fits(((slab_len + rows * cols) * size_of::<f32>()) as u64)?;
        let mut host_slab = self.gpu.pinned(slab_len, 0.0f32)?;
        Rng::new(input_seed(
            self.seed,
            u64::from(s.rows) << 40 ^ u64::from(s.cols) << 20 ^ u64::from(s.inner),
        ))
        .fill_signed_unit(host_slab.as_mut_slice()?);
        let mut slab: DeviceBuffer<f32> = self.gpu.alloc(slab_len)?;
        let mut c: DeviceBuffer<f32> = self.gpu.alloc(rows * cols)?;
        let mut host_c = self.gpu.pinned(rows * cols, f32::NAN)?;
        self.stream.htod(&mut slab, 0, &host_slab, 0..slab_len)?;
        self.stream.synchronize()?;
        let m = matmul_streams::Params::default();
        let shape = Shape {
            grid: (
                cols.div_ceil(m.block as usize) as u32,
                rows.div_ceil(m.block as usize) as u32,
            ),
            block: (m.block, m.block),
        };
        let layout: Vec<[Range<usize>; 2]> = (0..places)
            .map(|place| placed_inputs(place, places, [a_len, b_len], step))
            .collect();
        let reference = {
            let host = host_slab.as_slice()?;
            let [a, b] = &layout[0];
            crate::verify::matmul_reference(&host[a.clone()], &host[b.clone()], rows, cols, inner)
        };
        let launch_words = format!(
            "{rows} × {cols} output, inner {inner}, grid {:?} × block {:?}",
            shape.grid, shape.block
        );
        let mut cases = Vec::new();
        for form in KernelForm::ALL {
            let entries: Vec<Entry<_>> = (self.entries(|k| &k.matmul_spellings, form).into_iter())
                .filter(|e| !e.spelling.int_indices || s.int_indices())
                .collect();
            // Checked first, at the first place.
            let [a0, b0] = layout[0].clone();
            let checks = {
                let slab = &slab;
                self.checked(
                    &entries,
                    (&mut c, &mut host_c, rows * cols),
                    |stream, e, out| {
                        let args = (
                            slab.slice(a0.clone()),
                            slab.slice(b0.clone()),
                            out.all_mut(),
                            s.rows,
                            s.cols,
                            s.inner,
                        );
                        stream.launch(&e.function, shape, args)
                    },
                    |e, out| {
                        crate::verify::compare_each(
                            &format!(
                                "matmul {} {} ({})",
                                s.case(),
                                e.spelling.entry,
                                e.language.label()
                            ),
                            out,
                            |i| reference[i],
                        )
                    },
                )?
            };
            let cards = self.cards(&entries, shape)?;
            for cache in self.caches(s.input_bytes()) {
                let launches = self.launches(s.origin);
                let visits = match cache {
                    Cache::Warm => placement_visits(places, launches),
                    Cache::Cold => vec![(0, launches)],
                };
                let mut by_place = vec![vec![Vec::new(); places]; entries.len()];
                for &(place, launches) in &visits {
                    let [a, b] = layout[place].clone();
                    let slab = &slab;
                    let c = &mut c;
                    let times = self.round_robin(
                        entries.len(),
                        launches,
                        cache == Cache::Cold,
                        |stream, e| {
                            let args = (
                                slab.slice(a.clone()),
                                slab.slice(b.clone()),
                                c.all_mut(),
                                s.rows,
                                s.cols,
                                s.inner,
                            );
                            stream.launch(&entries[e].function, shape, args)
                        },
                    )?;
                    for (e, t) in times.into_iter().enumerate() {
                        by_place[e][place].extend(t);
                    }
                }
                let times: Vec<Vec<f64>> =
                    (by_place.iter()).map(|places| places.concat()).collect();
                let mut case = self.case(
                    "matmul",
                    s.case(),
                    Some(form),
                    launch_words.clone(),
                    &entries,
                    times,
                    &checks,
                    &cards,
                    Some(cache),
                    Some(s.input_bytes()),
                    s.origin,
                );
                if cache == Cache::Warm && places > 1 {
                    case.placements = (0..places)
                        .map(|place| Placement {
                            offsets_bytes: (layout[place].iter())
                                .map(|r| r.start * size_of::<f32>())
                                .collect(),
                            visits: visits.iter().filter(|v| v.0 == place).count(),
                            rust: None,
                            cuda: None,
                        })
                        .collect();
                    for (spelling, places) in case.spellings.iter_mut().zip(by_place) {
                        spelling.by_place = places.into_iter().map(series).collect();
                    }
                }
                cases.push(case);
            }
        }
        Ok(cases)
    }

    fn add_kernel(
        &mut self,
        ctx: &Context,
        s: &AddShape,
        buffers: &mut Buffers<i32>,
    ) -> Result<Vec<KernelCase>, RuntimeError> {
        let h = streamlab_results::experiments::memcpy_kernel::Params::default();
        let n = s.elements;
        let blocks = ctx.gpu.info().sm_count.max(1) as u32 * h.blocks_per_sm;
        let shape = Shape::linear(blocks, h.threads);
        let cycles = s.cycles;
        let Buffers {
            host_in,
            dev_in,
            dev_out,
            host_out,
        } = buffers;
        let input = &host_in.as_slice()?[..n];
        let dev_in = &*dev_in;
        let mut cases = Vec::new();
        for form in KernelForm::ALL {
            let entries = self.entries(|k| &k.add_kernel_spellings, form);
            let checks = self.checked(
                &entries,
                (dev_out, host_out, n),
                |stream, e, out| {
                    stream.launch(
                        &e.function,
                        shape,
                        (out.slice_mut(0..n), dev_in.slice(0..n), h.add_value, cycles),
                    )
                },
                |e, out| {
                    crate::verify::compare(
                        &format!(
                            "add_kernel {} {} ({})",
                            s.case(self.params),
                            e.spelling.entry,
                            e.language.label()
                        ),
                        out,
                        |i| {
                            f64::from(kernels_rs::element::add_repeatedly_closed_form(
                                input[i],
                                h.add_value,
                                cycles,
                            ))
                        },
                        0.0,
                    )
                },
            )?;
            let cards = self.cards(&entries, shape)?;
            let bytes = 4 * n as u64;
            for cache in self.caches(bytes) {
                let launches = self.launches(s.origin);
                let dev_out = &mut *dev_out;
                let times = self.round_robin(
                    entries.len(),
                    launches,
                    cache == Cache::Cold,
                    |stream, e| {
                        stream.launch(
                            &entries[e].function,
                            shape,
                            (
                                dev_out.slice_mut(0..n),
                                dev_in.slice(0..n),
                                h.add_value,
                                cycles,
                            ),
                        )
                    },
                )?;
                cases.push(self.case(
                    "add_kernel",
                    s.case(self.params),
                    Some(form),
                    format!(
                        "{n} ints, {blocks} blocks × {} threads, add {}",
                        h.threads, h.add_value
                    ),
                    &entries,
                    times,
                    &checks,
                    &cards,
                    Some(cache),
                    Some(bytes),
                    s.origin,
                ));
            }
        }
        Ok(cases)
    }

    fn sincos(
        &mut self,
        s: &SincosShape,
        buffers: &mut Buffers<f32>,
    ) -> Result<Vec<KernelCase>, RuntimeError> {
        let n = s.elements;
        let threads = crate::sincos::THREADS;
        let shape = Shape::cover(n, threads);
        let Buffers {
            host_in,
            dev_in,
            dev_out,
            host_out,
        } = buffers;
        let a = &host_in.as_slice()?[..n];
        let dev_a = &*dev_in;
        let mut cases = Vec::new();
        for form in KernelForm::ALL {
            let entries: Vec<Entry<_>> = (LANGUAGES.iter().zip(self.sets))
                .map(|(&language, set)| Entry {
                    language,
                    spelling: Spelling {
                        entry: set.sincos_in(form).name(),
                        form,
                        how: match language {
                            KernelSet::Rust => "the libm crate's math",
                            KernelSet::Cuda => "CUDA's libdevice math",
                        },
                        int_indices: false,
                    },
                    function: set.sincos_in(form),
                })
                .collect();
            let checks = self.checked(
                &entries,
                (dev_out, host_out, n),
                |stream, e, out| {
                    stream.launch(
                        &e.function,
                        shape,
                        (dev_a.slice(0..n), out.slice_mut(0..n), 0u32),
                    )
                },
                |e, out| {
                    crate::verify::compare(
                        &format!("sincos over {n} ({})", e.language.label()),
                        out,
                        |i| crate::sincos::reference(a[i], i),
                        SINCOS_TOLERANCE,
                    )
                },
            )?;
            let cards = self.cards(&entries, shape)?;
            let bytes = 4 * n as u64;
            for cache in self.caches(bytes) {
                let launches = self.launches(s.origin);
                let dev_b = &mut *dev_out;
                let times = self.round_robin(
                    entries.len(),
                    launches,
                    cache == Cache::Cold,
                    |stream, e| {
                        stream.launch(
                            &entries[e].function,
                            shape,
                            (dev_a.slice(0..n), dev_b.slice_mut(0..n), 0u32),
                        )
                    },
                )?;
                cases.push(self.case(
                    "sincos",
                    s.case(self.params),
                    Some(form),
                    format!("{n} floats, {} blocks × {threads} threads", shape.grid.0),
                    &entries,
                    times,
                    &checks,
                    &cards,
                    Some(cache),
                    Some(bytes),
                    s.origin,
                ));
            }
        }
        Ok(cases)
    }

    /// Each math library function alone over the sincos experiment's indices: the `libm`
    /// crate's (Rust) against CUDA's (C++), timed alternately, each output checked
    /// against an f64 reference and its largest error in ulps kept.
    fn math(&mut self) -> Result<Vec<KernelCase>, RuntimeError> {
        let n = self.params.sincos_elements;
        let threads = crate::sincos::THREADS;
        self.gpu.ensure_fits((2 * n * 4) as u64)?;
        let mut sines: DeviceBuffer<f32> = self.gpu.alloc(n)?;
        let mut cosines: DeviceBuffer<f32> = self.gpu.alloc(n)?;
        let shape = Shape::cover(n, threads);
        let sin = |i: usize| (i as f32 as f64).sin();
        let cos = |i: usize| (i as f32 as f64).cos();
        let mut cases = Vec::new();
        for name in MATH {
            let sets = self.sets;
            let launch = |stream: &Stream,
                          language: usize,
                          sines: &mut DeviceBuffer<f32>,
                          cosines: &mut DeviceBuffer<f32>| {
                let set = sets[language];
                match name {
                    "sinf" => stream.launch(&set.math_sinf, shape, (sines.all_mut(), 0u32)),
                    "cosf" => stream.launch(&set.math_cosf, shape, (cosines.all_mut(), 0u32)),
                    _ => stream.launch(
                        &set.math_sincosf,
                        shape,
                        (sines.all_mut(), cosines.all_mut(), 0u32),
                    ),
                }
            };
            let mut checks = Vec::new();
            let mut ulps = [0.0f64; 2];
            for language in 0..2 {
                let mut host_s = self.gpu.pinned(n, f32::NAN)?;
                let mut host_c = self.gpu.pinned(n, f32::NAN)?;
                self.stream.poison(&mut sines)?;
                self.stream.poison(&mut cosines)?;
                launch(&self.stream, language, &mut sines, &mut cosines)?;
                self.stream.dtoh(&mut host_s, 0, &sines, 0..n)?;
                self.stream.dtoh(&mut host_c, 0, &cosines, 0..n)?;
                self.stream.synchronize()?;
                let outputs: [(&str, &PinnedBuffer<f32>, &Reference); 2] =
                    [("sine", &host_s, &sin), ("cosine", &host_c, &cos)];
                for (what, host, reference) in outputs {
                    let wanted = match name {
                        "sinf" => what == "sine",
                        "cosf" => what == "cosine",
                        _ => true,
                    };
                    if !wanted {
                        continue;
                    }
                    checks.push(crate::verify::compare(
                        &format!("{name} {what} ({})", LANGUAGES[language].label()),
                        host.as_slice()?,
                        reference,
                        SINCOS_TOLERANCE,
                    ));
                    ulps[language] =
                        ulps[language].max(crate::verify::max_ulps(host.as_slice()?, reference));
                }
            }
            let (sines, cosines) = (&mut sines, &mut cosines);
            let times = self.round_robin(2, self.params.launches, false, |stream, e| {
                launch(stream, e, sines, cosines)
            })?;
            let entry = format!("math_{name}");
            let cards = (LANGUAGES.into_iter().zip(sets))
                .map(|(language, set)| match name {
                    "sinf" => self.card_of(language, &set.math_sinf, threads),
                    "cosf" => self.card_of(language, &set.math_cosf, threads),
                    _ => self.card_of(language, &set.math_sincosf, threads),
                })
                .collect::<Result<Vec<_>, RuntimeError>>()?;
            let spellings = (0..2)
                .map(|language| SpellingRun {
                    language: LANGUAGES[language],
                    entry: entry.clone(),
                    how: ["the libm crate's", "CUDA's libdevice"][language].into(),
                    times: series(times[language].clone()),
                    by_place: Vec::new(),
                    card: cards[language],
                    verification: crate::verify::combine(checks.clone()),
                })
                .collect();
            cases.push(KernelCase {
                kernel: name.into(),
                case: String::new(),
                form: None,
                launch: format!("{n} floats, {} blocks × {threads} threads", shape.grid.0),
                rust: None,
                cuda: None,
                verification: crate::verify::combine(checks),
                cards: None,
                max_ulps: Some(ulps),
                placements: Vec::new(),
                spellings,
                cache: None,
                input_bytes: None,
                origin: Origin::Defaults,
            });
        }
        Ok(cases)
    }
}

/// The elements an allocation needs for two inputs of `lens` elements at `places`
/// placements `step` elements apart ([`placed_inputs`]).
fn placed_len(places: usize, lens: [usize; 2], step: usize) -> usize {
    lens[0].next_multiple_of(step) + 2 * (places - 1) * step + lens[1]
}

/// Where placement `place` of `places` puts two inputs of `lens` elements in one
/// allocation of [`placed_len`] elements, `step` elements apart per placement: the first
/// `place` steps in, the second `places − 1 − place` steps after the first step boundary
/// past the first's furthest end, so that both move at every placement, in opposite
/// directions, and both start on a step boundary.
fn placed_inputs(place: usize, places: usize, lens: [usize; 2], step: usize) -> [Range<usize>; 2] {
    let first = place * step;
    let second =
        (lens[0] + (places - 1) * step).next_multiple_of(step) + (places - 1 - place) * step;
    [first..first + lens[0], second..second + lens[1]]
}

/// The order the placements are visited in, and each visit's share of `launches`: every
/// placement on the way there and again on the way back (once where there is one), so
/// that a drift of the machine over the case does not pass for a difference between
/// places; the launches split as evenly as they go, earlier visits taking the remainder.
fn placement_visits(places: usize, launches: usize) -> Vec<(usize, usize)> {
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

/// The wiki's fill grids: one block more than needed along each axis, for an `r` × `k`
/// matrix of `m`'s blocks.
fn fill_shape(m: &matmul_streams::Params, r: usize, k: usize) -> Shape {
    Shape {
        grid: (
            (k / m.block as usize + 1) as u32,
            (r / m.block as usize + 1) as u32,
        ),
        block: (m.block, m.block),
    }
}

/// An output's reference value by index.
type Reference = dyn Fn(usize) -> f64 + Sync;

/// The math library functions timed alone ("whose math").
const MATH: [&str; 3] = ["sinf", "cosf", "sincosf"];

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
