//! cust-streams: kernels-rs's `sincos` kernel, `b[j] = a[j] + sqrt(sin(i)² + cos(i)²)`
//! with `i = offset + j`, run as the CUDA-streams blog runs it, by a host written with
//! Rust-CUDA's cust alone: sequential (blocking copies), asynchronous 1 (per stream: copy
//! in, kernel, copy out) and asynchronous 2 (all copies in, all kernels, all copies out)
//! over 4 streams, on 2^25 floats in pinned memory, each timed with events over 1000
//! iterations after 100 warm-ups. The kernel is launched through nvptx-kernel's typed
//! cust launcher, and every element each version wrote is checked against the same math
//! on the CPU (`kernels_rs::element::sincos_element`).
//!
//! Prints the blog's three lines and that every element is correct; exits non-zero with
//! one line on a wrong element or a CUDA error.
use std::error::Error;
use std::ops::Range;
use std::process::ExitCode;

use cust::event::{Event, EventFlags};
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer, LockedBuffer};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags, StreamWaitEventFlags};
use kernels_rs::{element, sincos};
use nvptx_kernel::cust::{self as typed, TypedFunction};

/// Floats in the arrays (the blog's 1 << 25).
const N: usize = 1 << 25;
/// Streams of the asynchronous versions, one chunk each.
const STREAMS: usize = 4;
/// Threads per block (the blog's code uses 1024).
const THREADS: u32 = 1024;
/// Untimed iterations before each version, and timed ones.
const WARMUP: usize = 100;
const ITERATIONS: usize = 1000;

/// kernels-rs compiled to PTX by `build.rs`.
static PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

/// The blog's three versions.
#[derive(Debug, Clone, Copy)]
enum Version {
    Sequential,
    Async1,
    Async2,
}

impl Version {
    const ALL: [Version; 3] = [Version::Sequential, Version::Async1, Version::Async2];

