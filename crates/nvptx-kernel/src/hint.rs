//! [`opaque`]: a value hidden from the optimizer but kept in a register, the safe spelling
//! of CUDA C++'s `asm volatile("" : "+r"(value))`.
//!
//! `core::hint::black_box` hides a value too, but on the GPU it takes the value's address,
//! so the value goes through a stack slot in local memory each time. Make-work loops (the
//! CUDA Handbook's AddKernel) need the value hidden so the loop is not folded into one
//! multiply, and kept in a register so each step costs one add.
//!
//! ```
//! // Not folded into `value + 3 * 2`: three adds, each result opaque.
//! let mut value = 1i32;
//! for _ in 0..3 {
//!     value = nvptx_kernel::hint::opaque(value + 2);
//! }
//! assert_eq!(value, 7);
//! ```

/// The identity, hidden from the optimizer. On the GPU an inline-assembly block that is
/// only a comment naming the register claims to rewrite it; on the host,
/// `core::hint::black_box`.
#[inline(always)]
pub fn opaque<T: InRegister>(value: T) -> T {
    value.opaque()
}

/// The values [`opaque`] takes: 32- and 64-bit integers and floats, each one register.
pub trait InRegister: Copy + sealed::Sealed {
    #[doc(hidden)]
    fn opaque(self) -> Self;
}

mod sealed {
    pub trait Sealed {}
}

/// `$t` through the register class `$class` as the unsigned `$bits` of the same width.
macro_rules! in_register {
    ($($t:ty => $bits:ty, $class:ident;)*) => {$(
        impl sealed::Sealed for $t {}
        impl InRegister for $t {
            #[inline(always)]
            fn opaque(self) -> $t {
                #[cfg(target_arch = "nvptx64")]
                {
                    let mut bits = <$bits>::from_ne_bytes(self.to_ne_bytes());
                    // SAFETY: the assembly is a comment: it reads and writes no memory, no
                    // stack and no register but `bits`, which it leaves as it was.
                    unsafe {
                        core::arch::asm!("// {0}", inout($class) bits, options(nomem, nostack, preserves_flags))
                    };
                    <$t>::from_ne_bytes(bits.to_ne_bytes())
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    core::hint::black_box(self)
                }
            }
        }
    )*};
}

in_register! {
    i32 => u32, reg32;
    u32 => u32, reg32;
    f32 => u32, reg32;
    i64 => u64, reg64;
    u64 => u64, reg64;
    f64 => u64, reg64;
}
