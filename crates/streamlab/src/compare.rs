//! Rust kernels against their CUDA C++ twins ([`crate::baseline`]): each kernel on the
//! buffers and launch shapes the experiments use, launched alternately as Rust, CUDA C++,
//! Rust, CUDA C++, … on one stream with an event between launches, so both see the same
//! clocks, caches and neighbours. Per kernel: both series, their quartiles, and the ratio
//! of medians (Rust over CUDA C++: below 1 the Rust kernel is faster).
//!
//! The cases: `fill` over the wiki's A matrix (rows × aligned, grid (aligned/16 + 1,
//! rows/16 + 1)); `matmul` of one product (32 × 16 output, 16×16 blocks); `add_kernel`
//! over the Handbook's array (SMs × 16 blocks of 256 threads) at each `--add-cycles`;
//! `sincos` over the blog's array (1024 threads per block).
//!
//! Afterwards each kernel runs once more per set into a poisoned output, and both outputs
//! are checked element by element against the CPU reference (the `kernels_rs::element`
//! math) and against each other; any mismatch is a [`CompareError::Mismatch`].
use serde::{Deserialize, Serialize};

use crate::baseline::CudaKernels;
use crate::experiments::{UsageError, matmul_streams, memcpy_kernel, sincos_overlap};
use crate::results::{KernelComparison, KernelTiming, Quartiles, Verification};
use crate::runtime::{
    Arg, DeviceBuffer, Event, Gpu, Kernels, PinnedBuffer, RuntimeError, Shape, Stream,
};
use crate::stats::Series;
use crate::verify;

/// sincos tolerance: CUDA's `sinf`/`cosf` and the Rust `libm` ones may differ in the last
/// bit, which `sqrt(s² + c²) ≈ 1` carries into a few units of 2^-23 (1.2e-7).
const SINCOS_TOLERANCE: f64 = 1e-6;

/// What to compare; shapes are the experiments' defaults.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Timed launches of each kernel in each language.
    #[arg(long, default_value_t = 100)]
    pub launches: usize,
    /// Untimed launches of each before timing.
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// matmul's inner dimension (A is 32 × aligned, B aligned × 16).
    #[arg(long, default_value_t = 131_072)]
    pub aligned: usize,
    /// add_kernel's array in M ints (2^20 ints each).
    #[arg(long, default_value_t = 128)]
    pub add_size: usize,
    /// add_kernel's cycles, one case each, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [256, 0])]
    pub add_cycles: Vec<i32>,
    /// sincos' array in floats.
    #[arg(long, default_value_t = 1 << 25)]
    pub sincos_elements: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            launches: 100,
            warmup: 3,
            aligned: 131_072,
            add_size: 128,
            add_cycles: vec![256, 0],
            sincos_elements: 1 << 25,
        }
    }
}

impl Params {
    /// Small sizes for a fast look.
    pub fn quick() -> Params {
        Params {
            launches: 20,
            warmup: 2,
            aligned: 8192,
            add_size: 16,
            sincos_elements: 1 << 22,
            ..Params::default()
        }
    }

    pub fn validate(&self) -> Result<(), UsageError> {
        if self.launches == 0 {
            return Err(UsageError::new(
                "--launches 0 times nothing: use at least 1",
            ));
        }
        if self.aligned == 0 || self.aligned > 1 << 24 {
            return Err(UsageError::new(format!(
                "--aligned {} is out of range: use 1..={} (exact in f32)",
                self.aligned,
                1 << 24
            )));
        }
        if self.add_size == 0 || self.add_size > 4096 {
            return Err(UsageError::new(format!(
                "--add-size {} is out of range: use 1..=4096 (M ints)",
                self.add_size
            )));
        }
        if self.add_cycles.is_empty() || self.add_cycles.iter().any(|&c| c < 0) {
            return Err(UsageError::new(
                "--add-cycles needs at least one value, each 0 or more",
            ));
        }
        if self.sincos_elements == 0 || self.sincos_elements > i32::MAX as usize {
            return Err(UsageError::new(format!(
                "--sincos-elements {} is out of range: use 1..={}",
                self.sincos_elements,
                i32::MAX
            )));
        }
        Ok(())
    }
}

/// A failed comparison.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The outputs disagree; the full result is kept so it can still be written.
    #[error("the Rust and CUDA C++ kernels do not agree: {}", .0.verification.detail)]
    Mismatch(Box<KernelComparison>),
}

