//! A kernel's card: why its time is what it is, with no profiler. What the driver says
//! after loading the module (registers per thread, local memory, static shared memory,
//! the largest block, and the theoretical occupancy at the launch shape), and what the
//! PTX text says ([`PtxCounts`], counted by `nvptx_builder::ptx::counts` over the entry
//! and every function it calls).
use serde::{Deserialize, Serialize};

pub use nvptx_builder::ptx::PtxCounts;

/// What the driver reports for one loaded kernel entry (`cuFuncGetAttribute`,
/// `cuOccupancyMaxActiveBlocksPerMultiprocessor`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DriverCard {
    pub registers: i32,
    /// Local memory per thread: spills and stack.
    pub local_bytes: i32,
    pub static_shared_bytes: i32,
    pub max_threads_per_block: i32,
    /// Threads per block of the launch the card describes.
    pub block_threads: u32,
    /// Resident warps per SM at that block size over the SM's most: 0 to 1.
    pub occupancy: f64,
}

/// One kernel's card in one language.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct KernelCard {
    pub driver: DriverCard,
    pub ptx: PtxCounts,
}

/// Theoretical occupancy: `blocks` resident blocks of `block_threads` threads over the
/// SM's `max_threads_per_sm`, in whole warps.
pub fn occupancy(blocks: i32, block_threads: u32, max_threads_per_sm: i32) -> f64 {
    let warps = |threads: u32| threads.div_ceil(32);
    let resident = blocks.max(0) as u32 * warps(block_threads);
    f64::from(resident) / f64::from(warps(max_threads_per_sm.max(1) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occupancy_is_resident_warps_over_the_sms_most() {
        assert_eq!(occupancy(2, 1024, 2048), 1.0);
        assert_eq!(occupancy(8, 100, 2048), 8.0 * 4.0 / 64.0);
        assert_eq!(occupancy(0, 256, 2048), 0.0);
    }
}
