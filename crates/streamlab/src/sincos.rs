//! The sincos workload, shared by every experiment that runs the blog's kernel:
//! `b[i] = a[i] + sqrt(sin(i)² + cos(i)²)` over floats, its buffers, how one chunk is
//! copied in, computed or copied out (on one GPU or on a GPU holding a share of the
//! array), and its reference.
//!
//! `sqrt(sin² + cos²)` is 1 within float rounding for every `x`, so a reference within a
//! tolerance cannot tell the kernel from one that writes `a + 1`. The reference here is
//! exact instead: the kernel set's own math library gives the sine and cosine of every
//! index (a checked launch of its `math_sinf` and `math_cosf`, or `math_sincosf`, the
//! functions that form of the kernel calls), each within [`TRIG_ULPS`] of the f64 value
//! at that index, and the host finishes each element as every sincos kernel does
//! ([`kernels_rs::element::sincos_from`]: one `fma`, one correctly rounded square root).
//! An output is right only where it matches that bit for bit: the rounding of `s² + c²`
//! moves a share of the elements off `a + 1`, a different share at each index (the tests
//! hold it above one element in twenty), so a kernel that skips the math or reads
//! another index fails.
use std::ops::Range;

use kernels_rs::sincos;
use nvptx_kernel::Kernel;
use streamlab_results::saved::timeline::OpKind;
use streamlab_results::saved::{KernelForm, Verification};

use crate::runtime::{
    DeviceBuffer, Function, Gpu, Kernels, PinnedBuffer, RuntimeError, Shape, Stream,
};

/// Threads per block of the sincos kernel (the blog's).
pub const THREADS: u32 = 1024;

/// How far the math library's sine and cosine may be from the f64 value, in units in the
/// last place: CUDA documents 2 for `sinf` and `cosf`, the `libm` crate's are within 1.
pub const TRIG_ULPS: f64 = 2.0;

/// The sincos kernel's handle.
pub type SincosFn = Function<<sincos as Kernel>::Args>;

/// The arrays of a sincos run: `a` in pinned host memory and on the device, `b` the
/// same, and the exact reference of `b`.
pub struct Buffers {
    pub host_a: PinnedBuffer<f32>,
    pub host_b: PinnedBuffer<f32>,
    pub dev_a: DeviceBuffer<f32>,
    pub dev_b: DeviceBuffer<f32>,
    pub expected: Expected,
}

impl Buffers {
    /// Arrays of `n` floats, `a` random in [0, 1), `b` NaN, for the sincos kernel of
    /// `kernels` in `form`.
    pub fn new(
        gpu: &Gpu,
        kernels: &Kernels,
        form: KernelForm,
        n: usize,
    ) -> Result<Buffers, RuntimeError> {
        gpu.ensure_fits((2 * n * size_of::<f32>()) as u64)?;
        let mut host_a = gpu.pinned(n, 0.0f32)?;
        let expected = fill_inputs(gpu, (kernels, form), &mut host_a)?;
        Ok(Buffers {
            host_a,
            host_b: gpu.pinned(n, f32::NAN)?,
            dev_a: gpu.alloc(n)?,
            dev_b: gpu.alloc(n)?,
            expected,
        })
    }

    /// One copy in, kernel or copy out of chunk `part`.
    pub fn op(
        &mut self,
        kernel: &SincosFn,
        threads: u32,
        kind: OpKind,
        stream: &Stream,
        part: &Range<usize>,
    ) -> Result<(), RuntimeError> {
        issue_op(
            (kernel, threads),
            kind,
            stream,
            (&self.host_a, &mut self.host_b),
            (&mut self.dev_a, &mut self.dev_b, 0),
            part,
        )
    }

    /// Poison `b` on the device and the host, so every element must be written again.
    pub fn poison(&mut self, gpu: &Gpu, stream: &Stream) -> Result<(), RuntimeError> {
        stream.poison(&mut self.dev_b)?;
        crate::parallel::for_each_chunk_mut(self.host_b.as_mut_slice()?, |_, c| c.fill(f32::NAN));
        gpu.synchronize()
    }
}

