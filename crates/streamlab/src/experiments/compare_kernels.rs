//! compare-kernels: each Rust kernel against its CUDA C++ twin, in every form (plain,
//! safe, tuned), on the buffers and launch shapes the experiments use. Launches alternate Rust, CUDA C++,
//! Rust, … on one stream with an event between them, so both see the same clocks,
//! caches and neighbours. Each entry's card (the driver's figures at the launch shape and
//! the PTX's counts, `streamlab_results::card`) is read beside its times. Afterwards each kernel runs once more per language into a
//! poisoned output, and both outputs are checked element by element against the CPU
//! reference (the `kernels_rs::element` math, or its f64 form for sincos).
//!
//! The cases: `fill` over the wiki's A matrix (plain and tuned are one raw-pointer store;
//! the safe form stores through a slice); `matmul` at two shapes, the wiki's (32 × 16
//! output, 16×16 blocks: latency-bound) and a square one (`--square`, enough threads to
//! fill the GPU), each at `--placements` places of its inputs in one allocation (a
//! kernel's time depends on which pages of GPU memory its inputs are on); `add_kernel` over the Handbook's array
//! (SMs × 16 blocks of 256 threads) at each `--add-cycles`; `sincos` over the blog's
//! array (1024 threads per block); and the math library functions alone over the same
//! indices (`sinf`, `cosf`, `sincosf`: the `libm` crate's against CUDA's), with each
//! output's largest error in ulps.
use std::ops::Range;
use streamlab_results::card::{self, KernelCard};

use streamlab_results::experiments::compare_kernels::{
    CompareKernels, KernelCase, KernelComparison, PLACEMENT_STEP_BYTES, Params, Placement,
};
use streamlab_results::experiments::matmul_streams;
use streamlab_results::saved::{KernelForm, Params as _, Verification};

use super::{Context, Run, RunError};
use crate::measure::series;
use crate::runtime::baseline::CudaKernels;
use crate::runtime::kernels::RUST_PTX;
use crate::runtime::{
    DeviceBuffer, Event, Function, Gpu, Kernels, PinnedBuffer, RuntimeError, Shape, Stream,
};

/// sincos tolerance: CUDA's `sinf`/`cosf` and the `libm` crate's differ in the last bit,
/// which `sqrt(s² + c²) ≈ 1` carries into a few units of 2^-23 (1.2e-7).
const SINCOS_TOLERANCE: f64 = 1e-6;

impl Run for CompareKernels {
    const ABOUT: &'static str = "Time each Rust kernel against its CUDA C++ twin (NVRTC), plain, safe and tuned \
        forms, from interleaved launches on the experiments' buffers and shapes";

    const NEEDS_CUDA_TWINS: bool = true;

    fn run(ctx: &Context, p: &Params) -> Result<KernelComparison, RunError> {
        p.validate()?;
        let Some(cuda) = ctx.cuda else {
            return Err(RunError::Input(
                "compare-kernels needs the CUDA C++ twins, but NVRTC is not available: install the CUDA toolkit's NVRTC or add its lib64 folder to LD_LIBRARY_PATH".into(),
            ));
        };
        let pair = Pair {
            gpu: ctx.gpu,
            rust: ctx.gpu.kernels(),
            cuda: &cuda.kernels,
            ptx: [RUST_PTX, &cuda.ptx],
            params: p,
            stream: ctx.gpu.streams(1)?.remove(0),
        };
        let forms = KernelForm::ALL.len();
        let total = 2 + 2 * forms + forms * p.add_cycles.len() + forms + MATH.len();
        let mut task = crate::progress::Task::start("rust vs cuda", total as u64);
        let mut cases = Vec::with_capacity(total);
        for case in pair.fill_and_matmul()? {
            task.step(&case.kernel);
            cases.push(case);
        }
        for case in pair.add_kernel(ctx)? {
            task.step(&format!("add_kernel {}", case.case));
            cases.push(case);
        }
        for case in pair.sincos()? {
            task.step("sincos");
            cases.push(case);
        }
        for case in pair.math()? {
            task.step(&case.kernel);
            cases.push(case);
        }
        task.finish();
        Ok(comparison(ctx, cuda, p, cases))
    }
}

