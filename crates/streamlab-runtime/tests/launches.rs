//! The runtime's soundness on a GPU: a launch whose arguments break its kernel's contract
//! is refused before it reaches the GPU and leaves every buffer as it was (for the Rust
//! kernels and their CUDA C++ twins alike), one that keeps it runs and is right, and a new
//! device buffer reads back zeroed; registered host memory, stream-ordered allocation and
//! a memset on a stream do what they say; the GPU's clocks read through NVML. Skips,
//! saying so, where there is no NVIDIA driver (as
//! on CI); on a GPU machine it runs from `cargo xtask dist`'s `run-tests.sh`.
use streamlab_runtime::baseline::{self, Availability};
use streamlab_runtime::{Gpu, Kernels, RuntimeError, Shape, driver_present};

fn gpu() -> Option<Gpu> {
    if !driver_present() {
        eprintln!("skipped: no NVIDIA driver on this machine, so launches cannot be tested here");
        return None;
    }
    Some(Gpu::open(0).expect("GPU 0 opens"))
}

/// Launch `kernels`' AddKernel with an input shorter than its output: refused, the output
/// untouched; then with equal lengths: every element its sum.
fn add_kernel_keeps_its_contract(gpu: &Gpu, kernels: &Kernels) {
    let stream = gpu.streams(1).unwrap().remove(0);
    let (n, short) = (4096usize, 1000usize);
    let mut host = gpu.pinned(n, 0i32).unwrap();
    for (i, x) in host.as_mut_slice().unwrap().iter_mut().enumerate() {
        *x = i as i32 * 3;
    }
    let mut input = gpu.alloc::<i32>(n).unwrap();
    stream.htod(&mut input, 0, &host, 0..n).unwrap();
    let mut out = gpu.alloc::<i32>(n).unwrap();
    stream.poison(&mut out).unwrap();
    let shape = Shape::linear(8, 128);
    let err = stream
        .launch(
            &kernels.add_kernel,
            shape,
            (out.all_mut(), input.slice(0..short), 5, 7),
        )
        .unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, RuntimeError::Contract { .. })
            && text.contains("the input holds 1000 elements, fewer than the 4096"),
        "{text}"
    );
    stream.dtoh(&mut host, 0, &out, 0..n).unwrap();
    stream.synchronize().unwrap();
    assert!(
        host.as_slice().unwrap().iter().all(|&x| x == -1),
        "a refused launch wrote its output"
    );
    stream
        .launch(
            &kernels.add_kernel,
            shape,
            (out.all_mut(), input.all(), 5, 7),
        )
        .unwrap();
    stream.dtoh(&mut host, 0, &out, 0..n).unwrap();
    stream.synchronize().unwrap();
    for (i, &x) in host.as_slice().unwrap().iter().enumerate() {
        assert_eq!(x, i as i32 * 3 + 35, "element {i}");
    }
}

#[test]
fn a_launch_that_breaks_its_kernels_contract_is_refused_and_touches_nothing() {
    let Some(gpu) = gpu() else { return };
    add_kernel_keeps_its_contract(&gpu, gpu.kernels());
    match baseline::load(&gpu).expect("the CUDA C++ twins compile") {
        Availability::Ready(cuda) => add_kernel_keeps_its_contract(&gpu, &cuda.kernels),
        Availability::NvrtcMissing(note) => eprintln!("skipped the CUDA C++ twins: {note}"),
    }
}

#[test]
fn a_new_device_buffer_reads_back_zeroed() {
    let Some(gpu) = gpu() else { return };
    let stream = gpu.streams(1).unwrap().remove(0);
    let n = 1 << 20;
    let buffer = gpu.alloc::<u32>(n).unwrap();
    let mut host = gpu.pinned(n, 7u32).unwrap();
    stream.dtoh(&mut host, 0, &buffer, 0..n).unwrap();
    stream.synchronize().unwrap();
    assert!(host.as_slice().unwrap().iter().all(|&x| x == 0));
}

/// NVML, which the driver ships, reads the GPU's clocks: each within its maximum, the
/// maximum a real clock.
#[test]
fn the_gpus_clocks_read_through_nvml() {
    let Some(gpu) = gpu() else { return };
    let c = streamlab_runtime::clocks::read(&gpu).expect("NVML reads the clocks");
    assert!(c.sm_max_mhz > 100 && c.sm_mhz <= c.sm_max_mhz, "{c:?}");
    assert!(
        c.memory_max_mhz > 100 && c.memory_mhz <= c.memory_max_mhz,
        "{c:?}"
    );
}

/// A user's `Vec` registered with the driver copies as pinned memory does, and comes back
/// whole; a memset on a stream and stream-ordered allocations from both kinds of pool run
/// in the stream's order; an event's query answers without waiting.
#[test]
fn registered_memory_stream_ordered_allocation_and_a_memset_on_a_stream_work() {
    let Some(gpu) = gpu() else { return };
    let stream = gpu.streams(1).unwrap().remove(0);
    let n = 1 << 20;
    let values: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(7919)).collect();
    let registered = gpu.register(values.clone()).unwrap();
    let mut device = gpu.alloc::<i32>(n).unwrap();
    stream.htod(&mut device, 0, &registered, 0..n).unwrap();
    let mut back = gpu.pinned(n, 0i32).unwrap();
    stream.dtoh(&mut back, 0, &device, 0..n).unwrap();
    stream.synchronize().unwrap();
    assert!(
        back.as_slice().unwrap() == values,
        "the registered copy differs"
    );
    assert_eq!(registered.as_slice().unwrap(), &values[..]);
    drop(registered);
    for keep in [false, true] {
        let pool = gpu.mem_pool(keep).unwrap();
        for bytes in [0, 4 << 20] {
            stream.alloc_and_free(&pool, bytes).unwrap();
        }
    }
    let mut words = gpu.alloc::<u32>(n).unwrap();
    stream.memset_d32(&mut words, 0xdead_beef).unwrap();
    let done = gpu.event().unwrap();
    stream.record(&done).unwrap();
    let mut host = gpu.pinned(n, 0u32).unwrap();
    stream.dtoh(&mut host, 0, &words, 0..n).unwrap();
    stream.synchronize().unwrap();
    assert!(done.query().unwrap(), "a passed event reads as passed");
    assert!(host.as_slice().unwrap().iter().all(|&x| x == 0xdead_beef));
}