/// Fill `a` with random values in [0, 1) and return the exact reference of `b` for the
/// sincos kernel of `kernels` in `form`, its sines and cosines computed on `gpu`.
pub fn fill_inputs(
    gpu: &Gpu,
    (kernels, form): (&Kernels, KernelForm),
    host_a: &mut PinnedBuffer<f32>,
) -> Result<Expected, RuntimeError> {
    let mut rng = crate::rng::Rng::new(crate::rng::Rng::seed_from_clock());
    rng.fill_unit(host_a.as_mut_slice()?);
    let trig = Trig::measure(gpu, kernels, form, host_a.len())?;
    Ok(Expected::new(host_a.as_slice()?, &trig))
}

/// The sine and cosine of every index `0..n` as one kernel set's math library gives them,
/// and the check that they are the sine and cosine of that index.
pub struct Trig {
    pub sines: Vec<f32>,
    pub cosines: Vec<f32>,
    pub check: Verification,
}

impl Trig {
    /// Launch the math functions the sincos kernel of `kernels` in `form` calls over
    /// `0..n` on `gpu`, into poisoned buffers, read them back and check every element.
    pub fn measure(
        gpu: &Gpu,
        kernels: &Kernels,
        form: KernelForm,
        n: usize,
    ) -> Result<Trig, RuntimeError> {
        gpu.ensure_fits((2 * n * size_of::<f32>()) as u64)?;
        let stream = gpu.streams(1)?.remove(0);
        let mut sines: DeviceBuffer<f32> = gpu.alloc(n)?;
        let mut cosines: DeviceBuffer<f32> = gpu.alloc(n)?;
        stream.poison(&mut sines)?;
        stream.poison(&mut cosines)?;
        let shape = Shape::cover(n, THREADS);
        let functions = match form {
            KernelForm::Plain => {
                stream.launch(&kernels.math_sinf, shape, (sines.all_mut(), 0u32))?;
                stream.launch(&kernels.math_cosf, shape, (cosines.all_mut(), 0u32))?;
                "sinf and cosf"
            }
            KernelForm::Safe | KernelForm::Tuned => {
                let args = (sines.all_mut(), cosines.all_mut(), 0u32);
                stream.launch(&kernels.math_sincosf, shape, args)?;
                "sincosf"
            }
        };
        let mut host_s = gpu.pinned(n, f32::NAN)?;
        let mut host_c = gpu.pinned(n, f32::NAN)?;
        stream.dtoh(&mut host_s, 0, &sines, 0..n)?;
        stream.dtoh(&mut host_c, 0, &cosines, 0..n)?;
        stream.synchronize()?;
        let (sines, cosines) = (host_s.as_slice()?.to_vec(), host_c.as_slice()?.to_vec());
        let what = format!(
            "sine and cosine of sincos' reference ({functions}, {})",
            kernels.set.label()
        );
        let check = check_trig(&what, &sines, &cosines);
        Ok(Trig {
            sines,
            cosines,
            check,
        })
    }
}

/// The f64 value of `f` (sine or cosine) at index `i` rounded to f32, as the kernels
/// round it.
pub fn trig_at(f: fn(f64) -> f64, i: usize) -> f64 {
    f(i as u32 as f32 as f64)
}

/// Check `out[i]` against [`trig_at`] `f` and `i`, each within [`TRIG_ULPS`].
pub fn within_trig_ulps(what: &str, out: &[f32], f: fn(f64) -> f64) -> Verification {
    crate::verify::compare_each(what, out, |i| {
        let want = trig_at(f, i);
        (want, TRIG_ULPS * crate::verify::ulp_of(want))
    })
}

