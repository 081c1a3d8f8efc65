//! What a kernel takes, as data: the one declaration from which a host gets a typed
//! launcher ([`Kernel::Args`]) and a build checks the PTX entry ([`KernelSignature`]).
//!
//! `#[kernel]` writes these for every kernel when a crate is compiled for the host; a
//! kernel crate lists its kernels' signatures in one constant, which its builder checks
//! against the `.entry` parameter lists of the PTX.
use core::fmt;
use core::marker::PhantomData;

/// A scalar a kernel parameter or slice element may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    Isize,
    Usize,
    F32,
    F64,
}

impl Scalar {
    /// The Rust name of the type.
    pub const fn rust_name(self) -> &'static str {
        match self {
            Scalar::I8 => "i8",
            Scalar::U8 => "u8",
            Scalar::I16 => "i16",
            Scalar::U16 => "u16",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::I64 => "i64",
            Scalar::U64 => "u64",
            Scalar::Isize => "isize",
            Scalar::Usize => "usize",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    /// The PTX type of a parameter passed by value. Only 32- and 64-bit scalars can be
    /// passed by value (`#[kernel]` refuses the others).
    pub const fn ptx(self) -> Option<PtxType> {
        match self {
            Scalar::I32 | Scalar::U32 => Some(PtxType::Int32),
            Scalar::I64 | Scalar::U64 | Scalar::Isize | Scalar::Usize => Some(PtxType::Int64),
            Scalar::F32 => Some(PtxType::F32),
            Scalar::F64 => Some(PtxType::F64),
            Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16 => None,
        }
    }
}

/// How a kernel takes one parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A scalar by value.
    Value(Scalar),
    /// `&[T]`: passed as a pointer and an element count.
    Slice(Scalar),
    /// `&mut [T]`: passed as a pointer and an element count.
    SliceMut(Scalar),
    /// `*const T`.
    ConstPtr(Scalar),
    /// `*mut T`.
    MutPtr(Scalar),
}

impl ParamKind {
    /// The PTX parameters this one becomes, in order: slices become a pointer and a
    /// length, everything else one parameter.
    pub fn ptx(self) -> &'static [(PtxPart, PtxType)] {
        const POINTER: &[(PtxPart, PtxType)] = &[(PtxPart::Pointer, PtxType::Int64)];
        const SLICE: &[(PtxPart, PtxType)] = &[
            (PtxPart::Pointer, PtxType::Int64),
            (PtxPart::Length, PtxType::Int64),
        ];
        const I32: &[(PtxPart, PtxType)] = &[(PtxPart::Value, PtxType::Int32)];
        const I64: &[(PtxPart, PtxType)] = &[(PtxPart::Value, PtxType::Int64)];
        const F32: &[(PtxPart, PtxType)] = &[(PtxPart::Value, PtxType::F32)];
        const F64: &[(PtxPart, PtxType)] = &[(PtxPart::Value, PtxType::F64)];
        match self {
            ParamKind::Slice(_) | ParamKind::SliceMut(_) => SLICE,
            ParamKind::ConstPtr(_) | ParamKind::MutPtr(_) => POINTER,
            ParamKind::Value(scalar) => match scalar.ptx() {
                Some(PtxType::Int32) => I32,
                Some(PtxType::Int64) => I64,
                Some(PtxType::F32) => F32,
                Some(PtxType::F64) => F64,
                None => &[],
            },
        }
    }
}

impl fmt::Display for ParamKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamKind::Value(t) => write!(f, "{}", t.rust_name()),
            ParamKind::Slice(t) => write!(f, "&[{}]", t.rust_name()),
            ParamKind::SliceMut(t) => write!(f, "&mut [{}]", t.rust_name()),
            ParamKind::ConstPtr(t) => write!(f, "*const {}", t.rust_name()),
            ParamKind::MutPtr(t) => write!(f, "*mut {}", t.rust_name()),
        }
    }
}

/// Which part of a Rust parameter a PTX parameter carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PtxPart {
    Value,
    Pointer,
    Length,
}

/// The type of a PTX `.param`, as far as passing it is concerned: integers and pointers
/// by width (`.u32`/`.s32`/`.b32`, `.u64`/`.s64`/`.b64`), floats by precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PtxType {
    Int32,
    Int64,
    F32,
    F64,
}

impl PtxType {
    /// Read a PTX parameter type such as `.u64`, `.s32` or `.f32`.
    pub fn parse(ptx: &str) -> Option<PtxType> {
        match ptx.trim_start_matches('.') {
            "u32" | "s32" | "b32" => Some(PtxType::Int32),
            "u64" | "s64" | "b64" => Some(PtxType::Int64),
            "f32" => Some(PtxType::F32),
            "f64" => Some(PtxType::F64),
            _ => None,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            PtxType::Int32 => "a 32-bit integer",
            PtxType::Int64 => "a 64-bit integer or pointer",
            PtxType::F32 => "an f32",
            PtxType::F64 => "an f64",
        }
    }
}

/// One parameter of a kernel: its Rust name and how it is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Param {
    pub name: &'static str,
    pub kind: ParamKind,
}

/// A kernel's entry name and parameters, as written in Rust.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelSignature {
    pub name: &'static str,
    pub params: &'static [Param],
}

impl KernelSignature {
    /// The PTX parameters of the entry, in order, each with the Rust parameter and part
    /// it carries.
    pub fn ptx_params(&self) -> impl Iterator<Item = (&Param, PtxPart, PtxType)> + '_ {
        self.params.iter().flat_map(|param| {
            param
                .kind
                .ptx()
                .iter()
                .map(move |&(part, ty)| (param, part, ty))
        })
    }
}

impl fmt::Display for KernelSignature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.name)?;
        for (i, p) in self.params.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}: {}", p.name, p.kind)?;
        }
        f.write_str(")")
    }
}

/// A kernel as the host sees it: written by `#[kernel]` as a unit struct named like the
/// kernel, when the kernel crate is compiled for the host.
pub trait Kernel {
    /// The entry point's name and parameters.
    const SIGNATURE: KernelSignature;
    /// The parameters as marker types, a tuple in order: [`Slice<T>`] for `&[T]`,
    /// [`SliceMut<T>`] for `&mut [T]`, [`ConstPtr<T>`] and [`MutPtr<T>`] for pointers,
    /// the scalar type itself for a value. A launcher accepts exactly the host values
    /// that match them, so a wrong argument does not compile.
    type Args;
}

/// Marks a `&[T]` parameter in [`Kernel::Args`].
pub struct Slice<T>(PhantomData<T>);
/// Marks a `&mut [T]` parameter in [`Kernel::Args`].
pub struct SliceMut<T>(PhantomData<T>);
/// Marks a `*const T` parameter in [`Kernel::Args`].
pub struct ConstPtr<T>(PhantomData<T>);
/// Marks a `*mut T` parameter in [`Kernel::Args`].
pub struct MutPtr<T>(PhantomData<T>);
