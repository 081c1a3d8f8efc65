//! The kernel modules the runtime loads: the Rust kernels built from `kernels-rs/` by
//! `build.rs` (embedded here) or their CUDA C++ twins, each kernel a [`Function`] typed
//! by its declaration's parameters.
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
#[derive(Clone, Copy)]
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
}

impl Kernels {
    /// Load a PTX module holding every kernel of `kernels_rs::KERNELS`.
    pub fn load(ptx: &str, set: KernelSet) -> Result<Kernels, RuntimeError> {
        let module = Module::load(ptx)?;
        Ok(Kernels {
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
    fn embedded_ptx_has_every_declared_kernel_and_the_default_target() {
        nvptx_builder::ptx::check(RUST_PTX, ptx_target(RUST_PTX), &kernels_rs::KERNELS)
            .expect("the embedded PTX matches the declarations");
        assert!(ptx_target(RUST_PTX).starts_with("sm_"));
        assert_eq!(ptx_target(".version 7.8\n.target sm_80\n"), "sm_80");
        assert_eq!(ptx_target("nothing"), "unknown");
    }
}