/// Time and check every kernel as Rust (`gpu.kernels()`) and as CUDA C++ (`cuda`).
pub fn run(
    gpu: &Gpu,
    cuda: &CudaKernels,
    params: &Params,
) -> Result<KernelComparison, CompareError> {
    let sets = Sets {
        gpu,
        rust: gpu.kernels(),
        cuda: &cuda.kernels,
        params,
    };
    let cases = 3 + params.add_cycles.len();
    let mut task = crate::progress::Task::start("rust vs cuda", cases as u64);
    let mut kernels = Vec::with_capacity(cases);
    let (fill, product) = sets.fill_and_matmul()?;
    kernels.extend([fill, product]);
    task.step("fill, matmul");
    for timing in sets.add_kernel()? {
        task.step(&timing.kernel);
        kernels.push(timing);
    }
    kernels.push(sets.sincos()?);
    task.step("sincos");
    task.finish();
    let comparison = KernelComparison {
        params: params.clone(),
        device: gpu.info().clone(),
        cuda_build: cuda.build.clone(),
        verification: verify::combine(kernels.iter().map(|k| k.verification.clone()).collect()),
        kernels,
    };
    if comparison.verification.passed {
        Ok(comparison)
    } else {
        Err(CompareError::Mismatch(Box::new(comparison)))
    }
}

/// Both kernel sets on one GPU.
struct Sets<'a> {
    gpu: &'a Gpu,
    rust: &'a Kernels,
    cuda: &'a Kernels,
    params: &'a Params,
}

