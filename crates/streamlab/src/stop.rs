//! Stopping on SIGINT or SIGTERM without losing what was measured.
//!
//! The first signal asks the run to stop after the measurement in progress: experiments
//! look at [`requested`] between measurements, return what they measured marked
//! incomplete, and the run writes its files, marks `summary.json` `"complete": false`
//! and exits with 128 + the signal's number (130 for SIGINT, 143 for SIGTERM). A second
//! signal exits at once.
use std::sync::atomic::{AtomicI32, Ordering};

use signal_hook::consts::{SIGINT, SIGTERM};

/// The first signal received, 0 while none.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// A signal that asked the run to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signal(i32);

impl Signal {
    pub const INT: Signal = Signal(SIGINT);
    pub const TERM: Signal = Signal(SIGTERM);

    pub fn name(self) -> &'static str {
        match self.0 {
            SIGINT => "SIGINT",
            SIGTERM => "SIGTERM",
            _ => "a signal",
        }
    }

    /// The exit code a shell expects after this signal: 128 + its number.
    pub fn exit_code(self) -> i32 {
        128 + self.0
    }
}

/// Handle SIGINT and SIGTERM from now on (module header).
pub fn install() -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::spawn(move || {
        for number in signals.forever() {
            if SIGNAL.swap(number, Ordering::SeqCst) != 0 {
                std::process::exit(Signal(number).exit_code());
            }
            eprintln!(
                "\n{}: stopping after the current measurement (send it again to stop at once)",
                Signal(number).name()
            );
        }
    });
    Ok(())
}

/// The signal that asked the run to stop, if one did.
pub fn requested() -> Option<Signal> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        number => Some(Signal(number)),
    }
}

/// Ask the run to stop as `signal` would (for tests of the stopping paths).
pub fn request(signal: Signal) {
    SIGNAL.store(signal.0, Ordering::SeqCst);
}
