//! The registry: every experiment, once, in the order `run-all` runs them and the
//! report shows them ([`ALL`]). Adding an experiment is its module here, its file of the
//! same name on the GPU side (`crates/streamlab/src/experiments/`) and its line in
//! `registered!`: the GPU side's table, the command line, `run-all`, the report and the
//! tests follow it.
pub use crate::held::{Entry, Registered};

/// The registry's experiment named `name`.
pub fn named(name: &str) -> Option<&'static dyn Registered> {
    ALL.iter().copied().find(|e| e.name() == name)
}

pub mod prelude;

macro_rules! registry {
    ($($module:ident :: $experiment:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every experiment, in the registry's order.
        pub static ALL: &[&dyn Registered] = &[$(&Entry::<$module::$experiment>::NEW),*];
    };
}

/// Hand the registry's list, `module::Experiment, …` in order, to the macro named (the
/// GPU side's table is built from it).
#[macro_export]
macro_rules! registered {
    ($($callback:tt)*) => {
        $($callback)*! {
            bounds::Bounds,
            compare_kernels::CompareKernels,
            sincos_overlap::SincosOverlap,
            matmul_streams::MatmulStreams,
            memcpy_kernel::MemcpyKernel,
            concurrency_breaks::ConcurrencyBreaks,
            stream_priorities::StreamPriorities,
            dependent_launch::DependentLaunch,
            kernel_concurrency::KernelConcurrency,
            launch_overhead::LaunchOverhead,
            graph_overlap::GraphOverlap,
            overlap_map::OverlapMap,
            mapped::Mapped,
            peer_copy::PeerCopy,
            multi_gpu_overlap::MultiGpuOverlap,
            allreduce_overlap::AllreduceOverlap,
            overlap::Overlap,
        }
    };
}

registered!(registry);
