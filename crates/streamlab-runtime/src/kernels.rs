//! The kernel modules the runtime loads: the Rust kernels built from `kernels-rs/` by
//! `build.rs` (embedded here) or their CUDA C++ twins, each kernel a [`Function`] typed
//! by its declaration's parameters, and each language's spellings of matmul's and
//! AddKernel's forms ([`crate::spellings`], timed side by side by compare-kernels). A module
//! loads only PTX checked against the declarations ([`CheckedPtx`]), and gives a typed
//! function only for an entry so checked:
//!
//! ```compile_fail
//! // PTX text is not a module's input ...
//! let _ = streamlab_runtime::kernels::Module::load(".version 8.0\n.target sm_90\n");
//! ```
//! ```no_run
//! // ... only checked PTX is.
//! use streamlab_runtime::kernels::{CheckedPtx, Module};
//! let _ = Module::load(&CheckedPtx::declared(".version 8.0\n.target sm_90\n").unwrap());
//! ```
use std::ffi::{CString, c_void};
use std::marker::PhantomData;

use cudarc::driver::{result, sys};
use kernels_rs as k;
use nvptx_builder::ptx::PtxSummary;
use nvptx_kernel::{Kernel, KernelSignature};
use streamlab_record::card::{DriverCard, occupancy};
use streamlab_record::{KernelForm, KernelSet};

use crate::spellings::{ADD_KERNEL_SPELLINGS, MATMUL_SPELLINGS, Spelling};
use crate::{Context as _, RuntimeError, raw};

/// PTX of the Rust kernels.
pub const RUST_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

/// A loaded kernel entry, typed by its parameters (`P`: the declaration's `Args`), so a
/// launch with the wrong arguments does not compile. Kernels with the same parameters
/// (a kernel's plain, safe and tuned forms) share the type.
pub struct Function<P> {
    pub(crate) raw: sys::CUfunction,
    pub(crate) name: &'static str,
    pub(crate) ptx_params: usize,
    /// It indexes with 32-bit ints (a spelling correct only where every index fits in
    /// one): its launches are held to that too.
    pub(crate) int_indices: bool,
    _params: PhantomData<fn(P)>,
}

impl<P> Clone for Function<P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for Function<P> {}

impl<P> Function<P> {
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// How many blocks of `block_threads` threads of this entry one SM holds at once
    /// (`cuOccupancyMaxActiveBlocksPerMultiprocessor`, no dynamic shared memory).
    pub fn blocks_per_sm(&self, block_threads: u32) -> Result<u32, RuntimeError> {
        // SAFETY: `raw` is an entry of a module that stays loaded.
        let blocks = unsafe {
            result::occupancy::max_active_block_per_multiprocessor(
                self.raw,
                block_threads as i32,
                0,
            )
        }
        .doing("reading a kernel's occupancy")?;
        Ok(blocks.max(0) as u32)
    }

