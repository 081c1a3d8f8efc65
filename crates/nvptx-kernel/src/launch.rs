//! Host values as a kernel's parameters, checked against its [`Kernel::Args`] when the
//! host is compiled: a launcher takes `impl Args<K::Args>`, so an `f32` buffer where the
//! kernel takes `&[i32]`, a read-only view where it takes `&mut [T]`, or a `u64` where it
//! takes a `u32` is a type error, not a fault on the GPU.
//!
//! A host runtime describes its device memory with [`DeviceSlice`] and [`DeviceSliceMut`]
//! (an address, an element count, and the borrow of the buffer they came from), packs
//! the arguments with [`Args::pack`], and hands [`ParamBuffer::pointers`] to
//! `cuLaunchKernel`.
//!
//! [`Kernel::Args`]: crate::Kernel::Args
extern crate alloc;

use alloc::vec::Vec;
use core::ffi::c_void;
use core::marker::PhantomData;

use crate::signature::{ConstPtr, MutPtr, Slice, SliceMut};

/// The parameter values of one launch, one 8-byte slot per PTX parameter (a 4-byte value
/// sits at the start of its slot).
#[derive(Debug, Default, Clone)]
pub struct ParamBuffer {
    slots: Vec<[u8; 8]>,
}

impl ParamBuffer {
    pub fn new() -> ParamBuffer {
        ParamBuffer::default()
    }

    /// Append one PTX parameter's bytes (at most 8).
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        let mut slot = [0u8; 8];
        slot[..bytes.len()].copy_from_slice(bytes);
        self.slots.push(slot);
    }

    /// PTX parameters packed so far.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// One pointer per parameter, into this buffer: the `kernelParams` of
    /// `cuLaunchKernel`. Valid while the buffer is neither moved nor changed.
    pub fn pointers(&mut self) -> Vec<*mut c_void> {
        self.slots
            .iter_mut()
            .map(|slot| slot.as_mut_ptr().cast::<c_void>())
            .collect()
    }
}

/// A value a host may pass for a kernel parameter of kind `P` (a scalar type, or one of
/// the markers [`Slice`], [`SliceMut`], [`ConstPtr`], [`MutPtr`]).
///
/// # Safety
/// `push` must append exactly the PTX parameters kind `P` has (one, or two for a slice:
/// address then element count) with the sizes the kernel reads.
pub unsafe trait Arg<P> {
    fn push(&self, params: &mut ParamBuffer);
}

macro_rules! scalar_args {
    ($($t:ty),*) => {$(
        // SAFETY: one parameter of the scalar's own size.
        unsafe impl Arg<$t> for $t {
            fn push(&self, params: &mut ParamBuffer) {
                params.push_bytes(&self.to_ne_bytes());
            }
        }
    )*};
}
scalar_args!(i32, u32, i64, u64, isize, usize, f32, f64);

/// Device memory a kernel may read: the address of its first element, its element count,
/// and the borrow of the buffer it views.
#[derive(Debug)]
pub struct DeviceSlice<'a, T> {
    addr: u64,
    len: usize,
    _borrow: PhantomData<&'a [T]>,
}

impl<T> Clone for DeviceSlice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for DeviceSlice<'_, T> {}