fn comparison(
    ctx: &Context,
    cuda: &CudaKernels,
    p: &Params,
    cases: Vec<KernelCase>,
) -> KernelComparison {
    KernelComparison {
        params: p.clone(),
        device: ctx.gpu.info().clone(),
        provenance: ctx.provenance(true),
        cuda_build: cuda.build.clone(),
        verification: crate::verify::combine(
            cases.iter().map(|k| k.verification.clone()).collect(),
        ),
        cases,
    }
}

/// Both kernel sets on one GPU and one stream.
struct Pair<'a> {
    gpu: &'a Gpu,
    rust: &'a Kernels,
    cuda: &'a Kernels,
    /// The Rust and the CUDA C++ PTX, for the cards.
    ptx: [&'a str; 2],
    params: &'a Params,
    stream: Stream<'a>,
}

impl Pair<'_> {
    /// The Rust and the CUDA C++ card of the entry `pick` chooses, at `shape`.
    fn cards<P>(
        &self,
        pick: impl Fn(&Kernels) -> Function<P>,
        shape: Shape,
    ) -> Result<Option<[KernelCard; 2]>, RuntimeError> {
        let threads = shape.block.0 * shape.block.1;
        let card = |set: &Kernels, ptx: &str| -> Result<Option<KernelCard>, RuntimeError> {
            let f = pick(set);
            let driver = f.driver_card(threads)?;
            Ok(card::ptx_counts(ptx, f.name()).map(|ptx| KernelCard { driver, ptx }))
        };
        let rust = card(self.rust, self.ptx[0])?;
        let cuda = card(self.cuda, self.ptx[1])?;
        Ok(rust.zip(cuda).map(|(r, c)| [r, c]))
    }

    /// `launch` with each set alternately, `--launches` times each (after warm-up), an
    /// event between launches; returns the Rust and the CUDA C++ milliseconds.
    fn interleave(
        &self,
        launch: impl FnMut(&Kernels) -> Result<(), RuntimeError>,
    ) -> Result<(Vec<f64>, Vec<f64>), RuntimeError> {
        self.interleave_n(self.params.launches, launch)
    }

    /// [`Pair::interleave`] with `launches` launches of each set.
    fn interleave_n(
        &self,
        launches: usize,
        mut launch: impl FnMut(&Kernels) -> Result<(), RuntimeError>,
    ) -> Result<(Vec<f64>, Vec<f64>), RuntimeError> {
        for _ in 0..self.params.warmup {
            launch(self.rust)?;
            launch(self.cuda)?;
        }
        let marks = (0..=2 * launches)
            .map(|_| self.gpu.event())
            .collect::<Result<Vec<Event>, _>>()?;
        self.stream.record(&marks[0])?;
        for pair in marks[1..].chunks(2) {
            launch(self.rust)?;
            self.stream.record(&pair[0])?;
            launch(self.cuda)?;
            self.stream.record(&pair[1])?;
        }
        let times = marks
            .windows(2)
            .map(|w| w[0].elapsed_ms(&w[1]))
            .collect::<Result<Vec<f64>, _>>()?;
        Ok((
            times.iter().step_by(2).copied().collect(),
            times.iter().skip(1).step_by(2).copied().collect(),
        ))
    }

    /// Run `launch` once per set into `out` (poisoned first) and copy each result back.
    fn outputs<T: Copy + Send + Sync>(
        &self,
        out: &mut DeviceBuffer<T>,
        mut launch: impl FnMut(&Kernels, &mut DeviceBuffer<T>) -> Result<(), RuntimeError>,
        poison: T,
    ) -> Result<[PinnedBuffer<T>; 2], RuntimeError> {
        let mut host = [
            self.gpu.pinned(out.len(), poison)?,
            self.gpu.pinned(out.len(), poison)?,
        ];
        for (set, host) in [self.rust, self.cuda].into_iter().zip(&mut host) {
            self.stream.poison(out)?;
            launch(set, out)?;
            self.stream.dtoh(host, 0, out, 0..out.len())?;
        }
        self.stream.synchronize()?;
        Ok(host)
    }

    /// `fill`'s cases on matmul-streams' A matrix, and `matmul`'s at the wiki's shape
    /// (matmul-streams' matrices) and at the square shape.
    fn fill_and_matmul(&self) -> Result<Vec<KernelCase>, RuntimeError> {
        let m = matmul_streams::Params {
            aligned: self.params.aligned,
            ..matmul_streams::Params::default()
        };
        let mut cases = self.fill_cases(&m)?;
        cases.extend(self.matmul_cases(&m)?);
        let square = matmul_streams::Params {
            rows: self.params.square,
            cols: self.params.square,
            aligned: self.params.square_inner,
            ..m
        };
        cases.extend(self.matmul_cases(&square)?);
        Ok(cases)
    }

    /// `fill` and `fill_safe` over `m`'s A matrix, one case each.
    fn fill_cases(&self, m: &matmul_streams::Params) -> Result<Vec<KernelCase>, RuntimeError> {
        let (rows, aligned) = (m.rows as usize, m.aligned as usize);
        self.gpu.ensure_fits((rows * aligned * 4) as u64)?;
        let mut a: DeviceBuffer<f32> = self.gpu.alloc(rows * aligned)?;
        let s = &self.stream;
        let shape = fill_shape(m, rows, aligned);
        // `fill` (a raw pointer: its plain and tuned forms are one) and `fill_safe`.
        let fill = |set: &Kernels, safe: bool, out: &mut DeviceBuffer<f32>| {
            let args = (out.all_mut(), m.rows, m.aligned, 1.0f32);
            if safe {
                s.launch(&set.fill_safe, shape, args)
            } else {
                s.launch(&set.fill, shape, args)
            }
        };
        let mut cases = Vec::new();
        for safe in [false, true] {
            let (rust, cuda) = self.interleave(|set| fill(set, safe, &mut a))?;
            let [rust_a, cuda_a] =
                self.outputs(&mut a, |set, out| fill(set, safe, out), f32::NAN)?;
            let cards = if safe {
                self.cards(|set| set.fill_safe, shape)?
            } else {
                self.cards(|set| set.fill, shape)?
            };
            cases.push(case(
                "fill",
                String::new(),
                safe.then_some(KernelForm::Safe),
                format!(
                    "{rows} × {aligned} matrix, grid {:?} × block {:?}",
                    shape.grid, shape.block
                ),
                (rust, cuda),
                agree("fill", &rust_a, &cuda_a, |_| 1.0, 0.0)?,
                cards,
            ));
        }
        Ok(cases)
    }

    /// Every form of `matmul` at `m`'s shape, `c = a · b` with both inputs all ones (each
    /// cell of `c` is then exactly the inner dimension), timed at each placement of the
    /// inputs in one allocation ([`placed_inputs`]); the case is named `rows×cols×inner`.
    fn matmul_cases(&self, m: &matmul_streams::Params) -> Result<Vec<KernelCase>, RuntimeError> {
        let (rows, cols, aligned) = (m.rows as usize, m.cols as usize, m.aligned as usize);
        let places = self.params.placements;
        let (a_len, b_len) = (rows * aligned, aligned * cols);
        let step = PLACEMENT_STEP_BYTES / size_of::<f32>();
        let slab_len = placed_len(places, [a_len, b_len], step);
        self.gpu
            .ensure_fits(((slab_len + rows * cols) * size_of::<f32>()) as u64)?;
        let mut slab: DeviceBuffer<f32> = self.gpu.alloc(slab_len)?;
        let mut c: DeviceBuffer<f32> = self.gpu.alloc(rows * cols)?;
        let s = &self.stream;
        // The allocation filled as a matrix FILL_WIDTH wide (its last row partly).
        let fill_rows = slab_len.div_ceil(FILL_WIDTH as usize);
        s.launch(
            &self.rust.fill_safe,
            fill_shape(m, fill_rows, FILL_WIDTH as usize),
            (slab.all_mut(), fill_rows as u32, FILL_WIDTH, 1.0f32),
        )?;
        s.synchronize()?;
        let shape = Shape {
            grid: (
                cols.div_ceil(m.block as usize) as u32,
                rows.div_ceil(m.block as usize) as u32,
            ),
            block: (m.block, m.block),
        };
        let visits = placement_visits(places, self.params.launches);
        let layout: Vec<[Range<usize>; 2]> = (0..places)
            .map(|place| placed_inputs(place, places, [a_len, b_len], step))
            .collect();
        let mut cases = Vec::new();
        for form in KernelForm::ALL {
            let mut by_place = vec![(Vec::new(), Vec::new()); places];
            let mut checks = Vec::new();
            for &(place, launches) in &visits {
                let [a, b] = &layout[place];
                let (a, b) = (slab.slice(a.clone()), slab.slice(b.clone()));
                let launch = |set: &Kernels, out: &mut DeviceBuffer<f32>| {
                    let args = (a, b, out.all_mut(), m.rows, m.cols, m.aligned);
                    s.launch(&set.matmul_in(form), shape, args)
                };
                let (r, k) = self.interleave_n(launches, |set| launch(set, &mut c))?;
                let [rust_c, cuda_c] = self.outputs(&mut c, launch, f32::NAN)?;
                checks.push(agree("matmul", &rust_c, &cuda_c, |_| aligned as f64, 0.0)?);
                by_place[place].0.extend(r);
                by_place[place].1.extend(k);
            }
            let rust = by_place
                .iter()
                .flat_map(|(r, _)| r.iter().copied())
                .collect();
            let cuda = by_place
                .iter()
                .flat_map(|(_, k)| k.iter().copied())
                .collect();
            let placements = (by_place.into_iter().enumerate())
                .map(|(place, (r, k))| Placement {
                    offsets_bytes: (layout[place].iter())
                        .map(|r| r.start * size_of::<f32>())
                        .collect(),
                    visits: visits.iter().filter(|v| v.0 == place).count(),
                    rust: series(r),
                    cuda: series(k),
                })
                .collect();
            let mut case = case(
                "matmul",
                format!("{rows}×{cols}×{aligned}"),
                Some(form),
                format!(
                    "{rows} × {cols} output, inner {aligned}, grid {:?} × block {:?}",
                    shape.grid, shape.block
                ),
                (rust, cuda),
                crate::verify::combine(checks),
                self.cards(|set| set.matmul_in(form), shape)?,
            );
            if places > 1 {
                case.placements = placements;
            }
            cases.push(case);
        }
        Ok(cases)
    }

    fn add_kernel(&self, ctx: &Context) -> Result<Vec<KernelCase>, RuntimeError> {
        let h = streamlab_results::experiments::memcpy_kernel::Params {
            size: self.params.add_size,
            ..Default::default()
        };
        let n = h.elements();
        self.gpu.ensure_fits(2 * h.bytes())?;
        let mut rng = crate::rng::Rng::new(crate::rng::Rng::seed_from_clock());
        let mut host_in = self.gpu.pinned(n, 0i32)?;
        rng.fill_any_i32(host_in.as_mut_slice()?);
        let mut dev_in: DeviceBuffer<i32> = self.gpu.alloc(n)?;
        let mut dev_out: DeviceBuffer<i32> = self.gpu.alloc(n)?;
        let s = &self.stream;
        s.htod(&mut dev_in, 0, &host_in, 0..n)?;
        s.synchronize()?;
        let blocks = ctx.gpu.info().sm_count.max(1) as u32 * h.blocks_per_sm;
        let shape = Shape::linear(blocks, h.threads);
        let input = host_in.as_slice()?;
        let mut cases = Vec::new();
        for &cycles in &self.params.add_cycles {
            for form in KernelForm::ALL {
                let (rust, cuda) = self.interleave(|set| {
                    s.launch(
                        &set.add_kernel_in(form),
                        shape,
                        (dev_out.all_mut(), dev_in.all(), h.add_value, cycles),
                    )
                })?;
                let [rust_out, cuda_out] = self.outputs(
                    &mut dev_out,
                    |set, out| {
                        s.launch(
                            &set.add_kernel_in(form),
                            shape,
                            (out.all_mut(), dev_in.all(), h.add_value, cycles),
                        )
                    },
                    -1,
                )?;
                let expected = |i: usize| {
                    f64::from(kernels_rs::element::add_repeatedly_closed_form(
                        input[i],
                        h.add_value,
                        cycles,
                    ))
                };
                cases.push(case(
                    "add_kernel",
                    format!("cycles {cycles}"),
                    Some(form),
                    format!(
                        "{n} ints, {blocks} blocks × {} threads, add {}",
                        h.threads, h.add_value
                    ),
                    (rust, cuda),
                    agree("add_kernel", &rust_out, &cuda_out, expected, 0.0)?,
                    self.cards(|set| set.add_kernel_in(form), shape)?,
                ));
            }
        }
        Ok(cases)
    }

    fn sincos(&self) -> Result<Vec<KernelCase>, RuntimeError> {
        let n = self.params.sincos_elements;
        let threads = crate::sincos::THREADS;
        self.gpu.ensure_fits((2 * n * 4) as u64)?;
        let mut rng = crate::rng::Rng::new(crate::rng::Rng::seed_from_clock());
        let mut host_a = self.gpu.pinned(n, 0.0f32)?;
        rng.fill_unit(host_a.as_mut_slice()?);
        let mut dev_a: DeviceBuffer<f32> = self.gpu.alloc(n)?;
        let mut dev_b: DeviceBuffer<f32> = self.gpu.alloc(n)?;
        let s = &self.stream;
        s.htod(&mut dev_a, 0, &host_a, 0..n)?;
        s.synchronize()?;
        let shape = Shape::cover(n, threads);
        let a = host_a.as_slice()?;
        let mut cases = Vec::new();
        for form in KernelForm::ALL {
            let (rust, cuda) = self.interleave(|set| {
                s.launch(
                    &set.sincos_in(form),
                    shape,
                    (dev_a.all(), dev_b.all_mut(), 0u32),
                )
            })?;
            let [rust_b, cuda_b] = self.outputs(
                &mut dev_b,
                |set, out| {
                    s.launch(
                        &set.sincos_in(form),
                        shape,
                        (dev_a.all(), out.all_mut(), 0u32),
                    )
                },
                f32::NAN,
            )?;
            cases.push(case(
                "sincos",
                String::new(),
                Some(form),
                format!("{n} floats, {} blocks × {threads} threads", shape.grid.0),
                (rust, cuda),
                agree(
                    "sincos",
                    &rust_b,
                    &cuda_b,
                    |i| crate::sincos::reference(a[i], i),
                    SINCOS_TOLERANCE,
                )?,
                self.cards(|set| set.sincos_in(form), shape)?,
            ));
        }
        Ok(cases)
    }

    /// Each math library function alone over the sincos experiment's indices: the `libm`
    /// crate's (Rust) against CUDA's (C++), timed alternately, each output checked
    /// against an f64 reference and its largest error in ulps kept.
    fn math(&self) -> Result<Vec<KernelCase>, RuntimeError> {
        let n = self.params.sincos_elements;
        let threads = crate::sincos::THREADS;
        self.gpu.ensure_fits((2 * n * 4) as u64)?;
        let mut sines: DeviceBuffer<f32> = self.gpu.alloc(n)?;
        let mut cosines: DeviceBuffer<f32> = self.gpu.alloc(n)?;
        let shape = Shape::cover(n, threads);
        let s = &self.stream;
        let sin = |i: usize| (i as f32 as f64).sin();
        let cos = |i: usize| (i as f32 as f64).cos();
        let mut cases = Vec::new();
        for name in MATH {
            let launch =
                |set: &Kernels, sines: &mut DeviceBuffer<f32>, cosines: &mut DeviceBuffer<f32>| {
                    match name {
                        "sinf" => s.launch(&set.math_sinf, shape, (sines.all_mut(), 0u32)),
                        "cosf" => s.launch(&set.math_cosf, shape, (cosines.all_mut(), 0u32)),
                        _ => s.launch(
                            &set.math_sincosf,
                            shape,
                            (sines.all_mut(), cosines.all_mut(), 0u32),
                        ),
                    }
                };
            let times = self.interleave(|set| launch(set, &mut sines, &mut cosines))?;
            let outputs =
                |out: &mut DeviceBuffer<f32>, other: &mut DeviceBuffer<f32>, sine: bool| {
                    self.outputs(
                        out,
                        |set, out| {
                            if sine {
                                launch(set, out, other)
                            } else {
                                launch(set, other, out)
                            }
                        },
                        f32::NAN,
                    )
                };
            // (label, the output buffer's copies, its reference)
            let mut checked: Vec<(&str, [PinnedBuffer<f32>; 2], &Reference)> = Vec::new();
            if name != "cosf" {
                checked.push(("sine", outputs(&mut sines, &mut cosines, true)?, &sin));
            }
            if name != "sinf" {
                checked.push(("cosine", outputs(&mut cosines, &mut sines, false)?, &cos));
            }
            let mut checks = Vec::new();
            let mut ulps = [0.0f64; 2];
            for (what, [rust, cuda], reference) in &checked {
                checks.push(agree(
                    &format!("{name} {what}"),
                    rust,
                    cuda,
                    reference,
                    SINCOS_TOLERANCE,
                )?);
                for (u, out) in ulps.iter_mut().zip([rust, cuda]) {
                    *u = u.max(crate::verify::max_ulps(out.as_slice()?, reference));
                }
            }
            let cards = match name {
                "sinf" => self.cards(|set| set.math_sinf, shape)?,
                "cosf" => self.cards(|set| set.math_cosf, shape)?,
                _ => self.cards(|set| set.math_sincosf, shape)?,
            };
            let mut c = case(
                name,
                String::new(),
                None,
                format!("{n} floats, {} blocks × {threads} threads", shape.grid.0),
                times,
                crate::verify::combine(checks),
                cards,
            );
            c.max_ulps = Some(ulps);
            cases.push(c);
        }
        Ok(cases)
    }
}