impl Sets<'_> {
    /// `launch` with each set alternately (after warm-up), an event between launches;
    /// returns the Rust and the CUDA C++ milliseconds.
    fn interleave(
        &self,
        stream: &Stream,
        launch: impl Fn(&Kernels) -> Result<(), RuntimeError>,
    ) -> Result<(Vec<f64>, Vec<f64>), RuntimeError> {
        for _ in 0..self.params.warmup {
            launch(self.rust)?;
            launch(self.cuda)?;
        }
        let marks = (0..=2 * self.params.launches)
            .map(|_| self.gpu.event())
            .collect::<Result<Vec<Event>, _>>()?;
        stream.record(&marks[0])?;
        for pair in marks[1..].chunks(2) {
            launch(self.rust)?;
            stream.record(&pair[0])?;
            launch(self.cuda)?;
            stream.record(&pair[1])?;
        }
        let times = marks
            .windows(2)
            .map(|w| w[0].elapsed_ms(&w[1]))
            .collect::<Result<Vec<f64>, _>>()?;
        Ok(split_alternating(&times))
    }

    /// Run `launch` once per set into `out` (poisoned first) and copy each result back.
    fn outputs<T: Copy>(
        &self,
        stream: &Stream,
        out: &DeviceBuffer<T>,
        launch: impl Fn(&Kernels) -> Result<(), RuntimeError>,
        poison: T,
    ) -> Result<[PinnedBuffer<T>; 2], RuntimeError> {
        let mut host = [
            self.gpu.pinned(out.len(), poison)?,
            self.gpu.pinned(out.len(), poison)?,
        ];
        for (set, host) in [self.rust, self.cuda].into_iter().zip(&mut host) {
            stream.poison(out)?;
            launch(set)?;
            stream.dtoh(host, 0, out, 0..out.len())?;
        }
        stream.synchronize()?;
        Ok(host)
    }

    fn fill_and_matmul(&self) -> Result<(KernelTiming, KernelTiming), RuntimeError> {
        let gpu = self.gpu;
        let m = matmul_streams::Params {
            aligned: self.params.aligned,
            ..matmul_streams::Params::default()
        };
        let (rows, cols, aligned, block) = (m.rows, m.cols, m.aligned, m.block);
        gpu.ensure_fits((rows * aligned + aligned * cols + rows * cols) * size_of::<f32>())?;
        let a: DeviceBuffer<f32> = gpu.alloc(rows * aligned)?;
        let b: DeviceBuffer<f32> = gpu.alloc(aligned * cols)?;
        let c: DeviceBuffer<f32> = gpu.alloc(rows * cols)?;
        let stream = &gpu.streams(1)?[0];
        // The wiki's fill grids: one block more than needed along each axis.
        let fill_shape = |rows: usize, cols: usize| Shape {
            grid: (
                (cols / block as usize + 1) as u32,
                (rows / block as usize + 1) as u32,
            ),
            block: (block, block),
        };
        let fill = |set: &Kernels, matrix: &DeviceBuffer<f32>, rows: usize, cols: usize| {
            stream.launch(
                &set.fill,
                fill_shape(rows, cols),
                &[
                    matrix.at(0),
                    Arg::I32(rows as i32),
                    Arg::I32(cols as i32),
                    Arg::F32(1.0),
                ],
            )
        };
        let fill_a = |set: &Kernels| fill(set, &a, rows, aligned);
        let (rust, cuda) = self.interleave(stream, fill_a)?;
        let [rust_a, cuda_a] = self.outputs(stream, &a, fill_a, f32::NAN)?;
        let fill_timing = timing(
            "fill",
            format!(
                "{rows} x {aligned} matrix, grid {:?} x block {:?}",
                fill_shape(rows, aligned).grid,
                (block, block)
            ),
            rust,
            cuda,
            agree("fill", rust_a.as_slice(), cuda_a.as_slice(), |_| 1.0, 0.0),
        );

        // The product's inputs: both matrices of ones, as in matmul-streams.
        fill(self.rust, &a, rows, aligned)?;
        fill(self.rust, &b, aligned, cols)?;
        stream.synchronize()?;
        let mul_shape = Shape {
            grid: (
                cols.div_ceil(block as usize) as u32,
                rows.div_ceil(block as usize) as u32,
            ),
            block: (block, block),
        };
        let multiply = |set: &Kernels| {
            stream.launch(
                &set.matmul,
                mul_shape,
                &[
                    a.at(0),
                    b.at(0),
                    c.at(0),
                    Arg::I32(rows as i32),
                    Arg::I32(cols as i32),
                    Arg::I32(aligned as i32),
                ],
            )
        };
        let (rust, cuda) = self.interleave(stream, multiply)?;
        let [rust_c, cuda_c] = self.outputs(stream, &c, multiply, f32::NAN)?;
        let expected = ones_product(aligned);
        let matmul_timing = timing(
            "matmul",
            format!(
                "{rows} x {cols} output, aligned {aligned}, grid {:?} x block {:?}",
                mul_shape.grid, mul_shape.block
            ),
            rust,
            cuda,
            agree(
                "matmul",
                rust_c.as_slice(),
                cuda_c.as_slice(),
                |_| expected,
                0.0,
            ),
        );
        Ok((fill_timing, matmul_timing))
    }

    fn add_kernel(&self) -> Result<Vec<KernelTiming>, RuntimeError> {
        let gpu = self.gpu;
        let h = memcpy_kernel::Params {
            size: self.params.add_size,
            ..memcpy_kernel::Params::default()
        };
        let n = h.elements();
        gpu.ensure_fits(2 * n * size_of::<i32>())?;
        let mut rng = crate::rng::Rng::new(crate::rng::Rng::seed_from_clock());
        let mut host_in = gpu.pinned(n, 0i32)?;
        host_in
            .as_mut_slice()
            .iter_mut()
            .for_each(|x| *x = rng.any_i32());
        let dev_in: DeviceBuffer<i32> = gpu.alloc(n)?;
        let dev_out: DeviceBuffer<i32> = gpu.alloc(n)?;
        let stream = &gpu.streams(1)?[0];
        stream.htod(&dev_in, 0, &host_in, 0..n)?;
        stream.synchronize()?;
        let blocks = gpu.info().sm_count.max(1) as u32 * h.blocks_per_sm;
        let shape = Shape::linear(blocks, h.threads);
        let input = host_in.as_slice();
        self.params
            .add_cycles
            .iter()
            .map(|&cycles| {
                let add = |set: &Kernels| {
                    stream.launch(
                        &set.add_kernel,
                        shape,
                        &[
                            dev_out.at(0),
                            dev_in.at(0),
                            Arg::U64(n as u64),
                            Arg::I32(h.add_value),
                            Arg::I32(cycles),
                        ],
                    )
                };
                let (rust, cuda) = self.interleave(stream, add)?;
                let [rust_out, cuda_out] = self.outputs(stream, &dev_out, add, -1)?;
                let name = format!("add_kernel (cycles {cycles})");
                let check = agree(
                    &name,
                    rust_out.as_slice(),
                    cuda_out.as_slice(),
                    |i| {
                        kernels_rs::element::add_repeatedly_closed_form(
                            input[i],
                            h.add_value,
                            cycles,
                        ) as f64
                    },
                    0.0,
                );
                Ok(timing(
                    &name,
                    format!(
                        "{n} ints, {blocks} blocks x {} threads, add {}",
                        h.threads, h.add_value
                    ),
                    rust,
                    cuda,
                    check,
                ))
            })
            .collect()
    }

    fn sincos(&self) -> Result<KernelTiming, RuntimeError> {
        let gpu = self.gpu;
        let n = self.params.sincos_elements;
        let threads = sincos_overlap::Params::default().threads;
        gpu.ensure_fits(2 * n * size_of::<f32>())?;
        let mut rng = crate::rng::Rng::new(crate::rng::Rng::seed_from_clock());
        let mut host_a = gpu.pinned(n, 0.0f32)?;
        host_a
            .as_mut_slice()
            .iter_mut()
            .for_each(|x| *x = rng.unit_f32());
        let dev_a: DeviceBuffer<f32> = gpu.alloc(n)?;
        let dev_b: DeviceBuffer<f32> = gpu.alloc(n)?;
        let stream = &gpu.streams(1)?[0];
        stream.htod(&dev_a, 0, &host_a, 0..n)?;
        stream.synchronize()?;
        let blocks = n.div_ceil(threads as usize) as u32;
        let shape = Shape::linear(blocks, threads);
        let sincos = |set: &Kernels| {
            stream.launch(
                &set.sincos,
                shape,
                &[dev_a.at(0), dev_b.at(0), Arg::U32(0), Arg::U32(n as u32)],
            )
        };
        let (rust, cuda) = self.interleave(stream, sincos)?;
        let [rust_b, cuda_b] = self.outputs(stream, &dev_b, sincos, f32::NAN)?;
        let a = host_a.as_slice();
        let check = agree(
            "sincos",
            rust_b.as_slice(),
            cuda_b.as_slice(),
            |i| kernels_rs::element::sincos_element(a[i], i as u32) as f64,
            SINCOS_TOLERANCE,
        );
        Ok(timing(
            "sincos",
            format!("{n} floats, {blocks} blocks x {threads} threads"),
            rust,
            cuda,
            check,
        ))
    }
}

