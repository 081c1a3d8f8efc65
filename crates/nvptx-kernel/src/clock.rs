//! The GPU's clocks, for timing inside a kernel: [`globaltimer`] in nanoseconds, shared
//! by the whole GPU, and [`clock64`] in cycles of the thread's SM. GPU only.
//!
//! Each read is an `asm!` block the compiler will neither merge with another read nor
//! drop, but it declares no memory access, so loads and stores may move across it: put
//! the work being timed in a data dependency or behind a barrier when order matters.
use core::arch::asm;

/// The GPU's global timer (`%globaltimer`): nanoseconds since an unspecified start,
/// the same clock on every SM, so readings from different blocks compare.
///
/// Its update interval is hardware-specific: about 1 µs on recent GPUs, 32 ns on some,
/// so short intervals measure as 0 or as one tick.
#[inline(always)]
pub fn globaltimer() -> u64 {
    let ns: u64;
    // SAFETY: reading a special register touches no memory and no stack.
    unsafe { asm!("mov.u64 {}, %globaltimer;", out(reg64) ns, options(nomem, nostack)) };
    ns
}

/// The SM's 64-bit cycle counter (`%clock64`): counts the cycles of the SM running the
/// thread, at its current clock rate. Counters of different SMs are not synchronized:
/// compare only readings taken by the same thread (or block).
#[inline(always)]
pub fn clock64() -> u64 {
    let cycles: u64;
    // SAFETY: as above.
    unsafe { asm!("mov.u64 {}, %clock64;", out(reg64) cycles, options(nomem, nostack)) };
    cycles
}
