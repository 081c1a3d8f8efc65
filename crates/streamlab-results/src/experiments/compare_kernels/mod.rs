//! compare-kernels: each Rust kernel against its CUDA C++ twin, in every form (plain, safe
//! and tuned), each side the fastest of a few honest spellings of the form's algorithm,
//! at the write-ups' shapes, at shapes with tails and at shapes drawn from a seed; warm
//! and cold where the inputs fit in L2. What is saved is here (the GPU side picks the
//! shapes a run times), [`analysis`] derives the ratios (best Rust over best C++, the
//! median and the worst over the shapes, what safety costs), and [`present`] shows them.

use crate::card::KernelCard;
use crate::experiments::prelude::*;
use crate::saved::{CudaBuild, Verification};

pub mod analysis;
pub mod present;
pub mod tables;

/// The compare-kernels experiment.
pub struct CompareKernels;

/// Where a shape came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// The run's parameters: the write-ups' shapes unless told otherwise.
    #[default]
    Defaults,
    /// The sweep of shapes with tails.
    Tail,
    /// Drawn from the run's seed.
    Random,
}

impl Origin {
    pub fn label(self) -> &'static str {
        match self {
            Origin::Defaults => "write-ups'",
            Origin::Tail => "tail",
            Origin::Random => "drawn",
        }
    }
}

/// What to compare; shapes are the experiments' defaults.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Timed launches of each spelling at the write-ups' shapes (matmul's shared among its
    /// placements).
    #[arg(long, default_value_t = 60, value_parser = crate::saved::count(1_000_000))]
    pub launches: usize,
    /// Untimed launches of each spelling before timing.
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// matmul's inner dimension (A is 32 × aligned, B aligned × 16; at most 2^24).
    #[arg(long, default_value_t = 131_072,
          value_parser = clap::value_parser!(u32).range(1..=1 << 24))]
    pub aligned: u32,
    /// matmul's second case: a SQUARE × SQUARE output, one thread per cell, enough threads
    /// to fill the GPU (the first case, the wiki's 32 × 16, is latency-bound).
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..=32_768))]
    // 0 (and `square_inner` 0) in runs from before this case.
    #[serde(default)]
    pub square: u32,
    /// The square case's inner dimension (at most 2^24).
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u32).range(1..=1 << 24))]
    #[serde(default)]
    pub square_inner: u32,
    /// add_kernel's array in M ints (2^20 ints each).
    #[arg(long, default_value_t = 128, value_parser = crate::saved::count(4096))]
    pub add_size: usize,
    /// add_kernel's cycles, one case each, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "256,0",
          value_parser = clap::value_parser!(i32).range(0..))]
    pub add_cycles: Vec<i32>,
    /// sincos' array in floats.
    #[arg(long, default_value_t = 1 << 25, value_parser = crate::saved::count(u32::MAX as u64))]
    pub sincos_elements: usize,
    /// Places in GPU memory matmul's inputs are timed at (warm), visited in order and back
    /// again, --launches shared among the visits: placement k puts A k × 2 MiB into one
    /// allocation and B (PLACEMENTS − 1 − k) × 2 MiB after A's span (what a latency-bound
    /// kernel takes can depend on where its inputs lie).
    #[arg(long, default_value_t = 4, value_parser = crate::saved::count(64))]
    // 1 in runs from before placements.
    #[serde(default = "one")]
    pub placements: usize,
    /// Timed launches of each spelling at each shape of the sweep (shapes with tails and
    /// shapes drawn from --seed); 0 times the write-ups' shapes alone.
    #[arg(long, default_value_t = 15,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1_000_000))]
    // 0 in runs from before the sweep.
    #[serde(default)]
    pub sweep_launches: usize,
    /// Shapes drawn at random for each kernel (from --seed), beside the sweep's tails.
    #[arg(long, default_value_t = 2,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=64))]
    #[serde(default)]
    pub random_shapes: usize,
    /// The seed of the drawn shapes and of every input (default: from the clock; the run
    /// prints and records the one it used, and the same seed draws the same shapes).
    #[arg(long)]
    pub seed: Option<u64>,
}

fn one<T: From<u8>>() -> T {
    T::from(1)
}

crate::defaults_from_clap!(Params);

impl crate::saved::Params for Params {
    const QUICK: &'static str = "--launches 20 --warmup 2 --aligned 8192 --square 128 \
        --square-inner 512 --add-size 16 --sincos-elements 4194304 \
        --placements 2 --sweep-launches 5 --random-shapes 1";

    fn validate(&self) -> Result<(), UsageError> {
        let (launches, placements, needed) = (self.launches, self.placements, 2 * self.placements);
        if placements > 1 && launches < needed {
            return Err(UsageError::new(format!(
                "--launches {launches} is too few for --placements {placements}: each placement is visited twice, with a launch or more each; give --launches {needed} or more, or fewer --placements"
            )));
        }
        Ok(())
    }
}