/// One kernel's entry from its samples and check.
fn timing(
    kernel: &str,
    launch: String,
    rust: Vec<f64>,
    cuda: Vec<f64>,
    verification: Verification,
) -> KernelTiming {
    let rust_quartiles = quartiles(&rust).expect("at least one launch");
    let cuda_quartiles = quartiles(&cuda).expect("at least one launch");
    KernelTiming {
        kernel: kernel.to_owned(),
        launch,
        ratio_median: ratio(rust_quartiles.median, cuda_quartiles.median),
        rust: Series::new(rust).expect("finite event times"),
        cuda: Series::new(cuda).expect("finite event times"),
        rust_quartiles,
        cuda_quartiles,
        verification,
    }
}

/// Split `[r0, c0, r1, c1, …]` into `([r0, r1, …], [c0, c1, …])`.
pub fn split_alternating(times: &[f64]) -> (Vec<f64>, Vec<f64>) {
    (
        times.iter().step_by(2).copied().collect(),
        times.iter().skip(1).step_by(2).copied().collect(),
    )
}

/// Rust median over CUDA C++ median.
pub fn ratio(rust_median: f64, cuda_median: f64) -> f64 {
    rust_median / cuda_median
}

/// Quartiles with linear interpolation between order statistics (position `p·(n − 1)`);
/// the median equals [`crate::stats::Summary`]'s. `None` for no samples or a non-finite one.
pub fn quartiles(samples: &[f64]) -> Option<Quartiles> {
    if samples.is_empty() || samples.iter().any(|s| !s.is_finite()) {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = |p: f64| {
        let position = p * (sorted.len() - 1) as f64;
        let (low, high) = (position.floor() as usize, position.ceil() as usize);
        sorted[low] + (sorted[high] - sorted[low]) * (position - low as f64)
    };
    Some(Quartiles {
        q1: at(0.25),
        median: at(0.5),
        q3: at(0.75),
    })
}

/// Every cell of a product of two all-ones matrices with inner dimension `aligned`, as
/// the kernels compute it (exactly `aligned` while it is at most 2^24).
fn ones_product(aligned: usize) -> f64 {
    let ones = vec![1.0f32; aligned];
    // SAFETY: a 1 × aligned row times an aligned × 1 column, both `aligned` long.
    let cell =
        unsafe { kernels_rs::element::matmul_cell(ones.as_ptr(), ones.as_ptr(), 0, 0, 1, aligned) };
    cell as f64
}

/// Check both outputs against the CPU reference `expected(i)` within `tolerance`, and
/// against each other within `tolerance`, element by element.
pub fn agree<T: Copy + Into<f64>>(
    what: &str,
    rust: &[T],
    cuda: &[T],
    expected: impl Fn(usize) -> f64,
    tolerance: f64,
) -> Verification {
    verify::combine(vec![
        verify::compare(&format!("{what} (Rust)"), rust, &expected, tolerance),
        verify::compare(&format!("{what} (CUDA C++)"), cuda, &expected, tolerance),
        verify::compare(
            &format!("{what} (Rust against CUDA C++)"),
            rust,
            |i| cuda[i].into(),
            tolerance,
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternating_launch_times_split_into_two_series() {
        let (rust, cuda) = split_alternating(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(rust, [1.0, 3.0, 5.0]);
        assert_eq!(cuda, [2.0, 4.0, 6.0]);
        assert!((ratio(0.9, 1.2) - 0.75).abs() < 1e-12);
        assert_eq!(ratio(2.0, 1.0), 2.0);
    }

    #[test]
    fn quartiles_interpolate_and_share_the_summary_median() {
        let q = quartiles(&[4.0, 1.0, 3.0, 2.0, 5.0]).unwrap();
        assert_eq!((q.q1, q.median, q.q3), (2.0, 3.0, 4.0));
        let even = [7.0, 1.0, 3.0, 5.0];
        let q = quartiles(&even).unwrap();
        assert_eq!((q.q1, q.median, q.q3), (2.5, 4.0, 5.5));
        assert_eq!(q.median, crate::stats::Summary::of(&even).unwrap().median);
        let one = quartiles(&[0.25]).unwrap();
        assert_eq!((one.q1, one.median, one.q3), (0.25, 0.25, 0.25));
        assert!(quartiles(&[]).is_none());
        assert!(quartiles(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn timing_entry_has_the_ratio_of_medians() {
        let pass = agree("x", &[1.0f32], &[1.0f32], |_| 1.0, 0.0);
        let t = timing(
            "k",
            "shape".into(),
            vec![2.0, 4.0, 3.0],
            vec![1.0, 2.0, 1.5],
            pass,
        );
        assert_eq!(t.ratio_median, 2.0);
        assert_eq!(t.rust.summary.median, 3.0);
        assert_eq!(t.cuda_quartiles.median, 1.5);
        assert!(t.verification.passed);
    }

    #[test]
    fn outputs_must_match_the_reference_and_each_other() {
        let ok = agree("fill", &[1.0f32, 1.0], &[1.0f32, 1.0], |_| 1.0, 0.0);
        assert!(ok.passed && ok.checked == 6, "{}", ok.detail);
        // A CUDA C++ output off by one element fails both its own check and the cross one.
        let off = agree("add", &[5i32, 6], &[5i32, 7], |i| [5.0, 6.0][i], 0.0);
        assert!(!off.passed);
        assert_eq!(off.mismatches, 2);
        assert!(off.detail.contains("add (CUDA C++)"), "{}", off.detail);
        assert!(off.detail.contains("index 1"), "{}", off.detail);
        // An unwritten (poisoned) element never passes.
        let poisoned = agree("sincos", &[f32::NAN], &[1.0f32], |_| 1.0, 1.0);
        assert!(!poisoned.passed && poisoned.max_abs_error.is_nan());
        // Within the tolerance both ways.
        let close = agree(
            "sincos",
            &[1.0f32],
            &[1.000_000_1f32],
            |_| 1.0,
            SINCOS_TOLERANCE,
        );
        assert!(close.passed, "{}", close.detail);
    }

    #[test]
    fn cpu_references_match_the_closed_forms() {
        assert_eq!(ones_product(131_072), 131_072.0);
        assert_eq!(ones_product(13), 13.0);
        let a = 0.375f32;
        let want = kernels_rs::element::sincos_element(a, 12_345) as f64;
        let f64_ref = sincos_overlap::reference(&vec![a; 12_346])[12_345];
        assert!((want - f64_ref).abs() <= SINCOS_TOLERANCE);
    }

    #[test]
    fn bad_parameters_are_usage_errors() {
        let bad = |p: Params| p.validate().unwrap_err().to_string();
        assert!(
            bad(Params {
                launches: 0,
                ..Params::default()
            })
            .contains("--launches 0")
        );
        assert!(
            bad(Params {
                add_cycles: vec![-1],
                ..Params::default()
            })
            .contains("--add-cycles")
        );
        assert!(
            bad(Params {
                aligned: 1 << 25,
                ..Params::default()
            })
            .contains("--aligned")
        );
        assert!(
            bad(Params {
                sincos_elements: 0,
                ..Params::default()
            })
            .contains("--sincos-elements 0")
        );
        assert!(Params::default().validate().is_ok() && Params::quick().validate().is_ok());
    }
}
