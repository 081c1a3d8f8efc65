//! `#[kernel]` compiled for the host: each kernel becomes a unit struct whose
//! [`Kernel`] implementation gives its signature, PTX parameters and argument markers,
//! and host values pack into launch parameters only when they match.
use core::any::TypeId;

use nvptx_kernel::launch::{Args, DeviceSlice, DeviceSliceMut};
use nvptx_kernel::{
    ConstPtr, Kernel, MutPtr, Param, ParamKind, PtxPart, PtxType, Scalar, Slice, SliceMut, kernel,
};

/// `b[i] = a[i] + sqrt(sin(i)² + cos(i)²)` for `i = offset + thread index`.
#[kernel]
pub unsafe fn sincos(a: &[f32], b: &mut [f32], offset: u32) {
    let i = offset as usize + nvptx_kernel::thread::index_1d() as usize;
    if i < b.len() {
        b[i] = a[i];
    }
}

/// Every parameter kind, with `mut` bindings and a lifetime the host ignores.
#[kernel]
pub unsafe fn every_kind(
    a: &'static [i8],
    mut b: &mut [f64],
    c: *const u16,
    d: *mut i64,
    mut e: i32,
    f: u64,
    g: isize,
    h: usize,
    k: f32,
) {
    e += 1;
    b = &mut b[1..];
    b[0] = a[0] as f64 + e as f64 + f as f64 + g as f64 + h as f64 + k as f64;
    unsafe { *d = *c as i64 };
}

/// No parameters at all.
#[kernel]
pub unsafe fn noop() {}

fn type_of<T: 'static>() -> TypeId {
    TypeId::of::<T>()
}

#[test]
fn signatures_name_every_parameter() {
    assert_eq!(
        sincos::SIGNATURE.to_string(),
        "sincos(a: &[f32], b: &mut [f32], offset: u32)"
    );
    assert_eq!(
        every_kind::SIGNATURE.to_string(),
        "every_kind(a: &[i8], b: &mut [f64], c: *const u16, d: *mut i64, e: i32, f: u64, \
         g: isize, h: usize, k: f32)"
    );
    assert_eq!(noop::SIGNATURE.to_string(), "noop()");
    assert_eq!(
        sincos::SIGNATURE.params[2],
        Param {
            name: "offset",
            kind: ParamKind::Value(Scalar::U32),
        }
    );
}

#[test]
fn slices_are_two_ptx_parameters() {
    let ptx: Vec<_> = sincos::SIGNATURE
        .ptx_params()
        .map(|(param, part, ty)| (param.name, part, ty))
        .collect();
    assert_eq!(
        ptx,
        [
            ("a", PtxPart::Pointer, PtxType::Int64),
            ("a", PtxPart::Length, PtxType::Int64),
            ("b", PtxPart::Pointer, PtxType::Int64),
            ("b", PtxPart::Length, PtxType::Int64),
            ("offset", PtxPart::Value, PtxType::Int32),
        ]
    );
    assert_eq!(every_kind::SIGNATURE.ptx_params().count(), 11);
    assert_eq!(noop::SIGNATURE.ptx_params().count(), 0);
}

#[test]
fn args_are_the_parameter_markers() {
    assert_eq!(
        type_of::<<sincos as Kernel>::Args>(),
        type_of::<(Slice<f32>, SliceMut<f32>, u32)>()
    );
    assert_eq!(
        type_of::<<every_kind as Kernel>::Args>(),
        type_of::<(
            Slice<i8>,
            SliceMut<f64>,
            ConstPtr<u16>,
            MutPtr<i64>,
            i32,
            u64,
            isize,
            usize,
            f32,
        )>()
    );
    assert_eq!(type_of::<<noop as Kernel>::Args>(), type_of::<()>());
}

/// What a launcher does: accept only host values matching the kernel's `Args`.
fn pack<K: Kernel>(args: impl Args<K::Args>) -> usize {
    args.pack().len()
}

#[test]
fn matching_host_values_pack() {
    // SAFETY: never dereferenced; the views only carry an address and a length.
    let (a, b) = unsafe {
        (
            DeviceSlice::<f32>::from_raw(0x1000, 4),
            DeviceSliceMut::<f32>::from_raw(0x2000, 4),
        )
    };
    assert_eq!(pack::<sincos>((a, b, 7u32)), 5);
    assert_eq!(pack::<noop>(()), 0);
}
