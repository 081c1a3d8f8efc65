//! The cases compare-kernels times, one method of the bench per kernel: each form's
//! spellings on each side checked, then timed round-robin at every shape (matmul at each
//! placement of its inputs, warm and cold).
use super::placement::{PLACEMENT_STEP_BYTES, placed_inputs, placed_len, placement_visits};
use super::shapes::{AddShape, FillShape, MatmulShape, SincosShape};
use super::{Bench, Buffers, Entry, LANGUAGES, input_seed};
use crate::experiments::Context;
use crate::measure::series;
use crate::rng::Rng;
use crate::runtime::spellings::Spelling;
use crate::runtime::{DeviceBuffer, Element, PinnedBuffer, RuntimeError, Shape, Stream};
use crate::sincos::{Expected, Trig, trig_at};
use crate::verify::Bits;
use std::ops::Range;
use streamlab_results::experiments::compare_kernels::{
    Cache, KernelCase, Origin, Placement, SpellingRun,
};
use streamlab_results::experiments::matmul_streams;
use streamlab_results::saved::{KernelForm, KernelSet, Verification};

impl Bench<'_> {
    /// `fill` (one raw-pointer store: its plain and tuned forms are one) and `fill_safe`
    /// over a `rows × cols` matrix.
    pub(super) fn fill(&mut self, s: &FillShape) -> Result<Vec<KernelCase>, RuntimeError> {
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
            // Every check reads all of the output back into it.
            let mut host = self.gpu.pinned(rows * cols, f32::NAN)?;
            for (language, set) in LANGUAGES.into_iter().zip(sets) {
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
            let per_sample = self.launches_per_sample(2, |stream, e| launch(stream, e, &mut a))?;
            let times = self.batched_round_robin(2, launches, per_sample, false, |stream, e| {
                launch(stream, e, &mut a)
            })?;
            // The last timed launch's output: every cell the value, as the checked ones.
            let what = format!("{name} {rows}×{cols}");
            let timed = self.timed_check(&what, (&a, &mut host), &vec![value; rows * cols])?;
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
                    "{rows} × {cols} matrix, grid {:?} × block {:?}{}",
                    shape.grid,
                    shape.block,
                    if per_sample > 1 {
                        format!(", {per_sample} launches back to back a sample")
                    } else {
                        String::new()
                    }
                ),
                rust: None,
                cuda: None,
                verification: crate::verify::combine(
                    (runs.into_iter().map(|r| r.0)).chain([timed]).collect(),
                ),
                cards: None,
                max_ulps: None,
                placements: Vec::new(),
                spellings,
                cache: None,
                input_bytes: None,
                origin: s.origin,
                launches_per_sample: per_sample,
            });
        }
        Ok(cases)
    }

    /// Every form of `matmul` at `s`, `c = a · b` on inputs whose elements all differ,
    /// placed at each of `--placements` places in one allocation (warm) and at the first
    /// (cold, where they fit in L2).
    pub(super) fn matmul(&mut self, s: &MatmulShape) -> Result<Vec<KernelCase>, RuntimeError> {
        let (rows, cols) = (s.rows as usize, s.cols as usize);
        // The write-ups' shapes at every placement; the sweep's (few launches) at one.
        let places = match s.origin {
            Origin::Defaults => self.params.placements,
            _ => 1,
        };
        let inputs = self.matmul_inputs(s, places)?;
        let mut c: DeviceBuffer<f32> = self.gpu.alloc(rows * cols)?;
        let mut host_c = self.gpu.pinned(rows * cols, f32::NAN)?;
        let m = matmul_streams::Params::default();
        let shape = Shape {
            grid: (
                cols.div_ceil(m.block as usize) as u32,
                rows.div_ceil(m.block as usize) as u32,
            ),
            block: (m.block, m.block),
        };
        let words = format!(
            "{rows} × {cols} output, inner {}, grid {:?} × block {:?}",
            s.inner, shape.grid, shape.block
        );
        // One launch, checked and timed: `c = a · b` with the inputs at `place`.
        let (slab, layout) = (&inputs.slab, &inputs.layout);
        let launch = |stream: &Stream, e: &Entry<_>, c: &mut DeviceBuffer<f32>, place: usize| {
            let [a, b] = layout[place].clone();
            let args = (
                slab.slice(a),
                slab.slice(b),
                c.all_mut(),
                s.rows,
                s.cols,
                s.inner,
            );
            stream.launch(&e.function, shape, args)
        };
        let mut cases = Vec::new();
        for form in KernelForm::ALL {
            let entries: Vec<Entry<_>> = (self.entries(|k| &k.matmul_spellings, form).into_iter())
                .filter(|e| !e.spelling.int_indices || s.int_indices())
                .collect();
            // Checked first, at the first place.
            let checked = self.checked(
                &entries,
                (&mut c, &mut host_c, rows * cols),
                |stream, e, out| launch(stream, e, out, 0),
                |e, out| {
                    let (entry, language) = (e.spelling.entry, e.language.label());
                    let what = format!("matmul {} {entry} ({language})", s.case());
                    crate::verify::compare_each(&what, out, |i| inputs.reference[i])
                },
            )?;
            let cards = self.cards(&entries, shape)?;
            for cache in self.caches(s.input_bytes()) {
                let launches = self.launches(s.origin);
                let visits = match cache {
                    Cache::Warm => placement_visits(places, launches),
                    Cache::Cold => vec![(0, launches)],
                };
                let mut by_place = vec![vec![Vec::new(); places]; entries.len()];
                for &(place, launches) in &visits {
                    let c = &mut c;
                    let times = self.round_robin(
                        entries.len(),
                        launches,
                        cache == Cache::Cold,
                        |stream, e| launch(stream, &entries[e], c, place),
                    )?;
                    for (e, t) in times.into_iter().enumerate() {
                        by_place[e][place].extend(t);
                    }
                }
                let times = (by_place.iter()).map(|places| places.concat()).collect();
                let mut case = self.case(
                    "matmul",
                    s.case(),
                    Some(form),
                    words.clone(),
                    &entries,
                    times,
                    &checked.0,
                    &cards,
                    Some(cache),
                    Some(s.input_bytes()),
                    s.origin,
                );
                // The last visit's inputs are the checked ones where it is the first place.
                if visits.last().is_some_and(|v| v.0 == 0) {
                    let what = format!("matmul {} ({})", s.case(), cache.label());
                    let timed = self.timed_check(&what, (&c, &mut host_c), &checked.1)?;
                    case.verification = crate::verify::combine(vec![case.verification, timed]);
                }
                if cache == Cache::Warm && places > 1 {
                    inputs.place(&mut case, &visits, by_place);
                }
                cases.push(case);
            }
        }
        Ok(cases)
    }

    /// matmul's inputs at `s`, at each of `places` places of one allocation on the GPU,
    /// drawn from the run's seed, with the reference of `c` for the first place's.
    fn matmul_inputs(&self, s: &MatmulShape, places: usize) -> Result<MatmulInputs, RuntimeError> {
        let (rows, cols, inner) = (s.rows as usize, s.cols as usize, s.inner as usize);
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
        self.stream.htod(&mut slab, 0, &host_slab, 0..slab_len)?;
        self.stream.synchronize()?;
        let layout: Vec<[Range<usize>; 2]> = (0..places)
            .map(|place| placed_inputs(place, places, [a_len, b_len], step))
            .collect();
        let host = host_slab.as_slice()?;
        let [a, b] = &layout[0];
        let reference =
            crate::verify::matmul_reference(&host[a.clone()], &host[b.clone()], rows, cols, inner);
        Ok(MatmulInputs {
            slab,
            layout,
            reference,
        })
    }

    pub(super) fn add_kernel(
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
        // One launch, checked and timed.
        let mut launch = |stream: &Stream, e: &Entry<_>, out: &mut DeviceBuffer<i32>| {
            let args = (out.slice_mut(0..n), dev_in.slice(0..n), h.add_value, cycles);
            stream.launch(&e.function, shape, args)
        };
        let mut cases = Vec::new();
        for form in KernelForm::ALL {
            let entries = self.entries(|k| &k.add_kernel_spellings, form);
            let (checks, checked_last) =
                self.checked(&entries, (dev_out, host_out, n), &mut launch, |e, out| {
                    let what = format!(
                        "add_kernel {} {} ({})",
                        s.case(self.params),
                        e.spelling.entry,
                        e.language.label()
                    );
                    crate::add_kernel::check(input, out, (h.add_value, cycles), &what)
                })?;
            let words = format!(
                "{n} ints, {blocks} blocks × {} threads, add {}",
                h.threads, h.add_value
            );
            cases.extend(self.elementwise_cases(
                ("add_kernel", s.case(self.params), form, words),
                &entries,
                (&checks, &checked_last),
                (dev_out, host_out),
                (shape, s.origin),
                &mut launch,
            )?);
        }
        Ok(cases)
    }

    pub(super) fn sincos(
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
        // One launch, checked and timed.
        let mut launch = |stream: &Stream, e: &Entry<_>, out: &mut DeviceBuffer<f32>| {
            let args = (dev_a.slice(0..n), out.slice_mut(0..n), 0u32);
            stream.launch(&e.function, shape, args)
        };
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
            // Each language's reference from its own math library's sines and cosines.
            let expected = (self.sets.iter())
                .map(|set| Ok(Expected::new(a, &Trig::measure(self.gpu, set, form, n)?)))
                .collect::<Result<Vec<_>, RuntimeError>>()?;
            let (checks, checked_last) =
                self.checked(&entries, (dev_out, host_out, n), &mut launch, |e, out| {
                    let language = LANGUAGES.iter().position(|&l| l == e.language);
                    expected[language.unwrap_or(0)]
                        .check(&format!("sincos over {n} ({})", e.language.label()), out)
                })?;
            let words = format!("{n} floats, {} blocks × {threads} threads", shape.grid.0);
            cases.extend(self.elementwise_cases(
                ("sincos", s.case(self.params), form, words),
                &entries,
                (&checks, &checked_last),
                (dev_out, host_out),
                (shape, s.origin),
                &mut launch,
            )?);
        }
        Ok(cases)
    }

    /// An element-wise kernel's cases at one shape and form, one per cache state (warm,
    /// and cold where its 4-byte elements fit in L2): `entries` timed round-robin, each
    /// `launch` writing `out`, beside their `checks`; each case's last timed launch's
    /// output read back through `host` and held to `checked_last`, the last entry's
    /// checked output.
    #[allow(clippy::type_complexity)]
    fn elementwise_cases<T: Element + Bits, P>(
        &mut self,
        (kernel, case, form, words): (&str, String, KernelForm, String),
        entries: &[Entry<P>],
        (checks, checked_last): (&[Verification], &[T]),
        (out, host): (&mut DeviceBuffer<T>, &mut PinnedBuffer<T>),
        (shape, origin): (Shape, Origin),
        launch: &mut impl FnMut(&Stream, &Entry<P>, &mut DeviceBuffer<T>) -> Result<(), RuntimeError>,
    ) -> Result<Vec<KernelCase>, RuntimeError> {
        let cards = self.cards(entries, shape)?;
        let bytes = size_of_val(checked_last) as u64;
        let mut cases = Vec::new();
        for cache in self.caches(bytes) {
            let launches = self.launches(origin);
            let cold = cache == Cache::Cold;
            let times = self.round_robin(entries.len(), launches, cold, |stream, e| {
                launch(stream, &entries[e], out)
            })?;
            let mut timed_case = self.case(
                kernel,
                case.clone(),
                Some(form),
                words.clone(),
                entries,
                times,
                checks,
                &cards,
                Some(cache),
                Some(bytes),
                origin,
            );
            let what = format!("{kernel} {case} ({})", cache.label());
            let timed = self.timed_check(&what, (out, host), checked_last)?;
            timed_case.verification = crate::verify::combine(vec![timed_case.verification, timed]);
            cases.push(timed_case);
        }
        Ok(cases)
    }

    /// Each math library function alone over the sincos experiment's indices: the `libm`
    /// crate's (Rust) against CUDA's (C++), timed alternately, each output checked
    /// against an f64 reference and its largest error in ulps kept.
    pub(super) fn math(&mut self) -> Result<Vec<KernelCase>, RuntimeError> {
        let n = self.params.sincos_elements;
        let threads = crate::sincos::THREADS;
        self.gpu.ensure_fits((2 * n * 4) as u64)?;
        let mut sines: DeviceBuffer<f32> = self.gpu.alloc(n)?;
        let mut cosines: DeviceBuffer<f32> = self.gpu.alloc(n)?;
        let shape = Shape::cover(n, threads);
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
                let sin: fn(f64) -> f64 = f64::sin;
                let outputs = [("sine", &host_s, sin), ("cosine", &host_c, f64::cos)];
                for (what, host, reference) in outputs {
                    if math_writes(name, what) {
                        let (check, worst) = math_check(
                            name,
                            what,
                            LANGUAGES[language],
                            host.as_slice()?,
                            reference,
                        );
                        checks.push(check);
                        ulps[language] = ulps[language].max(worst);
                    }
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
                launches_per_sample: 1,
            });
        }
        Ok(cases)
    }
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

