//! What a kernel needs of the arguments the host passes, checked by the host before every
//! launch ([`Contract`]). The kernels trust the lengths they are given where their forms
//! index unchecked (the tuned Rust forms, most CUDA C++ twins), so a launch whose
//! arguments break a contract is refused ([`crate::RuntimeError::Contract`]) before it
//! reaches the GPU, and arguments for which no contract is written cannot be launched
//! safely at all:
//!
//! ```compile_fail
//! // Parameters no contract is written for do not launch ...
//! use nvptx_kernel::SliceMut;
//! use streamlab_runtime::{DeviceBuffer, Shape, Stream, kernels::Function};
//! fn launch(s: &Stream, f: &Function<(SliceMut<i32>, u64)>, out: &mut DeviceBuffer<i32>) {
//!     let _ = s.launch(f, Shape::linear(1, 1), (out.all_mut(), 3u64));
//! }
//! ```
//! ```no_run
//! // ... the kernels' own do.
//! use nvptx_kernel::SliceMut;
//! use streamlab_runtime::{DeviceBuffer, Shape, Stream, kernels::Function};
//! fn launch(s: &Stream, f: &Function<(SliceMut<u64>, u64)>, out: &mut DeviceBuffer<u64>) {
//!     let _ = s.launch(f, Shape::linear(1, 1), (out.all_mut(), 3u64));
//! }
//! ```
use nvptx_kernel::launch::{Arg, Args, DeviceSlice, DeviceSliceMut};
use nvptx_kernel::{MutPtr, Slice, SliceMut};

// The parameter lists below are the kernels' declarations' (`Kernel::Args`), written out:
// the compiler tells two lists apart only as types.

/// What every kernel taking parameters `P` needs of the host's arguments.
pub trait Contract<P>: Args<P> {
    /// Why these arguments break the contract; `None` where they keep it.
    /// `int_indices` says the kernel indexes with 32-bit ints: then every index must fit
    /// in one.
    fn broken(&self, int_indices: bool) -> Option<String>;
}

/// Device memory passed to a kernel: its element count.
pub trait Extent {
    fn extent(&self) -> usize;
}

impl<T> Extent for DeviceSlice<'_, T> {
    fn extent(&self) -> usize {
        self.len()
    }
}

impl<T> Extent for DeviceSliceMut<'_, T> {
    fn extent(&self) -> usize {
        self.len()
    }
}

/// "`name` holds `len` elements, fewer than the `need` the kernel reaches".
fn short(name: &str, len: usize, need: u64) -> Option<String> {
    (need > len as u64)
        .then(|| format!("{name} holds {len} elements, fewer than the {need} the kernel reaches"))
}

impl<M: Arg<MutPtr<f32>> + Extent> Contract<(MutPtr<f32>, u32, u32, f32)> for (M, u32, u32, f32) {
    fn broken(&self, _: bool) -> Option<String> {
        short(
            "the matrix",
            self.0.extent(),
            u64::from(self.1) * u64::from(self.2),
        )
    }
}

/// fill_safe checks every cell against the matrix's length.
impl<M: Arg<SliceMut<f32>>> Contract<(SliceMut<f32>, u32, u32, f32)> for (M, u32, u32, f32) {
    fn broken(&self, _: bool) -> Option<String> {
        None
    }
}

impl<A, B, C> Contract<(Slice<f32>, Slice<f32>, SliceMut<f32>, u32, u32, u32)>
    for (A, B, C, u32, u32, u32)
where
    A: Arg<Slice<f32>> + Extent,
    B: Arg<Slice<f32>> + Extent,
    C: Arg<SliceMut<f32>> + Extent,
{
    fn broken(&self, int_indices: bool) -> Option<String> {
        let (rows, cols, inner) = (u64::from(self.3), u64::from(self.4), u64::from(self.5));
        let needs = [
            ("a", self.0.extent(), rows * inner),
            ("b", self.1.extent(), inner * cols),
            ("c", self.2.extent(), rows * cols),
        ];
        if int_indices && needs.iter().any(|(_, _, n)| *n > i32::MAX as u64) {
            return Some(format!(
                "a {rows} × {cols} × {inner} product has indices past a 32-bit int, which this kernel indexes with"
            ));
        }
        needs
            .iter()
            .find_map(|&(name, len, need)| short(name, len, need))
    }
}

impl<O, I> Contract<(SliceMut<i32>, Slice<i32>, i32, i32)> for (O, I, i32, i32)
where
    O: Arg<SliceMut<i32>> + Extent,
    I: Arg<Slice<i32>> + Extent,
{
    fn broken(&self, _: bool) -> Option<String> {
        short("the input", self.1.extent(), self.0.extent() as u64)
    }
}

impl<A, B> Contract<(Slice<f32>, SliceMut<f32>, u32)> for (A, B, u32)
where
    A: Arg<Slice<f32>> + Extent,
    B: Arg<SliceMut<f32>> + Extent,
{
    fn broken(&self, _: bool) -> Option<String> {
        short("a", self.0.extent(), self.1.extent() as u64)
    }
}

