//! The CUDA C++ host twin of sincos-overlap's schedules (`cuda/sincos_host.cu`): built
//! with nvcc into a shared library when an experiment asks for it, loaded into this
//! process, and called batch for batch beside the Rust host on the same streams, buffers
//! and kernel. Where no nvcc is found it is skipped, with one line saying why.
//!
//! nvcc is looked for as `$CUDA_PATH/bin/nvcc`, then on `PATH`, then as
//! `/usr/local/cuda/bin/nvcc`. The library links the driver (`libcuda`) through the
//! toolkit's stub, so at load time it shares the driver, and the context, this process
//! already uses.
use std::ffi::{OsStr, c_int, c_uint};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::Command;

use cudarc::driver::sys;
use streamlab_record::IssueOrder;

use super::{DeviceBuffer, Function, Gpu, PinnedBuffer, RuntimeError, Stream};

/// The twin's source, compiled at run time.
const SOURCE: &str = include_str!("../cuda/sincos_host.cu");

/// `sincos_host_batch`'s arrays (`struct SincosArrays`).
#[repr(C)]
struct Arrays {
    host_a: *const f32,
    host_b: *mut f32,
    dev_a: sys::CUdeviceptr,
    dev_b: sys::CUdeviceptr,
    len: usize,
}

/// `sincos_host_batch`'s kernel (`struct SincosKernel`).
#[repr(C)]
struct KernelArg {
    function: sys::CUfunction,
    threads: c_uint,
}

type BatchFn = unsafe extern "C" fn(
    *const Arrays,
    *const KernelArg,
    c_int,
    *const sys::CUstream,
    c_uint,
    *const usize,
    c_uint,
    c_uint,
    *mut f64,
) -> c_int;

/// Why the C++ host did not run: one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Skipped {
    #[error(
        "no nvcc found ($CUDA_PATH/bin/nvcc, PATH, /usr/local/cuda/bin/nvcc): install the CUDA toolkit or set CUDA_PATH to compare against it"
    )]
    NoNvcc,
    #[error("{nvcc} could not build cuda/sincos_host.cu: {log}")]
    Build { nvcc: String, log: String },
    #[error("the built C++ host could not be loaded: {0}")]
    Load(String),
}

/// The C++ host, built and loaded.
pub struct CppHost {
    batch: BatchFn,
    /// nvcc's version line and the options, for the result.
    pub build: String,
    /// Keeps the library loaded while `batch` may be called.
    _library: libloading::Library,
}

/// The first nvcc of `$CUDA_PATH/bin`, the folders of `path` (a `PATH` value), and
/// `/usr/local/cuda/bin`.
pub fn find_nvcc(cuda_path: Option<&OsStr>, path: Option<&OsStr>) -> Option<PathBuf> {
    let mut folders: Vec<PathBuf> = cuda_path
        .map(|c| Path::new(c).join("bin"))
        .into_iter()
        .collect();
    folders.extend(
        path.map(|p| std::env::split_paths(p).collect::<Vec<_>>())
            .unwrap_or_default(),
    );
    folders.push(PathBuf::from("/usr/local/cuda/bin"));
    folders
        .into_iter()
        .map(|f| f.join("nvcc"))
        .find(|nvcc| nvcc.is_file())
}

