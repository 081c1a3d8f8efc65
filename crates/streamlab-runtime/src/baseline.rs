//! The CUDA C++ baseline: `cuda/kernels.cu`, the twins of the Rust kernels written
//! statement for statement alike, compiled at run time with NVRTC and loaded as a second
//! [`Kernels`] set.
//!
//! 1. [`compile`] checks that the NVRTC library can be found (without it, the outcome is
//!    [`Availability::NvrtcMissing`], never a panic), then compiles the source for the
//!    GPU's compute capability (`--gpu-architecture=compute_XY`). NVRTC optimises device
//!    code by default (ptxas runs at its highest level), with nvcc's default
//!    floating-point settings spelled out so the JSON records them. The C++
//!    `sincos_kernel` (the math library owns the C name `sincos`) is renamed to the
//!    `sincos` entry, and the PTX is checked against the Rust kernels' declarations.
//! 2. [`load`] does the same for an open [`Gpu`] and loads the PTX as
//!    [`KernelSet::Cuda`].
use std::ffi::CStr;

use cudarc::nvrtc::{CompileError, CompileOptions, compile_ptx_with_opts, sys};
use streamlab_record::CudaBuild;
use streamlab_record::KernelSet;

use crate::kernels::{CheckedPtx, ptx_target};
use crate::{Gpu, Kernels, RuntimeError};

/// The CUDA C++ source of the twins.
pub const CUDA_SOURCE: &str = include_str!("../cuda/kernels.cu");

/// nvcc's default floating-point settings, passed explicitly: IEEE sqrt and division,
/// no flush to zero, multiply-add contraction allowed.
const FP_OPTIONS: [&str; 4] = [
    "--ftz=false",
    "--prec-sqrt=true",
    "--prec-div=true",
    "--fmad=true",
];

/// A failure compiling or loading the CUDA C++ kernels (NVRTC being absent is not one:
/// see [`Availability::NvrtcMissing`]).
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error("NVRTC could not compile cuda/kernels.cu with {options:?}:\n{log}")]
    Compile { options: Vec<String>, log: String },
    #[error("NVRTC failed: {0}")]
    Nvrtc(String),
    #[error("the CUDA C++ twins do not match the Rust kernels' declarations: {0}")]
    Declarations(#[from] nvptx_builder::PtxError),
    #[error("the CUDA C++ kernels compiled but do not load: {0}")]
    Load(#[source] RuntimeError),
}

/// Something that needs NVRTC, or why this machine cannot have it.
#[derive(Debug)]
pub enum Availability<T> {
    Ready(T),
    /// No NVRTC library was found: the CUDA C++ twins are skipped, with this note.
    NvrtcMissing(NvrtcMissing),
}

/// NVRTC was not found under any of the names cudarc looks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvrtcMissing {
    pub searched: Vec<String>,
}

impl std::fmt::Display for NvrtcMissing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "skipped the CUDA C++ twins: the NVRTC library was not found (searched {}); \
             install the CUDA toolkit's NVRTC or add its lib64 folder to LD_LIBRARY_PATH",
            self.searched.join(", ")
        )
    }
}

/// The PTX NVRTC made from [`CUDA_SOURCE`], and how.
#[derive(Debug, Clone)]
pub struct CudaPtx {
    pub ptx: String,
    pub build: CudaBuild,
}

/// The CUDA C++ kernels loaded on a GPU, and how they were built.
#[derive(Clone)]
pub struct CudaKernels {
    pub kernels: Kernels,
    pub build: CudaBuild,
    /// The PTX they were loaded from.
    pub ptx: String,
}

/// Whether the NVRTC library can be loaded on this machine.
pub fn nvrtc_present() -> bool {
    // SAFETY: probing only tries to open the library and closes it again.
    unsafe { sys::is_culib_present() }
}

/// The NVRTC options for a GPU of compute capability `(major, minor)`.
pub fn options(compute_capability: (i32, i32)) -> Vec<String> {
    let (major, minor) = compute_capability;
    let mut options = vec![format!("--gpu-architecture=compute_{major}{minor}")];
    options.extend(FP_OPTIONS.map(String::from));
    options
}