/// math_sinf and math_cosf check their index against the output's length.
impl<O: Arg<SliceMut<f32>>> Contract<(SliceMut<f32>, u32)> for (O, u32) {
    fn broken(&self, _: bool) -> Option<String> {
        None
    }
}

/// math_sincosf checks its index against both outputs' lengths.
impl<S: Arg<SliceMut<f32>>, C: Arg<SliceMut<f32>>> Contract<(SliceMut<f32>, SliceMut<f32>, u32)>
    for (S, C, u32)
{
    fn broken(&self, _: bool) -> Option<String> {
        None
    }
}

impl<S, D> Contract<(Slice<u32>, SliceMut<u32>)> for (S, D)
where
    S: Arg<Slice<u32>> + Extent,
    D: Arg<SliceMut<u32>> + Extent,
{
    fn broken(&self, _: bool) -> Option<String> {
        short("the source", self.0.extent(), self.1.extent() as u64)
    }
}

/// empty takes nothing.
impl Contract<()> for () {
    fn broken(&self, _: bool) -> Option<String> {
        None
    }
}

/// chain_step checks its block against the counts' length and its step against the
/// stamps'.
impl<S: Arg<SliceMut<u64>>, C: Arg<SliceMut<u32>>>
    Contract<(SliceMut<u64>, SliceMut<u32>, u64, u32)> for (S, C, u64, u32)
{
    fn broken(&self, _: bool) -> Option<String> {
        None
    }
}

/// spin checks its block against the output's length.
impl<E: Arg<SliceMut<u64>>> Contract<(SliceMut<u64>, u64)> for (E, u64) {
    fn broken(&self, _: bool) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels_rs as k;
    use nvptx_kernel::Kernel;

    /// Each contract's parameter list is its kernels' declared one.
    fn declared<K: Kernel<Args = P>, P>() {}

    #[test]
    fn every_kernel_has_its_contract() {
        declared::<k::fill, (MutPtr<f32>, u32, u32, f32)>();
        declared::<k::fill_safe, (SliceMut<f32>, u32, u32, f32)>();
        declared::<k::matmul, (Slice<f32>, Slice<f32>, SliceMut<f32>, u32, u32, u32)>();
        declared::<k::add_kernel, (SliceMut<i32>, Slice<i32>, i32, i32)>();
        declared::<k::sincos, (Slice<f32>, SliceMut<f32>, u32)>();
        declared::<k::math_sinf, (SliceMut<f32>, u32)>();
        declared::<k::math_cosf, (SliceMut<f32>, u32)>();
        declared::<k::math_sincosf, (SliceMut<f32>, SliceMut<f32>, u32)>();
        declared::<k::copy_u32, (Slice<u32>, SliceMut<u32>)>();
        declared::<k::empty, ()>();
        declared::<k::spin, (SliceMut<u64>, u64)>();
    }

    /// A view of `len` elements at a made-up address, for checks that never launch.
    fn view(len: usize) -> DeviceSlice<'static, f32> {
        // SAFETY: never passed to a kernel.
        unsafe { DeviceSlice::from_raw(0x1000, len) }
    }

    fn view_mut(len: usize) -> DeviceSliceMut<'static, f32> {
        // SAFETY: never passed to a kernel.
        unsafe { DeviceSliceMut::from_raw(0x1000, len) }
    }

    #[test]
    fn a_slice_shorter_than_the_kernel_reaches_breaks_the_contract() {
        type Matmul = (Slice<f32>, Slice<f32>, SliceMut<f32>, u32, u32, u32);
        let ok = (view(6), view(12), view_mut(8), 2u32, 4u32, 3u32);
        assert_eq!(Contract::<Matmul>::broken(&ok, false), None);
        let short_b = (view(6), view(11), view_mut(8), 2u32, 4u32, 3u32);
        let why = Contract::<Matmul>::broken(&short_b, false).unwrap();
        assert!(
            why.starts_with("b holds 11 elements, fewer than the 12"),
            "{why}"
        );
        let huge = (view(6), view(12), view_mut(8), 65_536u32, 65_536u32, 1u32);
        assert!(
            Contract::<Matmul>::broken(&huge, true)
                .unwrap()
                .contains("32-bit int")
        );
        type Sincos = (Slice<f32>, SliceMut<f32>, u32);
        assert!(Contract::<Sincos>::broken(&(view(3), view_mut(4), 0u32), false).is_some());
        assert!(Contract::<Sincos>::broken(&(view(4), view_mut(4), 0u32), false).is_none());
        type Fill = (MutPtr<f32>, u32, u32, f32);
        assert!(Contract::<Fill>::broken(&(view_mut(5), 2u32, 3u32, 1.0f32), false).is_some());
    }
}