impl CppHost {
    /// Find nvcc, build the twin into a temporary folder and load it.
    pub fn build() -> Result<CppHost, Skipped> {
        let nvcc = find_nvcc(
            std::env::var_os("CUDA_PATH").as_deref(),
            std::env::var_os("PATH").as_deref(),
        )
        .ok_or(Skipped::NoNvcc)?;
        let toolkit = nvcc
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("/"));
        let folder =
            std::env::temp_dir().join(format!("streamlab-cpp-host-{}", std::process::id()));
        let failed = |log: String| Skipped::Build {
            nvcc: nvcc.display().to_string(),
            log,
        };
        std::fs::create_dir_all(&folder).map_err(|e| failed(e.to_string()))?;
        let (source, library) = (
            folder.join("sincos_host.cu"),
            folder.join("libsincos_host.so"),
        );
        std::fs::write(&source, SOURCE).map_err(|e| failed(e.to_string()))?;
        let options = ["-O3", "-shared", "-Xcompiler", "-fPIC"];
        let output = Command::new(&nvcc)
            .args(options)
            .arg("-o")
            .arg(&library)
            .arg(&source)
            .arg(format!("-L{}", toolkit.join("lib64/stubs").display()))
            .arg("-lcuda")
            .output()
            .map_err(|e| failed(e.to_string()));
        let loaded = output.and_then(|out| {
            if !out.status.success() {
                let log = String::from_utf8_lossy(&out.stderr);
                return Err(failed(
                    log.lines().next().unwrap_or("no message").to_owned(),
                ));
            }
            // SAFETY: the library is ours, just built; loading runs no constructors of
            // its own (plain C functions over the driver API).
            let lib = unsafe { libloading::Library::new(&library) }
                .map_err(|e| Skipped::Load(e.to_string()))?;
            // SAFETY: `sincos_host_batch` has exactly `BatchFn`'s C signature.
            let batch = *unsafe { lib.get::<BatchFn>(b"sincos_host_batch\0") }
                .map_err(|e| Skipped::Load(e.to_string()))?;
            Ok((lib, batch))
        });
        // The loaded library stays mapped once its file is gone.
        let _ = std::fs::remove_dir_all(&folder);
        let (library, batch) = loaded?;
        let version = Command::new(&nvcc)
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|v| v.lines().last().map(str::to_owned))
            .unwrap_or_default();
        Ok(CppHost {
            batch,
            build: format!("{} ({version}), {}", nvcc.display(), options.join(" ")),
            _library: library,
        })
    }

    /// One timed batch of `order` over `streams`, chunk `s` (`parts[s]`) on stream `s`:
    /// `warmup` untimed iterations, then `iterations` back to back; returns the time per
    /// iteration. Every call it made has finished when it returns.
    #[allow(clippy::too_many_arguments)]
    pub fn batch<P>(
        &self,
        gpu: &Gpu,
        (kernel, threads): (&Function<P>, u32),
        order: IssueOrder,
        streams: &[Stream],
        (host_a, host_b): (&PinnedBuffer<f32>, &mut PinnedBuffer<f32>),
        (dev_a, dev_b): (&mut DeviceBuffer<f32>, &mut DeviceBuffer<f32>),
        parts: &[Range<usize>],
        (warmup, iterations): (usize, usize),
    ) -> Result<f64, RuntimeError> {
        let len = host_a.len();
        assert!(
            [host_b.len(), dev_a.len(), dev_b.len()]
                .iter()
                .all(|&n| n == len)
                && parts.len() == streams.len()
                && parts.last().is_some_and(|p| p.end <= len),
            "the C++ host needs four arrays of one length and a chunk per stream"
        );
        let mut bounds: Vec<usize> = parts.iter().map(|p| p.start).collect();
        bounds.push(parts[parts.len() - 1].end);
        let arrays = Arrays {
            // Both views wait for the copies issued on them before they are handed out.
            host_a: host_a.as_slice()?.as_ptr(),
            host_b: host_b.as_mut_slice()?.as_mut_ptr(),
            dev_a: dev_a.ptr,
            dev_b: dev_b.ptr,
            len,
        };
        let kernel = KernelArg {
            function: kernel.raw,
            threads,
        };
        let raw: Vec<sys::CUstream> = streams.iter().map(Stream::raw).collect();
        let order = match order {
            IssueOrder::Sequential => 0,
            IssueOrder::Async1 => 1,
            IssueOrder::Async2 => 2,
        };
        let mut ms = f64::NAN;
        let status = gpu.work.within(|| {
            // SAFETY: every pointer is live for the call and exclusively borrowed where
            // written (`host_b`, `dev_a`, `dev_b` through `&mut`); the streams and the
            // kernel belong to this context, made current here; the twin synchronizes
            // the context before it returns, so nothing it issued outlives the call.
            Ok(unsafe {
                (self.batch)(
                    &arrays,
                    &kernel,
                    order,
                    raw.as_ptr(),
                    raw.len() as c_uint,
                    bounds.as_ptr(),
                    warmup as c_uint,
                    iterations as c_uint,
                    &mut ms,
                )
            })
        })?;
        if status != 0 {
            return Err(RuntimeError::CppHost { code: status });
        }
        gpu.synchronize()?;
        Ok(ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvcc_is_found_under_cuda_path_then_on_path_and_missing_is_one_line() {
        let root = std::env::temp_dir().join(format!("streamlab-nvcc-{}", std::process::id()));
        let (toolkit, other) = (root.join("toolkit"), root.join("other"));
        for folder in [toolkit.join("bin"), other.clone()] {
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join("nvcc"), "").unwrap();
        }
        let path = std::env::join_paths([root.join("empty"), other.clone()]).unwrap();
        assert_eq!(
            find_nvcc(Some(toolkit.as_os_str()), Some(&path)),
            Some(toolkit.join("bin/nvcc"))
        );
        assert_eq!(find_nvcc(None, Some(&path)), Some(other.join("nvcc")));
        let nowhere = std::env::join_paths([root.join("empty")]).unwrap();
        let system = Path::new("/usr/local/cuda/bin/nvcc").is_file();
        assert_eq!(find_nvcc(None, Some(&nowhere)).is_some(), system);
        std::fs::remove_dir_all(&root).unwrap();
        let line = Skipped::NoNvcc.to_string();
        assert!(!line.contains('\n') && line.contains("nvcc") && line.contains("CUDA_PATH"));
    }
}