/// Compile [`CUDA_SOURCE`] to PTX for compute capability `(major, minor)` and check it
/// against the Rust kernels' declarations.
pub fn compile(compute_capability: (i32, i32)) -> Result<Availability<CudaPtx>, BaselineError> {
    if !nvrtc_present() {
        return Ok(Availability::NvrtcMissing(NvrtcMissing {
            searched: cudarc::get_lib_name_candidates("nvrtc"),
        }));
    }
    let options = options(compute_capability);
    let opts = CompileOptions {
        options: options.clone(),
        name: Some("kernels.cu".into()),
        ..CompileOptions::default()
    };
    let ptx = compile_ptx_with_opts(CUDA_SOURCE, opts)
        .map_err(|err| match err {
            CompileError::CompileError { log, .. } => BaselineError::Compile {
                options: options.clone(),
                log: log.to_string_lossy().into_owned(),
            },
            other => BaselineError::Nvrtc(format!("{other:?}")),
        })?
        .to_src();
    // The image NVRTC returns ends with its NUL terminator; the driver wants text.
    let ptx = rename_sincos(ptx.trim_end_matches('\0'));
    let target = ptx_target(&ptx).to_owned();
    nvptx_builder::ptx::check(&ptx, &target, &kernels_rs::KERNELS)?;
    let build = CudaBuild {
        compiler: nvrtc_version(),
        ptx_target: target,
        options,
    };
    Ok(Availability::Ready(CudaPtx { ptx, build }))
}

/// Compile the CUDA C++ kernels for `gpu` and load them into its context.
pub fn load(gpu: &Gpu) -> Result<Availability<CudaKernels>, BaselineError> {
    let compiled = match compile(gpu.info().compute_capability)? {
        Availability::Ready(compiled) => compiled,
        Availability::NvrtcMissing(missing) => return Ok(Availability::NvrtcMissing(missing)),
    };
    let ptx = CheckedPtx::declared(&compiled.ptx).map_err(BaselineError::Load)?;
    let kernels = Kernels::load(&ptx, KernelSet::Cuda).map_err(BaselineError::Load)?;
    Ok(Availability::Ready(CudaKernels {
        kernels,
        build: compiled.build,
        ptx: compiled.ptx,
    }))
}

/// The C++ name of the tuned sincos kernel (see `cuda/kernels.cu`).
const SINCOS_CPP: &str = "sincos_kernel";

/// Rename the `sincos_kernel` entry (and its `sincos_kernel_param_N` parameters) to
/// `sincos`. No other identifier of the module contains that name.
fn rename_sincos(ptx: &str) -> String {
    ptx.replace(SINCOS_CPP, "sincos")
}

/// "NVRTC major.minor" of the loaded library.
fn nvrtc_version() -> String {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present (checked by the caller); both pointers are valid.
    let status = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    if status == sys::nvrtcResult::NVRTC_SUCCESS {
        format!("NVRTC {major}.{minor}")
    } else {
        // SAFETY: nvrtcGetErrorString returns a static NUL-terminated string.
        let text = unsafe { CStr::from_ptr(sys::nvrtcGetErrorString(status)) };
        format!("NVRTC (version unknown: {})", text.to_string_lossy())
    }
}

#[cfg(test)]
mod tests {
    use nvptx_kernel::PtxType;

    use super::*;

    /// `(name, PTX parameter types)` of every `extern "C" __global__` function in
    /// `source`, read from the C++ parameter types.
    fn entry_points(source: &str) -> Vec<(String, Vec<PtxType>)> {
        source
            .split("extern \"C\" __global__ void ")
            .skip(1)
            .map(|rest| {
                let (name, rest) = rest.split_once('(').expect("a parameter list");
                let params = rest.split_once(')').expect("a closed parameter list").0;
                let types = (params.split(',').map(str::trim))
                    .filter(|p| !p.is_empty())
                    .map(|p| match p.rsplit_once(' ').map_or(p, |(ty, _)| ty) {
                        ty if ty.contains('*') || p.contains('*') => PtxType::Int64,
                        "size_t" | "unsigned long long" => PtxType::Int64,
                        "unsigned" | "int" => PtxType::Int32,
                        "float" => PtxType::F32,
                        other => panic!("unexpected C++ parameter type {other:?}"),
                    })
                    .collect();
                (rename_sincos(name.trim()), types)
            })
            .collect()
    }

