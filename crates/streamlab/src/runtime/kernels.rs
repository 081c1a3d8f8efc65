//! The kernel modules the runtime loads: the Rust kernels built from `kernels-rs/` by
//! `build.rs` (embedded here) or their CUDA C++ twins, each kernel a [`Function`] typed
//! by its declaration's parameters, and each language's spellings of matmul's and
//! AddKernel's forms ([`Spelling`], timed side by side by compare-kernels).
use std::ffi::{CString, c_void};
use std::marker::PhantomData;

use cudarc::driver::{result, sys};
use kernels_rs as k;
use nvptx_kernel::Kernel;
use streamlab_results::card::{DriverCard, occupancy};
use streamlab_results::saved::{KernelForm, KernelSet};

use super::{Context as _, RuntimeError};

/// PTX of the Rust kernels.
pub const RUST_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

/// A loaded kernel entry, typed by its parameters (`P`: the declaration's `Args`), so a
/// launch with the wrong arguments does not compile. Kernels with the same parameters
/// (a kernel's plain, safe and tuned forms) share the type.
pub struct Function<P> {
    pub(super) raw: sys::CUfunction,
    pub(super) name: &'static str,
    pub(super) ptx_params: usize,
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
        let mut device = 0;
        // SAFETY: writes one device handle; a context is current.
        unsafe { sys::cuCtxGetDevice(&mut device) }
            .result()
            .doing("reading the current device")?;
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

/// One spelling of a kernel's form in one language: an entry of its module computing the
/// form's results, written another way (the kernel's own entry is one of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spelling {
    pub entry: &'static str,
    pub form: KernelForm,
    /// What the spelling does, in words.
    pub how: &'static str,
    /// Indexes with `int`: correct only where every index fits in one (compare-kernels
    /// times it only there).
    pub int_indices: bool,
}

impl Spelling {
    const fn new(entry: &'static str, form: KernelForm, how: &'static str) -> Spelling {
        Spelling {
            entry,
            form,
            how,
            int_indices: false,
        }
    }
}

use KernelForm::{Plain, Safe, Tuned};

/// The spellings of matmul's forms, Rust's and CUDA C++'s (each form's own kernel first).
pub const MATMUL_SPELLINGS: [&[Spelling]; 2] = [
    &[
        Spelling::new(
            "matmul_plain",
            Plain,
            "the wiki's loop; index arithmetic, checked indexing",
        ),
        Spelling::new(
            "matmul_safe",
            Safe,
            "views checked once; loads ahead (fold_ahead: 8-product batches, 4 a step); guarded tail",
        ),
        Spelling::new(
            "matmul_safe_zip",
            Safe,
            "views checked once; the zipped row and column folded one pair a turn",
        ),
        Spelling::new(
            "matmul",
            Tuned,
            "8-product batches, 4 a step, one loaded a step ahead; guarded-batch tail",
        ),
        Spelling::new(
            "matmul_tuned_loop_tail",
            Tuned,
            "8-product batches, 4 a step, one loaded a step ahead; counted-loop tail",
        ),
        Spelling::new(
            "matmul_tuned_two_step",
            Tuned,
            "8-product batches, 2 a step, one loaded a step ahead; guarded-batch tail",
        ),
        Spelling::new(
            "matmul_tuned_walk",
            Tuned,
            "two pointers walking the row and the column, one product a turn",
        ),
    ],
    &[
        Spelling::new(
            "matmul_plain",
            Plain,
            "the wiki's loop; 64-bit index arithmetic",
        ),
        Spelling {
            int_indices: true,
            ..Spelling::new(
                "matmul_plain_int",
                Plain,
                "the wiki's loop; int index arithmetic, as the wiki declares its indices",
            )
        },
        Spelling::new("matmul_safe", Safe, "lengths checked once; the plain loop"),
        Spelling::new(
            "matmul_safe_ahead",
            Safe,
            "lengths checked once; 8-product batches, 4 a step, one loaded ahead; guarded-batch tail",
        ),
        Spelling::new(
            "matmul",
            Tuned,
            "8-product batches, 4 a step, one loaded a step ahead; counted-loop tail",
        ),
        Spelling::new(
            "matmul_tuned_guarded_tail",
            Tuned,
            "8-product batches, 4 a step, one loaded a step ahead; guarded-batch tail",
        ),
        Spelling::new(
            "matmul_tuned_two_step",
            Tuned,
            "8-product batches, 2 a step, one loaded a step ahead; counted-loop tail",
        ),
        Spelling::new(
            "matmul_tuned_ldg",
            Tuned,
            "as matmul, every load through __ldg (the read-only data cache)",
        ),
        Spelling::new(
            "matmul_tuned_walk",
            Tuned,
            "two pointers walking the row and the column, one product a turn",
        ),
    ],
];