impl<T> DeviceSlice<'_, T> {
    /// A view of `len` elements of `T` starting at device address `addr`.
    ///
    /// # Safety
    /// The memory must be a live device allocation holding `len` elements of `T` for as
    /// long as the view (and any launch using it) lasts.
    pub unsafe fn from_raw(addr: u64, len: usize) -> Self {
        DeviceSlice {
            addr,
            len,
            _borrow: PhantomData,
        }
    }

    pub fn addr(&self) -> u64 {
        self.addr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Device memory a kernel may write: as [`DeviceSlice`], from an exclusive borrow.
#[derive(Debug)]
pub struct DeviceSliceMut<'a, T> {
    addr: u64,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<T> DeviceSliceMut<'_, T> {
    /// A writable view of `len` elements of `T` starting at device address `addr`.
    ///
    /// # Safety
    /// As [`DeviceSlice::from_raw`], and nothing else may use the memory while the view
    /// lasts.
    pub unsafe fn from_raw(addr: u64, len: usize) -> Self {
        DeviceSliceMut {
            addr,
            len,
            _borrow: PhantomData,
        }
    }

    pub fn addr(&self) -> u64 {
        self.addr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

fn push_slice(params: &mut ParamBuffer, addr: u64, len: usize) {
    params.push_bytes(&addr.to_ne_bytes());
    params.push_bytes(&(len as u64).to_ne_bytes());
}

// SAFETY (all impls below): a slice is its address and its element count as two 64-bit
// parameters; a pointer is its address as one.
unsafe impl<T> Arg<Slice<T>> for DeviceSlice<'_, T> {
    fn push(&self, params: &mut ParamBuffer) {
        push_slice(params, self.addr, self.len);
    }
}

unsafe impl<T> Arg<Slice<T>> for DeviceSliceMut<'_, T> {
    fn push(&self, params: &mut ParamBuffer) {
        push_slice(params, self.addr, self.len);
    }
}

unsafe impl<T> Arg<SliceMut<T>> for DeviceSliceMut<'_, T> {
    fn push(&self, params: &mut ParamBuffer) {
        push_slice(params, self.addr, self.len);
    }
}

unsafe impl<T> Arg<ConstPtr<T>> for DeviceSlice<'_, T> {
    fn push(&self, params: &mut ParamBuffer) {
        params.push_bytes(&self.addr.to_ne_bytes());
    }
}

unsafe impl<T> Arg<ConstPtr<T>> for DeviceSliceMut<'_, T> {
    fn push(&self, params: &mut ParamBuffer) {
        params.push_bytes(&self.addr.to_ne_bytes());
    }
}

unsafe impl<T> Arg<MutPtr<T>> for DeviceSliceMut<'_, T> {
    fn push(&self, params: &mut ParamBuffer) {
        params.push_bytes(&self.addr.to_ne_bytes());
    }
}

/// A tuple of host values matching a kernel's [`Kernel::Args`] element by element.
///
/// [`Kernel::Args`]: crate::Kernel::Args
pub trait Args<A> {
    /// The launch's parameter values, in order.
    fn pack(&self) -> ParamBuffer;
}

impl Args<()> for () {
    fn pack(&self) -> ParamBuffer {
        ParamBuffer::new()
    }
}

macro_rules! tuple_args {
    ($($value:ident : $kind:ident),+) => {
        impl<$($value: Arg<$kind>, $kind),+> Args<($($kind,)+)> for ($($value,)+) {
            #[allow(non_snake_case)]
            fn pack(&self) -> ParamBuffer {
                let ($($value,)+) = self;
                let mut params = ParamBuffer::new();
                $($value.push(&mut params);)+
                params
            }
        }
    };
}
tuple_args!(A0: P0);
tuple_args!(A0: P0, A1: P1);
tuple_args!(A0: P0, A1: P1, A2: P2);
tuple_args!(A0: P0, A1: P1, A2: P2, A3: P3);
tuple_args!(A0: P0, A1: P1, A2: P2, A3: P3, A4: P4);
tuple_args!(A0: P0, A1: P1, A2: P2, A3: P3, A4: P4, A5: P5);
tuple_args!(A0: P0, A1: P1, A2: P2, A3: P3, A4: P4, A5: P5, A6: P6);
tuple_args!(A0: P0, A1: P1, A2: P2, A3: P3, A4: P4, A5: P5, A6: P6, A7: P7);
tuple_args!(A0: P0, A1: P1, A2: P2, A3: P3, A4: P4, A5: P5, A6: P6, A7: P7, A8: P8);
tuple_args!(A0: P0, A1: P1, A2: P2, A3: P3, A4: P4, A5: P5, A6: P6, A7: P7, A8: P8, A9: P9);