/// One kernel case in one form at one shape: every spelling of the form in each language,
/// timed from launches alternated on one stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelCase {
    /// The kernel, e.g. "add_kernel".
    pub kernel: String,
    /// The shape within the kernel, e.g. "cycles 256" (empty where there is one).
    pub case: String,
    /// `None` for one code in every form: `fill`'s plain and tuned forms (its safe form
    /// is a case of its own), and the math library kernels.
    pub form: Option<KernelForm>,
    /// The launch shape and sizes, in words.
    pub launch: String,
    /// Runs from before spellings: the one Rust and the one CUDA C++ entry's launches
    /// (later runs keep every spelling's in [`KernelCase::spellings`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rust: Option<Series>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda: Option<Series>,
    /// Every spelling's output against its reference.
    pub verification: Verification,
    /// Runs from before spellings: the Rust and the CUDA C++ entry's cards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cards: Option<[KernelCard; 2]>,
    /// For a math library kernel, the Rust and the CUDA C++ output's largest error in
    /// units in the last place against an f64 reference.
    pub max_ulps: Option<[f64; 2]>,
    /// Where the case was timed at several places in memory ([`Params::placements`]):
    /// each place and its visits; each spelling's launches there are its
    /// [`SpellingRun::by_place`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placements: Vec<Placement>,
    /// Every spelling timed, Rust's and CUDA C++'s (none in runs from before spellings).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spellings: Vec<SpellingRun>,
    /// Whether the inputs were re-read warm from launch to launch or cold (the L2 cache
    /// flushed before each launch); none in runs from before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<Cache>,
    /// The bytes of input the kernel reads (none in runs from before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_bytes: Option<u64>,
    /// Where the shape came from.
    #[serde(default)]
    pub origin: Origin,
    /// Launches run back to back between each sample's two events (its time is their mean
    /// per launch): more than one where one launch is too short for its events to time it
    /// ([`BATCHED_SAMPLE_MS`]); one in runs from before.
    #[serde(default = "one", skip_serializing_if = "is_one_launch")]
    pub launches_per_sample: u32,
}

/// What each sample of a kernel shorter than this is timed over, at the least: its launches
/// run back to back, as many as make it up.
pub const BATCHED_SAMPLE_MS: f64 = 0.2;

fn is_one_launch(n: &u32) -> bool {
    *n == 1
}

/// One spelling of a case's form in one language: an entry of its module, its launches
/// and its check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpellingRun {
    pub language: KernelSet,
    /// The entry's name in its module.
    pub entry: String,
    /// What the spelling does, in words.
    pub how: String,
    pub times: Series,
    /// Its launches at each of the case's placements, in order (empty at one place).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_place: Vec<Series>,
    /// The driver's figures at the launch shape and the PTX's counts.
    pub card: Option<KernelCard>,
    /// Its output on inputs whose elements all differ, against its reference.
    pub verification: Verification,
}

/// How a case's inputs stood in the L2 cache while it was timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cache {
    /// Launched back to back on the same inputs: what of them fits stays in L2.
    Warm,
    /// L2 flushed (a buffer twice its size written) before each launch.
    Cold,
}

impl Cache {
    pub fn label(self) -> &'static str {
        match self {
            Cache::Warm => "warm",
            Cache::Cold => "cold",
        }
    }
}

/// One place in GPU memory a case's inputs were timed at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// Each input's start, in bytes from the start of the one allocation holding them.
    pub offsets_bytes: Vec<usize>,
    /// How many times the place was visited, its launches split among the visits.
    pub visits: usize,
    /// Runs from before spellings: the one Rust and CUDA C++ entry's launches there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rust: Option<Series>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda: Option<Series>,
}

/// Result of compare-kernels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelComparison {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    pub cuda_build: CudaBuild,
    /// The seed the drawn shapes and the inputs came from (none in runs from before).
    pub seed: Option<u64>,
    pub cases: Vec<KernelCase>,
}

/// The kernels every comparison covers, in table order.
pub const KERNELS: [&str; 4] = ["fill", "matmul", "add_kernel", "sincos"];

/// The kernels whose two sides call different math libraries (the `libm` crate in Rust,
/// CUDA's libdevice in C++): their ratios compare the libraries as much as the languages.
pub const LIBRARY_KERNELS: [&str; 4] = ["sincos", "sinf", "cosf", "sincosf"];

impl Saved for KernelComparison {
    experiment::saved_fields!(Params);
}

impl Experiment for CompareKernels {
    const NAME: &'static str = "compare-kernels";
    const WORDS: &'static str = include_str!("../compare_kernels.md");
    type Params = Params;
    type Result = KernelComparison;
    type Derived = analysis::ComparisonAnalysis;

    fn rows(c: &KernelComparison, derived: &Self::Derived) -> Vec<MeasuredRow> {
        tables::columns(c).measured_rows(&derived.cases)
    }

    fn derive(c: &KernelComparison, _checks: &[TraceChecks]) -> Self::Derived {
        analysis::analyze(c)
    }

    fn tables(c: &Self::Result, derived: &Self::Derived, _cuda: Option<With<Self>>) -> Vec<Table> {
        tables::tables(c, derived)
    }

    fn csv(c: &KernelComparison, derived: &Self::Derived) -> Vec<Csv> {
        tables::csv(c, derived)
    }

    fn words(c: &KernelComparison, a: &Self::Derived) -> Value {
        present::words(c, a)
    }

    fn figures(_c: &KernelComparison, a: &Self::Derived) -> Vec<FigureModel> {
        present::figures(a)
    }

    const FACTS: &'static [&'static str] = present::FACTS;
    const QUESTION: Option<Question> = Some(Question::RustCost);
    fn summary(_c: &KernelComparison, derived: &Self::Derived) -> Summary {
        present::summary(derived)
    }
}

#[cfg(test)]
mod tests;