    /// What the driver says of this entry, launched with `block_threads` threads per
    /// block on the current context's device.
    pub fn driver_card(&self, block_threads: u32) -> Result<DriverCard, RuntimeError> {
        use sys::CUfunction_attribute as F;
        let attr = |a: F| {
            // SAFETY: `raw` is an entry of a module that stays loaded.
            unsafe { result::function::get_function_attribute(self.raw, a) }
                .doing("reading a kernel's attributes")
        };
        // SAFETY: as above; no dynamic shared memory.
        let blocks = unsafe {
            result::occupancy::max_active_block_per_multiprocessor(
                self.raw,
                block_threads as i32,
                0,
            )
        }
        .doing("reading a kernel's occupancy")?;
        let device = raw::current_device().doing("reading the current device")?;
        // SAFETY: `device` is the current context's device.
        let max_threads_per_sm = unsafe {
            result::device::get_attribute(
                device,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
            )
        }
        .doing("reading the SM's thread limit")?;
        Ok(DriverCard {
            registers: attr(F::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            local_bytes: attr(F::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            static_shared_bytes: attr(F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            max_threads_per_block: attr(F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            block_threads,
            occupancy: occupancy(blocks, block_threads, max_threads_per_sm),
        })
    }
}

type Args<K> = <K as Kernel>::Args;

/// Every kernel of one module (the Rust set, or the CUDA C++ twins).
#[derive(Clone)]
pub struct Kernels {
    pub set: KernelSet,
    pub fill: Function<Args<k::fill>>,
    pub fill_safe: Function<Args<k::fill_safe>>,
    pub matmul_plain: Function<Args<k::matmul>>,
    pub matmul_safe: Function<Args<k::matmul>>,
    pub matmul: Function<Args<k::matmul>>,
    pub add_kernel_plain: Function<Args<k::add_kernel>>,
    pub add_kernel_safe: Function<Args<k::add_kernel>>,
    pub add_kernel: Function<Args<k::add_kernel>>,
    pub sincos_plain: Function<Args<k::sincos>>,
    pub sincos_safe: Function<Args<k::sincos>>,
    pub sincos: Function<Args<k::sincos>>,
    pub math_sinf: Function<Args<k::math_sinf>>,
    pub math_cosf: Function<Args<k::math_cosf>>,
    pub math_sincosf: Function<Args<k::math_sincosf>>,
    pub copy_u32: Function<Args<k::copy_u32>>,
    pub empty: Function<Args<k::empty>>,
    pub spin: Function<Args<k::spin>>,
    pub chain_step: Function<Args<k::chain_step>>,
    /// Every spelling of matmul's forms in this language, the form's own kernel first.
    pub matmul_spellings: Vec<Spelled<Args<k::matmul>>>,
    /// Every spelling of AddKernel's forms in this language, the form's own kernel first.
    pub add_kernel_spellings: Vec<Spelled<Args<k::add_kernel>>>,
}

/// A loaded spelling: the entry and what it is.
pub struct Spelled<P> {
    pub spelling: Spelling,
    pub function: Function<P>,
}

impl<P> Clone for Spelled<P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for Spelled<P> {}

/// A PTX text whose entries were checked against declarations: the one thing a
/// [`Module`] loads.
pub struct CheckedPtx {
    text: CString,
    summary: PtxSummary,
    declared: Vec<KernelSignature>,
}

impl CheckedPtx {
    /// `ptx`, its target read from it, with the entry of every kernel of `declarations`
    /// checked to take the kernel's parameters.
    pub fn new(ptx: &str, declarations: &[KernelSignature]) -> Result<CheckedPtx, RuntimeError> {
        let summary = nvptx_builder::ptx::check(ptx, ptx_target(ptx), declarations)
            .map_err(|err| RuntimeError::Module(err.to_string()))?;
        let text = CString::new(ptx)
            .map_err(|_| RuntimeError::Module("the PTX contains a NUL byte".into()))?;
        Ok(CheckedPtx {
            text,
            summary,
            declared: declarations.to_vec(),
        })
    }

    /// `ptx` checked against the project's kernels (`kernels_rs::KERNELS`).
    pub fn declared(ptx: &str) -> Result<CheckedPtx, RuntimeError> {
        CheckedPtx::new(ptx, &kernels_rs::KERNELS)
    }
}

impl Kernels {
    /// Load a PTX module holding every kernel of `kernels_rs::KERNELS` and each spelling
    /// of this set's language.
    pub fn load(ptx: &CheckedPtx, set: KernelSet) -> Result<Kernels, RuntimeError> {
        let module = Module::load(ptx)?;
        let language = match set {
            KernelSet::Rust => 0,
            KernelSet::Cuda => 1,
        };
        let summary = &ptx.summary;
        let matmul_spellings =
            module.spellings::<k::matmul>(summary, MATMUL_SPELLINGS[language])?;
        let add_kernel_spellings =
            module.spellings::<k::add_kernel>(summary, ADD_KERNEL_SPELLINGS[language])?;
        // Each kernel field from the kernel of its name.
        macro_rules! by_name {
            ($($name:ident),*) => {
                Kernels {
                    set,
                    matmul_spellings,
                    add_kernel_spellings,
                    $($name: module.function::<k::$name>()?,)*
                }
            };
        }
        Ok(by_name!(
            fill,
            fill_safe,
            matmul_plain,
            matmul_safe,
            matmul,
            add_kernel_plain,
            add_kernel_safe,
            add_kernel,
            sincos_plain,
            sincos_safe,
            sincos,
            math_sinf,
            math_cosf,
            math_sincosf,
            copy_u32,
            empty,
            spin,
            chain_step
        ))
    }

    /// matmul in `form`.
    pub fn matmul_in(&self, form: KernelForm) -> Function<Args<k::matmul>> {
        match form {
            KernelForm::Plain => self.matmul_plain,
            KernelForm::Safe => self.matmul_safe,
            KernelForm::Tuned => self.matmul,
        }
    }

    /// AddKernel in `form`.
    pub fn add_kernel_in(&self, form: KernelForm) -> Function<Args<k::add_kernel>> {
        match form {
            KernelForm::Plain => self.add_kernel_plain,
            KernelForm::Safe => self.add_kernel_safe,
            KernelForm::Tuned => self.add_kernel,
        }
    }

    /// sincos in `form`.
    pub fn sincos_in(&self, form: KernelForm) -> Function<Args<k::sincos>> {
        match form {
            KernelForm::Plain => self.sincos_plain,
            KernelForm::Safe => self.sincos_safe,
            KernelForm::Tuned => self.sincos,
        }
    }
}

/// A loaded PTX module; it stays loaded for the life of the process.
pub struct Module {
    raw: sys::CUmodule,
    /// The declarations its PTX was checked against.
    declared: Vec<KernelSignature>,
}

impl Module {
    /// Load checked PTX (JIT-compiled by the driver for this GPU).
    pub fn load(ptx: &CheckedPtx) -> Result<Module, RuntimeError> {
        // SAFETY: a NUL-terminated PTX text.
        let raw = unsafe { result::module::load_data(ptx.text.as_ptr() as *const c_void) }
            .map_err(|err| RuntimeError::Module(crate::describe(&err)))?;
        Ok(Module {
            raw,
            declared: ptx.declared.clone(),
        })
    }

    /// Kernel `K` by its declared name, typed by its declared parameters; an error where
    /// the module's PTX was not checked against `K`'s declaration.
    pub fn function<K: Kernel>(&self) -> Result<Function<K::Args>, RuntimeError> {
        let sig = K::SIGNATURE;
        if !self.declared.contains(&sig) {
            return Err(RuntimeError::Module(format!(
                "{} was not checked against its declaration",
                sig.name
            )));
        }
        // SAFETY: the entry was checked to take `K`'s parameters.
        unsafe { self.raw_function(sig.name, sig.ptx_params().count(), false) }
    }

    /// Each of `spellings`, an entry of this module computing kernel `K`'s results, typed as
    /// `K`: each entry's parameters are checked in `summary` (this module's PTX) against
    /// `K`'s declaration first.
    fn spellings<K: Kernel>(
        &self,
        summary: &PtxSummary,
        spellings: &[Spelling],
    ) -> Result<Vec<Spelled<K::Args>>, RuntimeError> {
        spellings
            .iter()
            .map(|&spelling| {
                let signature = nvptx_kernel::KernelSignature {
                    name: spelling.entry,
                    params: K::SIGNATURE.params,
                };
                nvptx_builder::ptx::check_entry(summary, &signature)
                    .map_err(|err| RuntimeError::Module(err.to_string()))?;
                // SAFETY: the entry takes exactly K's parameters (checked just above).
                let function = unsafe {
                    self.raw_function(
                        spelling.entry,
                        signature.ptx_params().count(),
                        spelling.int_indices,
                    )?
                };
                Ok(Spelled { spelling, function })
            })
            .collect()
    }

    /// The entry `name`, typed as taking `P`; `int_indices` where it indexes with 32-bit
    /// ints.
    ///
    /// # Safety
    /// The entry must take exactly the parameters `P` describes, `ptx_params` of them.
    unsafe fn raw_function<P>(
        &self,
        name: &'static str,
        ptx_params: usize,
        int_indices: bool,
    ) -> Result<Function<P>, RuntimeError> {
        let cname = CString::new(name)
            .map_err(|_| RuntimeError::Module(format!("kernel name {name:?} has a NUL")))?;
        // SAFETY: the module is loaded.
        let raw = unsafe { result::module::get_function(self.raw, cname) }
            .map_err(|err| RuntimeError::Module(format!("{name}: {}", crate::describe(&err))))?;
        Ok(Function {
            raw,
            name,
            ptx_params,
            int_indices,
            _params: PhantomData,
        })
    }
}

/// A loaded kernel entry whose parameters are known only at run time (a user's kernel,
/// checked against the shape it must have before it is loaded).
pub struct DynamicFunction {
    pub(crate) raw: sys::CUfunction,
    pub(crate) name: String,
    pub(crate) ptx_params: usize,
}

impl DynamicFunction {
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Module {
    /// The entry `name` taking `ptx_params` parameters.
    pub fn dynamic_function(
        &self,
        name: &str,
        ptx_params: usize,
    ) -> Result<DynamicFunction, RuntimeError> {
        let cname = CString::new(name)
            .map_err(|_| RuntimeError::Module(format!("kernel name {name:?} has a NUL")))?;
        // SAFETY: the module is loaded.
        let raw = unsafe { result::module::get_function(self.raw, cname) }
            .map_err(|err| RuntimeError::Module(format!("{name}: {}", crate::describe(&err))))?;
        Ok(DynamicFunction {
            raw,
            name: name.to_owned(),
            ptx_params,
        })
    }
}

/// The `.target` line of a PTX module (e.g. `sm_90`).
pub fn ptx_target(ptx: &str) -> &str {
    ptx.lines()
        .find_map(|line| line.trim().strip_prefix(".target"))
        .map(|rest| rest.split(',').next().unwrap_or(rest).trim())
        .unwrap_or("unknown")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_ptx_has_every_declared_kernel_and_the_default_target() {
        nvptx_builder::ptx::check(RUST_PTX, ptx_target(RUST_PTX), &kernels_rs::KERNELS)
            .expect("the embedded PTX matches the declarations");
        nvptx_builder::ptx::check(RUST_PTX, ptx_target(RUST_PTX), &kernels_rs::SPELLINGS)
            .expect("the embedded PTX matches the spellings' declarations");
        assert!(ptx_target(RUST_PTX).starts_with("sm_"));
        assert_eq!(ptx_target(".version 7.8\n.target sm_80\n"), "sm_80");
        assert_eq!(ptx_target("nothing"), "unknown");
    }
}