/// The spellings of AddKernel's forms, Rust's and CUDA C++'s (each form's own kernel first).
pub const ADD_KERNEL_SPELLINGS: [&[Spelling]; 2] = [
    &[
        Spelling::new("add_kernel_plain", Plain, "the Handbook's volatile local"),
        Spelling::new(
            "add_kernel_safe",
            Safe,
            "grid-stride view; sums 32 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_safe_by8",
            Safe,
            "grid-stride view; sums 8 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_safe_loop",
            Safe,
            "grid-stride view; sums one a turn",
        ),
        Spelling::new(
            "add_kernel",
            Tuned,
            "grid-stride loop; sums 32 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_tuned_by16",
            Tuned,
            "grid-stride loop; sums 16 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_tuned_ahead",
            Tuned,
            "a copy loop at 0 cycles; the next index and test before the sums; sums 8 a step",
        ),
    ],
    &[
        Spelling::new("add_kernel_plain", Plain, "the Handbook's volatile local"),
        Spelling::new(
            "add_kernel_safe",
            Safe,
            "grid-stride loop to the shorter length; sums one a turn",
        ),
        Spelling::new(
            "add_kernel_safe_by8",
            Safe,
            "grid-stride loop to the shorter length; sums 8 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_safe_by16",
            Safe,
            "grid-stride loop to the shorter length; sums 16 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_safe_by32",
            Safe,
            "grid-stride loop to the shorter length; sums 32 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel",
            Tuned,
            "grid-stride loop; sums 16 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_tuned_by32",
            Tuned,
            "grid-stride loop; sums 32 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_tuned_by8",
            Tuned,
            "grid-stride loop; sums 8 a step, the rest by bits",
        ),
        Spelling::new(
            "add_kernel_tuned_loop",
            Tuned,
            "the Handbook's loop; sums one a turn behind an asm barrier",
        ),
        Spelling::new(
            "add_kernel_tuned_ahead",
            Tuned,
            "a copy loop at 0 cycles; the next index and test before the sums; sums 8 a step",
        ),
    ],
];

impl Kernels {
    /// Load a PTX module holding every kernel of `kernels_rs::KERNELS`.
    pub fn load(ptx: &str, set: KernelSet) -> Result<Kernels, RuntimeError> {
        let module = Module::load(ptx)?;
        let language = match set {
            KernelSet::Rust => 0,
            KernelSet::Cuda => 1,
        };
        let summary = nvptx_builder::ptx::parse(ptx);
        Ok(Kernels {
            matmul_spellings: module
                .spellings::<k::matmul>(&summary, MATMUL_SPELLINGS[language])?,
            add_kernel_spellings: module
                .spellings::<k::add_kernel>(&summary, ADD_KERNEL_SPELLINGS[language])?,
            set,
            fill: module.function::<k::fill>()?,
            fill_safe: module.function::<k::fill_safe>()?,
            matmul_plain: module.function::<k::matmul_plain>()?,
            matmul_safe: module.function::<k::matmul_safe>()?,
            matmul: module.function::<k::matmul>()?,
            add_kernel_plain: module.function::<k::add_kernel_plain>()?,
            add_kernel_safe: module.function::<k::add_kernel_safe>()?,
            add_kernel: module.function::<k::add_kernel>()?,
            sincos_plain: module.function::<k::sincos_plain>()?,
            sincos_safe: module.function::<k::sincos_safe>()?,
            sincos: module.function::<k::sincos>()?,
            math_sinf: module.function::<k::math_sinf>()?,
            math_cosf: module.function::<k::math_cosf>()?,
            math_sincosf: module.function::<k::math_sincosf>()?,
            copy_u32: module.function::<k::copy_u32>()?,
            empty: module.function::<k::empty>()?,
            spin: module.function::<k::spin>()?,
        })
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
}

impl Module {
    /// Load a PTX text (JIT-compiled by the driver for this GPU).
    pub fn load(ptx: &str) -> Result<Module, RuntimeError> {
        let image = CString::new(ptx)
            .map_err(|_| RuntimeError::Module("the PTX contains a NUL byte".into()))?;
        // SAFETY: `image` is a NUL-terminated PTX text.
        let raw = unsafe { result::module::load_data(image.as_ptr() as *const c_void) }
            .map_err(|err| RuntimeError::Module(super::describe(&err)))?;
        Ok(Module { raw })
    }