/// Check `sines[i]` and `cosines[i]` against the f64 sine and cosine of `i` rounded to
/// f32 (as the kernels round it), each within [`TRIG_ULPS`].
pub fn check_trig(what: &str, sines: &[f32], cosines: &[f32]) -> Verification {
    let (s, c) = (
        within_trig_ulps(what, sines, f64::sin),
        within_trig_ulps(what, cosines, f64::cos),
    );
    let detail = if s.passed && c.passed {
        format!(
            "{what}: all {} sines and cosines within {TRIG_ULPS} ulps",
            sines.len()
        )
    } else if !s.passed {
        format!("{} (sines)", s.detail)
    } else {
        format!("{} (cosines)", c.detail)
    };
    Verification {
        passed: s.passed && c.passed,
        checked: s.checked + c.checked,
        mismatches: s.mismatches + c.mismatches,
        max_abs_error: s.max_abs_error.max(c.max_abs_error),
        detail,
    }
}

/// The exact value every element of `b` must have, and the check of the sines and
/// cosines it was finished from.
pub struct Expected {
    pub values: Vec<f32>,
    pub trig: Verification,
}

impl Expected {
    /// `a[i] + sqrt(s² + c²)` for every element, from `trig`'s sine and cosine of `i`.
    pub fn new(a: &[f32], trig: &Trig) -> Expected {
        let mut values = vec![0.0f32; a.len()];
        crate::parallel::for_each_chunk_mut(&mut values, |start, chunk| {
            for (j, e) in chunk.iter_mut().enumerate() {
                let i = start + j;
                *e = kernels_rs::element::sincos_from(a[i], trig.sines[i], trig.cosines[i]);
            }
        });
        Expected {
            values,
            trig: trig.check.clone(),
        }
    }

    /// Check `b`, the first `b.len()` elements of the output, bit for bit; it fails
    /// where the sines and cosines failed their check.
    pub fn check(&self, what: &str, b: &[f32]) -> Verification {
        if !self.trig.passed {
            return Verification {
                passed: false,
                checked: b.len() as u64,
                mismatches: b.len() as u64,
                max_abs_error: f64::NAN,
                detail: format!("{what}: no reference; {}", self.trig.detail),
            };
        }
        let v = crate::verify::identical(what, b, &self.values[..b.len()], |i| {
            format!("x = {}", i as u32 as f32)
        });
        match v.passed {
            true => Verification {
                detail: format!(
                    "{what}: all {} elements identical, bit for bit, to a + sqrt(s² + c²) \
                     from the kernels' own sine and cosine (each within {TRIG_ULPS} ulps)",
                    b.len()
                ),
                ..v
            },
            false => v,
        }
    }
}

/// One copy in, kernel or copy out of chunk `part` of the host arrays `a` and `b`, on a
/// GPU whose arrays hold the elements from `base` on (element `i` of the host arrays is
/// element `i - base` there); the kernel is given the chunk's global index.
pub fn issue_op(
    (kernel, threads): (&SincosFn, u32),
    kind: OpKind,
    stream: &Stream,
    (host_a, host_b): (&PinnedBuffer<f32>, &mut PinnedBuffer<f32>),
    (dev_a, dev_b, base): (&mut DeviceBuffer<f32>, &mut DeviceBuffer<f32>, usize),
    part: &Range<usize>,
) -> Result<(), RuntimeError> {
    let local = part.start - base..part.end - base;
    match kind {
        OpKind::HtoD => stream.htod(dev_a, local.start, host_a, part.clone()),
        OpKind::Kernel => stream.launch(
            kernel,
            Shape::cover(part.len(), threads),
            (
                dev_a.slice(local.clone()),
                dev_b.slice_mut(local),
                part.start as u32,
            ),
        ),
        OpKind::DtoH => stream.dtoh(host_b, part.start, dev_b, local),
        other => unreachable!("{} is not a stage of the sincos pipeline", other.label()),
    }
}

#[cfg(test)]
mod tests;
