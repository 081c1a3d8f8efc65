//! own-kernel: writes the PTX of the kernel crate in `kernels/` (built and checked by
//! `build.rs`) to a file for `streamlab overlap --ptx FILE --kernel NAME`.
//!
//! Usage: `own-kernel [PTX_FILE]` (default `own-kernel.ptx`). Prints one line: the file
//! and the kernels in it.
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};

/// The kernel crate, compiled to PTX by `build.rs`.
static PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

const DEFAULT_FILE: &str = "own-kernel.ptx";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("own-kernel: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let mut args = std::env::args_os().skip(1);
    let file = PathBuf::from(args.next().unwrap_or_else(|| DEFAULT_FILE.into()));
    if args.next().is_some() || file.to_string_lossy().starts_with('-') {
        bail!("usage: own-kernel [PTX_FILE] (default {DEFAULT_FILE})");
    }
    std::fs::write(&file, PTX).with_context(|| format!("could not write {}", file.display()))?;
    let kernels: Vec<String> = own_kernel_kernels::KERNELS
        .iter()
        .map(ToString::to_string)
        .collect();
    println!(
        "own-kernel: wrote {}: {}",
        file.display(),
        kernels.join(", ")
    );
    Ok(())
}
