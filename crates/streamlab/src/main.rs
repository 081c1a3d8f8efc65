//! The `streamlab` command: parse, run, and turn any failure into one line and an exit
//! code (2 for usage errors, 128 + the signal after SIGINT or SIGTERM, 1 for everything
//! else).
use std::process::ExitCode;

use anyhow::Context;

fn main() -> ExitCode {
    // NVLink multicast stays off: NCCL reads this when its first communicator is made,
    // and a multicast program can put a shared host's GPUs out of service.
    // SAFETY: no other thread exists yet.
    unsafe { std::env::set_var(streamlab::runtime::nccl::MULTICAST_VARIABLE, "0") };
    // Give each of up to 32 streams its own hardware work queue. With the driver's default
    // of 8, streams k and k + 8 share one, and an event recorded on one stalls the other.
    if std::env::var_os(streamlab::runtime::QUEUES_VARIABLE).is_none() {
        // SAFETY: no other thread exists yet.
        unsafe { std::env::set_var(streamlab::runtime::QUEUES_VARIABLE, "32") };
    }
    // The runtime's news (a trace taken again) is wrapped like every printed line.
    streamlab::runtime::news::print_with(streamlab::progress::note);
    let args: Vec<_> = std::env::args_os().collect();
    let parsed = match streamlab::cli::parse(args.clone()) {
        Ok(parsed) => parsed,
        Err(err) => return usage_error(err, &args),
    };
    if let Err(err) = streamlab::stop::install().context("could not handle SIGINT and SIGTERM") {
        eprintln!("error: {err:#}");
        return ExitCode::FAILURE;
    }
    match streamlab::app::run(parsed) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(err.exit_code().clamp(1, 255) as u8)
        }
    }
}

/// Help and version as clap prints them; any other parse error in one line that names
/// what is wrong and where the help is, and exit code 2.
fn usage_error(err: clap::Error, args: &[std::ffi::OsString]) -> ExitCode {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => err.exit(),
        _ => {
            eprintln!("{}", streamlab::cli::usage_line(&err, args));
            ExitCode::from(2)
        }
    }
}
