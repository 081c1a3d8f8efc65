//! The registry: every experiment, once, in the order `run-all` runs them and the
//! report shows them. Adding an experiment is its module here, its file of the same name
//! on the GPU side (`crates/streamlab/src/experiments/`) and its line below: the GPU
//! side's modules, the command line, `run-all`, the report and the tests follow it.
use crate::experiment::Experiment;

/// Something done once per experiment, in the registry's order.
pub trait Visit {
    fn visit<E: Experiment>(&mut self);
}

macro_rules! registry {
    ($($module:ident :: $experiment:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Visit every experiment, in the registry's order.
        pub fn each(visitor: &mut impl Visit) {
            $(visitor.visit::<$module::$experiment>();)*
        }
    };
}

/// Hand the registry's list, `module::Experiment, …` in order, to the macro named (the
/// GPU side's `run-all` is built from it).
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
            kernel_concurrency::KernelConcurrency,
            launch_overhead::LaunchOverhead,
            graph_overlap::GraphOverlap,
            overlap_map::OverlapMap,
            mapped::Mapped,
            peer_copy::PeerCopy,
            multi_gpu_overlap::MultiGpuOverlap,
            overlap::Overlap,
        }
    };
}

registered!(registry);
