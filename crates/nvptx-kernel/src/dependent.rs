//! Programmatic dependent launch (Hopper and later, PTX `griddepcontrol`): a kernel
//! launched with programmatic stream serialization may start before the kernel ahead of
//! it on its stream has finished, and these two calls say where it may. GPU only.
//!
//! A dependent kernel calls [`wait`] before it touches anything the kernel ahead of it
//! writes; the kernel ahead calls [`launch_dependents`] once the kernel behind it may
//! start (its blocks then run up to their [`wait`]). Launched without the attribute, a
//! kernel's [`wait`] returns at once (its stream already ran the kernel ahead to the end)
//! and [`launch_dependents`] does nothing.
use core::arch::asm;

/// `griddepcontrol.wait`: block until every kernel this one depends on has finished and
/// its memory writes are visible.
#[inline(always)]
pub fn wait() {
    // SAFETY: a wait touches no memory of this thread's; declared as one that may (no
    // `nomem`), it keeps the compiler from moving loads and stores across it.
    unsafe { asm!("griddepcontrol.wait;", options(nostack)) };
}

/// `griddepcontrol.launch_dependents`: the kernel behind this one on its stream may be
/// scheduled once every block of this one has called this (or exited).
#[inline(always)]
pub fn launch_dependents() {
    // SAFETY: a hint to the scheduler; it touches no memory.
    unsafe { asm!("griddepcontrol.launch_dependents;", options(nostack)) };
}