    fn line(self) -> &'static str {
        match self {
            Version::Sequential => "sequential",
            Version::Async1 => "asynchronous 1",
            Version::Async2 => "asynchronous 2",
        }
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("cust-streams: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    // Initialise the driver and make a context on the first GPU; keep it alive.
    let _context = cust::quick_init()?;

    // Load kernels-rs's module and its `sincos` kernel, by the kernel's declaration.
    let module = Module::from_ptx(PTX, &[])?;
    let kernel = TypedFunction::load(&module, sincos)?;

    // The streams. (cust creates every stream blocking: the NULL stream, which the
    // sequential version's blocking copies use, waits for them and they for it.)
    let streams = (0..STREAMS)
        .map(|_| Stream::new(StreamFlags::DEFAULT, None))
        .collect::<Result<Vec<_>, _>>()?;

    // Pinned host arrays (`a` random in [0, 1), `b` poisoned below) and device arrays.
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_nanos() as u64
        | 1;
    let a_values: Vec<f32> = (0..N)
        .map(|_| {
            // xorshift64: enough randomness for an input no two runs share.
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect();
    let mut pipeline = Pipeline {
        kernel,
        streams,
        a: LockedBuffer::from_slice(&a_values)?,
        b: LockedBuffer::new(&f32::NAN, N)?,
        d_a: DeviceBuffer::from_slice(&a_values)?,
        d_b: DeviceBuffer::from_slice(&vec![f32::NAN; N])?,
    };
    let expected: Vec<f32> = (a_values.iter().enumerate())
        .map(|(i, &x)| element::sincos_element(x, i as u32))
        .collect();

    for version in Version::ALL {
        let ms = pipeline.time(version)?;
        println!(
            "Time for {} transfer and execution in ms = {ms:.4}",
            version.line()
        );
        pipeline.check(version, &expected)?;
    }
    println!(
        "all {N} elements correct in each version (identical, bit for bit, to kernels_rs::element)"
    );
    Ok(())
}

/// The arrays, the kernel and the streams of the three versions.
struct Pipeline<'m> {
    kernel: TypedFunction<'m, sincos>,
    streams: Vec<Stream>,
    a: LockedBuffer<f32>,
    b: LockedBuffer<f32>,
    d_a: DeviceBuffer<f32>,
    d_b: DeviceBuffer<f32>,
}

impl Pipeline<'_> {
    /// Poison `a` on the device and `b` on the device and the host, run `version` [`WARMUP`] times, then time
    /// [`ITERATIONS`] back to back with events on the first stream, which waits for the
    /// others at both ends; milliseconds per iteration.
    fn time(&mut self, version: Version) -> Result<f64, Box<dyn Error>> {
        self.b.fill(f32::NAN);
        self.d_a.copy_from(&self.b[..])?;
        self.d_b.copy_from(&self.b[..])?;
        for _ in 0..WARMUP {
            self.iteration(version)?;
        }
        let first = &self.streams[0];
        for stream in &self.streams {
            stream.synchronize()?;
        }
        let (start, stop) = (
            Event::new(EventFlags::DEFAULT)?,
            Event::new(EventFlags::DEFAULT)?,
        );
        start.record(first)?;
        for stream in &self.streams[1..] {
            stream.wait_event(marker(first)?, StreamWaitEventFlags::DEFAULT)?;
        }
        for _ in 0..ITERATIONS {
            self.iteration(version)?;
        }
        let first = &self.streams[0];
        for stream in &self.streams[1..] {
            first.wait_event(marker(stream)?, StreamWaitEventFlags::DEFAULT)?;
        }
        stop.record(first)?;
        stop.synchronize()?;
        Ok(f64::from(stop.elapsed_time_f32(&start)?) / ITERATIONS as f64)
    }

    /// Issue one iteration of `version`.
    fn iteration(&mut self, version: Version) -> Result<(), Box<dyn Error>> {
        let parts = chunks(N, STREAMS);
        match version {
            Version::Sequential => {
                // Blocking copies: the copy out waits for the kernel, the next copy in for
                // the copy out.
                self.d_a.copy_from(&self.a[..])?;
                self.launch(0, &(0..N))?;
                self.d_b.copy_to(&mut self.b[..])?;
            }
            Version::Async1 => {
                for (s, part) in parts.iter().enumerate() {
                    self.copy_in(s, part)?;
                    self.launch(s, part)?;
                    self.copy_out(s, part)?;
                }
            }
            Version::Async2 => {
                for (s, part) in parts.iter().enumerate() {
                    self.copy_in(s, part)?;
                }
                for (s, part) in parts.iter().enumerate() {
                    self.launch(s, part)?;
                }
                for (s, part) in parts.iter().enumerate() {
                    self.copy_out(s, part)?;
                }
            }
        }
        Ok(())
    }

    /// Copy `part` of `a` in on stream `s`.
    fn copy_in(&mut self, s: usize, part: &Range<usize>) -> Result<(), Box<dyn Error>> {
        // SAFETY: the host and device arrays outlive every copy (each version ends with
        // its streams synchronized), and pinned memory is not moved while it runs.
        unsafe {
            self.d_a
                .index(part.clone())
                .async_copy_from(&self.a[part.clone()], &self.streams[s])?;
        }
        Ok(())
    }

    /// Copy `part` of `b` out on stream `s`.
    fn copy_out(&mut self, s: usize, part: &Range<usize>) -> Result<(), Box<dyn Error>> {
        // SAFETY: as in `copy_in`; nothing reads `b` on the host until the streams are
        // synchronized.
        unsafe {
            self.d_b
                .index(part.clone())
                .async_copy_to(&mut self.b[part.clone()], &self.streams[s])?;
        }
        Ok(())
    }

    /// Launch the kernel over `part` on stream `s`, one thread per element:
    /// `sincos(a: &[f32], b: &mut [f32], offset: u32)`.
    fn launch(&mut self, s: usize, part: &Range<usize>) -> Result<(), Box<dyn Error>> {
        let blocks = (part.len() as u32).div_ceil(THREADS);
        // SAFETY: the grid covers the chunk of `b`, the chunk of `a` is as long (the
        // kernel reads it unchecked), and stream order keeps the chunk's copies and this
        // kernel apart.
        unsafe {
            self.kernel.launch(
                &self.streams[s],
                blocks,
                THREADS,
                0,
                (
                    typed::slice(&self.d_a.index(part.clone())),
                    typed::slice_mut(&mut self.d_b.index(part.clone())),
                    part.start as u32,
                ),
            )?;
        }
        Ok(())
    }

    /// Check every element of `b` after `version` bit for bit: both sides run the same
    /// `libm` code with correctly rounded `sqrt` and `fma`, so they agree exactly, and a
    /// kernel that skipped the math (`sqrt(sin² + cos²)` is 1 within rounding) would not.
    fn check(&self, version: Version, expected: &[f32]) -> Result<(), Box<dyn Error>> {
        for (j, (&got, &want)) in self.b.iter().zip(expected).enumerate() {
            if got.to_bits() != want.to_bits() {
                return Err(format!(
                    "{}: element {j} is {got}, expected {want} (bit for bit)",
                    version.line()
                )
                .into());
            }
        }
        Ok(())
    }
}

/// An event recorded on `stream` now, for another stream to wait on (`wait_event` takes
/// it).
fn marker(stream: &Stream) -> Result<Event, Box<dyn Error>> {
    let event = Event::new(EventFlags::DISABLE_TIMING)?;
    event.record(stream)?;
    Ok(event)
}

/// `n` elements in `streams` contiguous chunks, the first `n % streams` one longer.
fn chunks(n: usize, streams: usize) -> Vec<Range<usize>> {
    let (base, extra) = (n / streams, n % streams);
    let mut start = 0;
    (0..streams)
        .map(|s| {
            let len = base + usize::from(s < extra);
            start += len;
            start - len..start
        })
        .collect()
}
