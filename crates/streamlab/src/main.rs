//! The `streamlab` command: parse, run, and turn any failure into one line and an exit
//! code (2 for usage errors, 1 for everything else).
fn main() {
    let cli = match streamlab::cli::parse(std::env::args_os()) {
        Ok(cli) => cli,
        Err(err) => err.exit(),
    };
    if let Err(err) = streamlab::app::run(cli) {
        eprintln!("error: {err}");
        std::process::exit(err.exit_code());
    }
}