/// Whether math function `name` writes its `what` ("sine" or "cosine").
fn math_writes(name: &str, what: &str) -> bool {
    match name {
        "sinf" => what == "sine",
        "cosf" => what == "cosine",
        _ => true,
    }
}

/// Math function `name`'s `what` in `language`, `out`, against the f64 `reference` (sine
/// or cosine) of each index: each element within the sincos check's ulps, and the
/// largest error in ulps.
fn math_check(
    name: &str,
    what: &str,
    language: KernelSet,
    out: &[f32],
    reference: fn(f64) -> f64,
) -> (Verification, f64) {
    let what = format!("{name} {what} ({})", language.label());
    let check = crate::sincos::within_trig_ulps(&what, out, reference);
    (
        check,
        crate::verify::max_ulps(out, |i| trig_at(reference, i)),
    )
}

/// The math library functions timed alone ("whose math").
const MATH: [&str; 3] = ["sinf", "cosf", "sincosf"];

/// matmul's inputs on the GPU: one allocation holding `a` and `b` at each place of
/// `layout`, and the f64 reference of `c` (with each cell's tolerance) for the first.
struct MatmulInputs {
    slab: DeviceBuffer<f32>,
    layout: Vec<[Range<usize>; 2]>,
    reference: Vec<(f64, f64)>,
}

impl MatmulInputs {
    /// `case`'s places: each one's offsets and visits, and each spelling's times there.
    fn place(
        &self,
        case: &mut KernelCase,
        visits: &[(usize, usize)],
        by_place: Vec<Vec<Vec<f64>>>,
    ) {
        case.placements = (self.layout.iter().enumerate())
            .map(|(place, inputs)| Placement {
                offsets_bytes: inputs.iter().map(|r| r.start * size_of::<f32>()).collect(),
                visits: visits.iter().filter(|v| v.0 == place).count(),
                rust: None,
                cuda: None,
            })
            .collect();
        for (spelling, places) in case.spellings.iter_mut().zip(by_place) {
            spelling.by_place = places.into_iter().map(series).collect();
        }
    }
}
