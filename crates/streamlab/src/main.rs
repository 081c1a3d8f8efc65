//! The `streamlab` command: parse, run, and turn any failure into one line and an exit
//! code (2 for usage errors, 1 for everything else).
fn main() {
    // Give each of up to 32 streams its own hardware work queue. With the driver's default
    // of 8, streams k and k + 8 share one, and an event recorded on one stalls the other.
    if std::env::var_os("CUDA_DEVICE_MAX_CONNECTIONS").is_none() {
        // SAFETY: no other thread exists yet.
        unsafe { std::env::set_var("CUDA_DEVICE_MAX_CONNECTIONS", "32") };
    }
    let cli = match streamlab::cli::parse(std::env::args_os()) {
        Ok(cli) => cli,
        Err(err) => err.exit(),
    };
    if let Err(err) = streamlab::app::run(cli) {
        eprintln!("error: {err}");
        std::process::exit(err.exit_code());
    }
}
