//! The sincos workload, shared by every experiment that runs the blog's kernel:
//! `b[i] = a[i] + sqrt(sin(i)² + cos(i)²)` over
//! floats, its buffers, how one chunk is copied in, computed or copied out (on one GPU
//! or on a GPU holding a share of the array), and its f64 reference.
use std::ops::Range;

use kernels_rs::sincos;
use nvptx_kernel::Kernel;
use streamlab_results::saved::Verification;
use streamlab_results::saved::timeline::OpKind;

use crate::runtime::{DeviceBuffer, Function, Gpu, PinnedBuffer, RuntimeError, Shape, Stream};

/// Threads per block of the sincos kernel (the blog's).
pub const THREADS: u32 = 1024;

/// The sincos kernel's handle.
pub type SincosFn = Function<<sincos as Kernel>::Args>;

/// The arrays of a sincos run: `a` in pinned host memory and on the device, `b` the
/// same, and the f64 reference of `b`.
pub struct Buffers {
    pub host_a: PinnedBuffer<f32>,
    pub host_b: PinnedBuffer<f32>,
    pub dev_a: DeviceBuffer<f32>,
    pub dev_b: DeviceBuffer<f32>,
    pub expected: Vec<f64>,
}

impl Buffers {
    /// Arrays of `n` floats, `a` random in [0, 1), `b` NaN.
    pub fn new(gpu: &Gpu, n: usize) -> Result<Buffers, RuntimeError> {
        gpu.ensure_fits((2 * n * size_of::<f32>()) as u64)?;
        let mut host_a = gpu.pinned(n, 0.0f32)?;
        let expected = fill_inputs(&mut host_a)?;
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

/// Fill `a` with random values in [0, 1) and return the f64 reference of `b`.
pub fn fill_inputs(host_a: &mut PinnedBuffer<f32>) -> Result<Vec<f64>, RuntimeError> {
    let mut rng = streamlab_results::rng::Rng::new(streamlab_results::rng::Rng::seed_from_clock());
    rng.fill_unit(host_a.as_mut_slice()?);
    let mut expected = vec![0.0f64; host_a.len()];
    let a = host_a.as_slice()?;
    crate::parallel::for_each_chunk_mut(&mut expected, |start, chunk| {
        for (j, e) in chunk.iter_mut().enumerate() {
            *e = reference(a[start + j], start + j);
        }
    });
    Ok(expected)
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

/// The f64 reference of element `i`: `a + sqrt(sin(i)² + cos(i)²)`, with `i` rounded to
/// f32 as the kernel rounds it.
pub fn reference(a: f32, i: usize) -> f64 {
    let x = i as u32 as f32 as f64;
    f64::from(a) + (x.sin().powi(2) + x.cos().powi(2)).sqrt()
}

/// Check every element of `b` against its `expected` value, within 1e-6.
pub fn check(what: &str, expected: &[f64], b: &[f32]) -> Verification {
    crate::verify::compare(what, b, |i| expected[i], 1e-6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_matches_both_forms_of_the_kernel_element_math() {
        let a: Vec<f32> = (0..5000).map(|i| (i % 17) as f32 / 17.0).collect();
        for (i, &x) in a.iter().enumerate() {
            let want = reference(x, i);
            let tuned = kernels_rs::element::sincos_element(x, i as u32) as f64;
            let plain = kernels_rs::element::sincos_element_plain(x, i as u32) as f64;
            assert!((tuned - want).abs() <= 1e-6, "{i}");
            assert!((plain - want).abs() <= 1e-6, "{i}");
        }
    }
}