    /// Kernel `K` by its declared name, typed by its declared parameters.
    pub fn function<K: Kernel>(&self) -> Result<Function<K::Args>, RuntimeError> {
        let sig = K::SIGNATURE;
        // SAFETY: the module was built from (or checked against) `K`'s declaration.
        unsafe { self.raw_function(sig.name, sig.ptx_params().count()) }
    }

    /// Each of `spellings`, an entry of this module computing kernel `K`'s results, typed as
    /// `K`: each entry's parameters are checked in `summary` (this module's PTX) against
    /// `K`'s declaration first.
    fn spellings<K: Kernel>(
        &self,
        summary: &nvptx_builder::ptx::PtxSummary,
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
                let function =
                    unsafe { self.raw_function(spelling.entry, signature.ptx_params().count())? };
                Ok(Spelled { spelling, function })
            })
            .collect()
    }

    /// The entry `name`, typed as taking `P`.
    ///
    /// # Safety
    /// The entry must take exactly the parameters `P` describes, `ptx_params` of them.
    pub unsafe fn raw_function<P>(
        &self,
        name: &'static str,
        ptx_params: usize,
    ) -> Result<Function<P>, RuntimeError> {
        let cname = CString::new(name)
            .map_err(|_| RuntimeError::Module(format!("kernel name {name:?} has a NUL")))?;
        // SAFETY: the module is loaded.
        let raw = unsafe { result::module::get_function(self.raw, cname) }
            .map_err(|err| RuntimeError::Module(format!("{name}: {}", super::describe(&err))))?;
        Ok(Function {
            raw,
            name,
            ptx_params,
            _params: PhantomData,
        })
    }
}

/// A loaded kernel entry whose parameters are known only at run time (a user's kernel,
/// checked against the shape it must have before it is loaded).
pub struct DynamicFunction {
    pub(super) raw: sys::CUfunction,
    pub(super) name: String,
    pub(super) ptx_params: usize,
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
            .map_err(|err| RuntimeError::Module(format!("{name}: {}", super::describe(&err))))?;
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
    fn every_rust_spelling_is_declared_with_its_kernels_parameters_and_none_is_left_out() {
        let declared = |name: &str| {
            (kernels_rs::KERNELS.iter().chain(&kernels_rs::SPELLINGS))
                .find(|k| k.name == name)
                .unwrap_or_else(|| panic!("{name} is not declared"))
        };
        let spelled = [
            (MATMUL_SPELLINGS[0], k::matmul::SIGNATURE),
            (ADD_KERNEL_SPELLINGS[0], k::add_kernel::SIGNATURE),
        ];
        for (spellings, kernel) in spelled {
            for form in KernelForm::ALL {
                // Each form's own kernel comes first among its spellings.
                let first = spellings
                    .iter()
                    .find(|s| s.form == form)
                    .expect("a spelling");
                let suffix = match form {
                    Plain => "_plain",
                    Safe => "_safe",
                    Tuned => "",
                };
                assert_eq!(first.entry, format!("{}{suffix}", kernel.name));
            }
            for spelling in spellings {
                assert_eq!(
                    declared(spelling.entry).params,
                    kernel.params,
                    "{}",
                    spelling.entry
                );
            }
        }
        for spelling in kernels_rs::SPELLINGS {
            assert!(
                spelled
                    .iter()
                    .any(|(s, _)| s.iter().any(|s| s.entry == spelling.name)),
                "{} is declared but never timed",
                spelling.name
            );
        }
    }

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