    #[test]
    fn every_twin_and_spelling_has_its_rust_kernels_parameters() {
        use crate::spellings::{ADD_KERNEL_SPELLINGS, MATMUL_SPELLINGS};
        let entries = entry_points(CUDA_SOURCE);
        let params = |kernel: &nvptx_kernel::KernelSignature| -> Vec<PtxType> {
            kernel.ptx_params().map(|(_, _, ty)| ty).collect()
        };
        let types = |name: &str| {
            let (_, types) = (entries.iter())
                .find(|(entry, _)| entry == name)
                .unwrap_or_else(|| panic!("no C++ entry {name}"));
            types.clone()
        };
        for kernel in kernels_rs::KERNELS {
            assert_eq!(types(kernel.name), params(&kernel), "{}", kernel.name);
        }
        use nvptx_kernel::Kernel;
        let spelled = [
            (MATMUL_SPELLINGS[1], kernels_rs::matmul::SIGNATURE),
            (ADD_KERNEL_SPELLINGS[1], kernels_rs::add_kernel::SIGNATURE),
        ];
        for (spellings, kernel) in spelled {
            for spelling in spellings {
                assert_eq!(types(spelling.entry), params(&kernel), "{}", spelling.entry);
            }
        }
        // Every entry is a kernel or a spelling: none is left untimed.
        for (name, _) in &entries {
            assert!(
                kernels_rs::KERNELS.iter().any(|k| k.name == name)
                    || spelled
                        .iter()
                        .any(|(s, _)| s.iter().any(|s| s.entry == name)),
                "{name} is neither a kernel nor a spelling"
            );
        }
        // The parser sees a changed signature.
        let changed = CUDA_SOURCE.replacen("unsigned offset)", "int offset, int n)", 1);
        assert_ne!(entry_points(&changed), entries);
        assert!(
            !CUDA_SOURCE
                .lines()
                .any(|l| l.trim_start().starts_with("#include")),
            "NVRTC needs no includes"
        );
        assert!(CUDA_SOURCE.contains("volatile int value = in[i];"));
    }

    #[test]
    fn the_sincos_entry_and_its_parameters_are_renamed() {
        let ptx = ".visible .entry sincos_kernel(\n.param .u64 sincos_kernel_param_0\n)\n\
                   ld.param.u64 %rd1, [sincos_kernel_param_0];\n.entry fill(";
        let renamed = rename_sincos(ptx);
        assert!(renamed.contains(".entry sincos(\n.param .u64 sincos_param_0"));
        assert!(renamed.contains("[sincos_param_0]"));
        assert!(!renamed.contains("kernel") && renamed.contains(".entry fill("));
    }

    #[test]
    fn options_name_the_virtual_architecture_of_the_gpu() {
        let h100 = options((9, 0));
        assert_eq!(h100[0], "--gpu-architecture=compute_90");
        assert!(h100.contains(&"--fmad=true".to_owned()));
        assert_eq!(options((12, 0))[0], "--gpu-architecture=compute_120");
    }

    /// Without NVRTC (as on the CPU-only build machines) the outcome is the skip note;
    /// with it (set LD_LIBRARY_PATH to NVRTC's folder; no GPU needed) the source must
    /// compile to PTX that matches every Rust declaration with nothing left to link.
    #[test]
    fn compile_skips_without_nvrtc_and_builds_matching_ptx_with_it() {
        match compile((9, 0)).expect("no compile error") {
            Availability::NvrtcMissing(missing) => {
                assert!(!nvrtc_present());
                assert!(missing.searched.iter().any(|n| n.contains("nvrtc")));
                let note = missing.to_string();
                assert!(note.starts_with("skipped the CUDA C++ twins"), "{note}");
                assert!(note.contains("LD_LIBRARY_PATH"), "{note}");
            }
            Availability::Ready(compiled) => {
                assert!(nvrtc_present());
                assert_eq!(compiled.build.ptx_target, "sm_90");
                assert!(compiled.build.compiler.starts_with("NVRTC 1"));
                assert!(!compiled.ptx.contains('\0'));
            }
        }
    }
}
