//! The parameters' shared parts: what every experiment's parameters are ([`Params`]),
//! the size sweep, the repeats option, defaults stated once in clap's attributes, and
//! the usage error that refuses what cannot work.
use serde::{Deserialize, Serialize};

/// Array sizes as powers of two, a factor of 2^step apart.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct SizeSweep {
    /// Smallest array, as a power of two (floats).
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u32).range(1..=31))]
    pub min_exponent: u32,
    /// Largest array, as a power of two (floats).
    #[arg(long, default_value_t = 28, value_parser = clap::value_parser!(u32).range(1..=31))]
    pub max_exponent: u32,
    /// Exponent step (2: a factor of 4 per size).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=8))]
    pub exponent_step: u32,
}

crate::defaults_from_clap!(SizeSweep);

impl SizeSweep {
    pub fn validate(&self) -> Result<(), UsageError> {
        if self.min_exponent > self.max_exponent {
            return Err(UsageError::new(format!(
                "--min-exponent {} exceeds --max-exponent {}",
                self.min_exponent, self.max_exponent
            )));
        }
        Ok(())
    }

    /// The exponents, ascending.
    pub fn exponents(&self) -> Vec<u32> {
        (self.min_exponent..=self.max_exponent)
            .step_by(self.exponent_step as usize)
            .collect()
    }
}

/// How many timed samples an experiment takes of each measurement (`--repeats`), `N` by
/// default; an argument group its parameters flatten (a result's JSON keeps `repeats` at
/// the parameters' top level). Its `clap::Args` is written out, not derived: the derive
/// keeps a default's text in a `static`, which every `N` would share.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Repeats<const N: usize> {
    pub repeats: usize,
}

impl<const N: usize> clap::FromArgMatches for Repeats<N> {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let repeats = matches.get_one::<usize>("repeats").copied().unwrap_or(N);
        Ok(Repeats { repeats })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        if let Some(&repeats) = matches.get_one::<usize>("repeats") {
            self.repeats = repeats;
        }
        Ok(())
    }
}

impl<const N: usize> clap::Args for Repeats<N> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.arg(
            clap::Arg::new("repeats")
                .long("repeats")
                .value_name("REPEATS")
                .help("Timed samples of each measurement (more where an experiment's noise asks for them)")
                .default_value(N.to_string())
                .value_parser(count(1_000_000)),
        )
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl<const N: usize> Default for Repeats<N> {
    fn default() -> Repeats<N> {
        Repeats { repeats: N }
    }
}

/// The parameters `P` as the command line gives them when no option is given: each
/// parameter struct's `Default` (`defaults_from_clap!`), its defaults stated once.
pub fn clap_defaults<P: clap::Args + clap::FromArgMatches>() -> P {
    clap_parse("")
}

/// `Default` for the parameters `$params`: the command line's defaults ([`clap_defaults`]).
#[macro_export]
macro_rules! defaults_from_clap {
    ($params:ty) => {
        impl Default for $params {
            fn default() -> $params {
                $crate::saved::clap_defaults()
            }
        }
    };
}

/// A count from 1 up to `max`: an option's value parser.
pub fn count(max: u64) -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..=max)
}

/// `--sample-ms` as the sweeps take it: a positive number of milliseconds.
pub fn check_sample_ms(ms: f64) -> Result<(), UsageError> {
    match ms.is_finite() && ms > 0.0 {
        true => Ok(()),
        false => Err(UsageError::new(
            "--sample-ms must be a positive number of milliseconds",
        )),
    }
}

/// The parameters `P` as the command line gives them for the options `args`.
fn clap_parse<P: clap::Args + clap::FromArgMatches>(args: &str) -> P {
    let command = P::augment_args(clap::Command::new("parameters").no_binary_name(true));
    let matches = command
        .try_get_matches_from(args.split_whitespace())
        .expect("every parameter has a default, and the options given parse");
    P::from_arg_matches(&matches).expect("the options given parse")
}

/// An experiment's parameters: what clap parses and the JSON records.
pub trait Params:
    clap::Args
    + clap::FromArgMatches
    + Serialize
    + serde::de::DeserializeOwned
    + Clone
    + std::fmt::Debug
    + Default
    + PartialEq
{
    /// The options of a fast look (`--quick`), as typed on its command line (split at
    /// spaces): small sizes; explicit options still win.
    const QUICK: &'static str;
    /// What `--quick` measures: the command line's defaults with [`Params::QUICK`].
    fn quick() -> Self {
        clap_parse(Self::QUICK)
    }
    /// The options `run-all` gives the experiment, as typed on its command line: none,
    /// the write-up's defaults, unless said otherwise. `run-all --help` and the report's
    /// parameters show them.
    const RUN_ALL: &'static str = "";
    /// What `run-all` measures: the command line's defaults with [`Params::RUN_ALL`].
    fn run_all() -> Self {
        clap_parse(Self::RUN_ALL)
    }
    /// Fit the parameters to what they can measure, saying what changed (sincos-overlap
    /// drops stream counts above its element count: a stream needs an element); runs
    /// before [`Params::validate`].
    fn fit(&mut self) -> Option<String> {
        None
    }
    /// Refuse what cannot work, saying what to do instead.
    fn validate(&self) -> Result<(), UsageError> {
        Ok(())
    }
}

/// The most streams an experiment creates. Larger counts are refused before anything is
/// created: the driver's own limit depends on free memory, and no GPU runs more than 128
/// kernels at once.
pub const MAX_STREAMS: usize = 1024;

/// Parameters that cannot work, with what to do instead (exit code 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(String);

impl UsageError {
    pub fn new(message: impl Into<String>) -> UsageError {
        UsageError(message.into())
    }
}

#[cfg(test)]
mod tests {
    use super::{Params, Repeats, clap_defaults, clap_parse};

    /// Every experiment's `--quick` options parse, and each changes what it measures.
    #[test]
    fn each_experiments_quick_options_parse() {
        macro_rules! check {
            ($($module:ident :: $experiment:ident),* $(,)?) => {$({
                type P = crate::experiments::$module::Params;
                assert_ne!(P::quick(), P::default(), stringify!($module));
            })*};
        }
        crate::registered!(check);
    }

    #[test]
    fn each_experiments_repeats_default_is_its_own() {
        let all = [
            clap_defaults::<Repeats<5>>().repeats,
            clap_defaults::<Repeats<20>>().repeats,
            clap_defaults::<Repeats<11>>().repeats,
            clap_defaults::<Repeats<5>>().repeats,
            clap_parse::<Repeats<5>>("--repeats 7").repeats,
        ];
        assert_eq!(all, [5, 20, 11, 5, 7]);
    }
}