/// The width of the matrix matmul's inputs are filled as (with matmul-streams' 16 × 16
/// blocks: 4097 blocks along x, and one more along y for each 2^20 floats).
const FILL_WIDTH: u32 = 1 << 16;

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

fn case(
    kernel: &str,
    case: String,
    form: Option<KernelForm>,
    launch: String,
    (rust, cuda): (Vec<f64>, Vec<f64>),
    verification: Verification,
    cards: Option<[KernelCard; 2]>,
) -> KernelCase {
    KernelCase {
        kernel: kernel.to_owned(),
        case,
        form,
        launch,
        rust: series(rust),
        cuda: series(cuda),
        verification,
        cards,
        max_ulps: None,
        placements: Vec::new(),
    }
}

/// Both outputs against the reference.
fn agree<T: Copy + Into<f64> + Sync>(
    what: &str,
    rust: &PinnedBuffer<T>,
    cuda: &PinnedBuffer<T>,
    expected: impl Fn(usize) -> f64 + Sync,
    tolerance: f64,
) -> Result<Verification, RuntimeError> {
    Ok(crate::verify::combine(vec![
        crate::verify::compare(
            &format!("{what} (Rust)"),
            rust.as_slice()?,
            &expected,
            tolerance,
        ),
        crate::verify::compare(
            &format!("{what} (CUDA C++)"),
            cuda.as_slice()?,
            &expected,
            tolerance,
        ),
    ]))
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
    }
}
