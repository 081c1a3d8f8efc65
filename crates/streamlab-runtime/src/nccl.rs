//! NCCL, found and loaded at run time: communicators over several GPUs driven from one
//! host thread, and their all-reduce, safe for every input.
//!
//! [`Nccl::find`] looks where [`Nccl::SEARCHED`] says, in that order, loads the library
//! by its full path and resolves the few functions used (cudarc's own NCCL loader never
//! tries `libnccl.so.2` and panics on a miss). [`Nccl::communicators`] makes one
//! communicator per GPU inside one group (`ncclCommInitRankConfig`), each with the same
//! CTA budget ([`CtaBudget`], NCCL's `ncclConfig_t`), and [`Communicators::all_reduce`]
//! issues one sum over every rank at once, inside one group, so a collective is never
//! issued on some ranks only: each rank's buffers are checked to lie on its GPU and to
//! hold the same count before anything is issued.
//!
//! NVLink multicast stays off: `NCCL_NVLS_ENABLE` must read `0` before a communicator is
//! made ([`multicast_off`]; `streamlab` sets it first thing in `main`), and nothing here
//! creates a multicast object.
use std::ffi::{CStr, c_char, c_int, c_void};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cudarc::driver::sys;
use libloading::Library;

use crate::pending::{self, GpuWork};
use crate::{DeviceBuffer, Gpu, RuntimeError, Stream};

/// The variable that turns NVLink multicast (NVLS) on in NCCL; it must read `0`.
pub const MULTICAST_VARIABLE: &str = "NCCL_NVLS_ENABLE";
/// A file, or a folder holding `libnccl.so.2`: where set, the only place looked.
pub const PATH_VARIABLE: &str = "STREAMLAB_NCCL";
/// The oldest NCCL whose communicator configuration holds a CTA policy: 2.27.
pub const OLDEST: i32 = 22700;

/// How many of a GPU's SMs NCCL may take: its default, a cap on its CTAs
/// (`ncclConfig_t::maxCTAs`), or its efficiency policy (`NCCL_CTA_POLICY_EFFICIENCY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CtaBudget {
    Default,
    MaxCtas(u32),
    Efficiency,
}

/// Where NCCL was found and what it is, for the provenance.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The library's full path.
    pub path: PathBuf,
    /// How it was found (which of [`Nccl::SEARCHED`]).
    pub how: &'static str,
    /// `ncclGetVersion`'s code (2.28.3 is 22803).
    pub code: i32,
}

impl Found {
    /// The version as major.minor.patch.
    pub fn version(&self) -> String {
        version_of(self.code)
    }
}

/// Why NCCL cannot be used here, in one line naming what was searched and how to install it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct Unusable(pub String);

type Comm = *mut c_void;

/// `ncclUniqueId`: 128 bytes, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
struct UniqueId([c_char; 128]);

/// `ncclConfig_t` up to the fields of NCCL 2.28 that matter here (the struct is
/// append-only and read up to its `size`; the rest stay NCCL's defaults).
#[repr(C)]
struct Config {
    size: usize,
    magic: u32,
    version: u32,
    blocking: c_int,
    cga_cluster_size: c_int,
    min_ctas: c_int,
    max_ctas: c_int,
    net_name: *const c_char,
    split_share: c_int,
    traffic_class: c_int,
    comm_name: *const c_char,
    collnet_enable: c_int,
    cta_policy: c_int,
    shrink_share: c_int,
    nvls_ctas: c_int,
}

const UNDEF: c_int = c_int::MIN;
const API_MAGIC: u32 = 0xcafe_beef;
const CTA_POLICY_EFFICIENCY: c_int = 1;
const FLOAT32: c_int = 7;
const SUM: c_int = 0;

impl Config {
    fn new(budget: CtaBudget) -> Config {
        let (max_ctas, cta_policy) = match budget {
            CtaBudget::Default => (UNDEF, UNDEF),
            CtaBudget::MaxCtas(n) => (c_int::try_from(n).unwrap_or(c_int::MAX), UNDEF),
            CtaBudget::Efficiency => (UNDEF, CTA_POLICY_EFFICIENCY),
        };
        Config {
            size: size_of::<Config>(),
            magic: API_MAGIC,
            version: OLDEST as u32,
            blocking: 1,
            cga_cluster_size: UNDEF,
            min_ctas: UNDEF,
            max_ctas,
            net_name: std::ptr::null(),
            split_share: UNDEF,
            traffic_class: UNDEF,
            comm_name: std::ptr::null(),
            collnet_enable: UNDEF,
            cta_policy,
            shrink_share: UNDEF,
            nvls_ctas: UNDEF,
        }
    }
}

/// The functions used, resolved from the library.
struct Api {
    get_version: unsafe extern "C" fn(*mut c_int) -> c_int,
    error_string: unsafe extern "C" fn(c_int) -> *const c_char,
    unique_id: unsafe extern "C" fn(*mut UniqueId) -> c_int,
    init_rank_config: unsafe extern "C" fn(*mut Comm, c_int, UniqueId, c_int, *mut Config) -> c_int,
    group_start: unsafe extern "C" fn() -> c_int,
    group_end: unsafe extern "C" fn() -> c_int,
    all_reduce: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        c_int,
        c_int,
        Comm,
        sys::CUstream,
    ) -> c_int,
    async_error: unsafe extern "C" fn(Comm, *mut c_int) -> c_int,
    destroy: unsafe extern "C" fn(Comm) -> c_int,
    abort: unsafe extern "C" fn(Comm) -> c_int,
}

/// A loaded NCCL.
pub struct Nccl {
    api: Api,
    pub found: Found,
    _library: Library,
}

impl Nccl {
    /// Where [`Nccl::find`] looks, in order.
    pub const SEARCHED: [&'static str; 3] = [
        "STREAMLAB_NCCL (a file, or a folder holding libnccl.so.2; where set, only it)",
        "libnccl.so.2 and libnccl.so on the loader's path",
        "the nvidia-nccl-cu13 Python wheel (python3's importlib finds nvidia.nccl)",
    ];

    /// NCCL from the first place of [`Nccl::SEARCHED`] that has it, loaded, at least
    /// [`OLDEST`]; else one line saying what was searched and how to install it.
    pub fn find() -> Result<Nccl, Unusable> {
        if let Some(given) = std::env::var_os(PATH_VARIABLE) {
            let given = PathBuf::from(given);
            let file = if given.is_dir() {
                ["libnccl.so.2", "libnccl.so", "lib/libnccl.so.2"]
                    .iter()
                    .map(|f| given.join(f))
                    .find(|f| f.is_file())
            } else {
                given.is_file().then(|| given.clone())
            };
            let Some(file) = file else {
                return Err(Unusable(format!(
                    "{PATH_VARIABLE}={} names no NCCL library (a file, or a folder holding libnccl.so.2): point it at libnccl.so.2, or unset it to search the loader's path and the nvidia-nccl-cu13 wheel",
                    given.display()
                )));
            };
            return Nccl::load(&file, "STREAMLAB_NCCL");
        }
        // One found but unusable (too old, lacking a function) leaves the search going
        // on; its reason is the answer where nothing usable is found.
        let mut unusable = None;
        for name in ["libnccl.so.2", "libnccl.so"] {
            // SAFETY: loading NCCL runs its initialisers, which have no preconditions.
            if let Ok(library) = unsafe { Library::new(name) } {
                let path = loaded_path(name).unwrap_or_else(|| PathBuf::from(name));
                match Nccl::resolve(library, path, "the loader's path") {
                    Ok(nccl) => return Ok(nccl),
                    Err(why) => unusable = Some(why),
                }
            }
        }
        if let Some(file) = wheel_library() {
            return Nccl::load(&file, "the nvidia-nccl-cu13 Python wheel");
        }
        Err(unusable.unwrap_or_else(|| {
            Unusable(format!(
                "NCCL was not found (searched {}): install it with `pip install nvidia-nccl-cu13` or the distribution's libnccl2 package, or set {PATH_VARIABLE} to libnccl.so.2",
                Nccl::SEARCHED.join("; ")
            ))
        }))
    }

    fn load(file: &Path, how: &'static str) -> Result<Nccl, Unusable> {
        // SAFETY: as in `find`.
        let library = unsafe { Library::new(file) }.map_err(|e| {
            Unusable(format!(
                "NCCL at {} (from {how}) does not load: {e}: install a working NCCL (`pip install nvidia-nccl-cu13`)",
                file.display()
            ))
        })?;
        Nccl::resolve(library, file.to_owned(), how)
    }

    fn resolve(library: Library, path: PathBuf, how: &'static str) -> Result<Nccl, Unusable> {
        let missing = |name: &str, e: libloading::Error| {
            Unusable(format!(
                "NCCL at {} (from {how}) lacks {name} ({e}): install NCCL {} or newer (`pip install nvidia-nccl-cu13`)",
                path.display(),
                version_of(OLDEST)
            ))
        };
        macro_rules! symbol {
            ($name:literal) => {
                // SAFETY: each symbol is declared with the type NCCL's header gives it.
                *unsafe { library.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| missing($name, e))?
            };
        }
        let api = Api {
            get_version: symbol!("ncclGetVersion"),
            error_string: symbol!("ncclGetErrorString"),
            unique_id: symbol!("ncclGetUniqueId"),
            init_rank_config: symbol!("ncclCommInitRankConfig"),
            group_start: symbol!("ncclGroupStart"),
            group_end: symbol!("ncclGroupEnd"),
            all_reduce: symbol!("ncclAllReduce"),
            async_error: symbol!("ncclCommGetAsyncError"),
            destroy: symbol!("ncclCommDestroy"),
            abort: symbol!("ncclCommAbort"),
        };
        let mut code = 0;
        // SAFETY: a plain out-parameter.
        let status = unsafe { (api.get_version)(&mut code) };
        if status != 0 || code < OLDEST {
            return Err(Unusable(format!(
                "NCCL at {} (from {how}) is {}, older than the {} this needs (its communicator configuration has no CTA policy before): `pip install -U nvidia-nccl-cu13`",
                path.display(),
                version_of(code),
                version_of(OLDEST)
            )));
        }
        Ok(Nccl {
            api,
            found: Found { path, how, code },
            _library: library,
        })
    }

    /// `status` of `call` as an error with NCCL's own words.
    fn check(&self, status: c_int, call: &'static str) -> Result<(), RuntimeError> {
        if status == 0 {
            return Ok(());
        }
        // SAFETY: NCCL returns a static string for any code.
        let text = unsafe { CStr::from_ptr((self.api.error_string)(status)) };
        Err(RuntimeError::Nccl(format!(
            "{call} failed: {} (NCCL error {status})",
            text.to_string_lossy()
        )))
    }

    /// One communicator per GPU of `gpus` (rank = position), made inside one group with
    /// `budget`, once NVLink multicast is known off ([`multicast_off`]).
    pub fn communicators<'g>(
        &'g self,
        gpus: &[&'g Gpu],
        budget: CtaBudget,
    ) -> Result<Communicators<'g>, RuntimeError> {
        multicast_off()?;
        if gpus.len() < 2 {
            return Err(RuntimeError::Nccl(
                "an all-reduce needs two or more GPUs".into(),
            ));
        }
        // Every GPU's context is bound once first, so that no rank's call is left out of
        // the group below for a context that cannot be made current.
        for gpu in gpus {
            gpu.bind()?;
        }
        let mut id = UniqueId([0; 128]);
        // SAFETY: a plain out-parameter.
        self.check(unsafe { (self.api.unique_id)(&mut id) }, "ncclGetUniqueId")?;
        let mut comms: Vec<Comm> = vec![std::ptr::null_mut(); gpus.len()];
        let mut configs: Vec<Config> = gpus.iter().map(|_| Config::new(budget)).collect();
        // SAFETY: no arguments.
        self.check(unsafe { (self.api.group_start)() }, "ncclGroupStart")?;
        let mut made = Ok(());
        let each = gpus.iter().zip(&mut comms).zip(&mut configs);
        for (rank, ((gpu, comm), config)) in each.enumerate() {
            made = gpu.bind();
            if made.is_err() {
                break;
            }
            // SAFETY: `comms` and `configs` outlive the group, which completes the call;
            // the GPU's context is current, so NCCL takes its device.
            let status = unsafe {
                (self.api.init_rank_config)(comm, gpus.len() as c_int, id, rank as c_int, config)
            };
            made = self.check(status, "ncclCommInitRankConfig");
            if made.is_err() {
                break;
            }
        }
        // SAFETY: no arguments; ends the group begun above on every path.
        let ended = self.check(unsafe { (self.api.group_end)() }, "ncclGroupEnd");
        let works: Vec<&Arc<GpuWork>> = gpus.iter().map(|g| &g.work).collect();
        // NCCL's kernels reach the other GPUs' memory.
        pending::share(&works);
        // Aborted when dropped unless every rank's communicator is made and sound.
        let communicators = Communicators {
            nccl: self,
            ranks: (gpus.iter().zip(comms))
                .filter(|(_, comm)| !comm.is_null())
                .map(|(gpu, comm)| (*gpu, comm))
                .collect(),
            broken: std::cell::Cell::new(true),
        };
        made.and(ended)?;
        for &(_, comm) in &communicators.ranks {
            let mut state = 0;
            // SAFETY: a live communicator and an out-parameter.
            self.check(
                unsafe { (self.api.async_error)(comm, &mut state) },
                "ncclCommGetAsyncError",
            )?;
            self.check(state, "making a communicator")?;
        }
        communicators
            .broken
            .set(communicators.ranks.len() != gpus.len());
        Ok(communicators)
    }
}

/// NCCL's version code as major.minor.patch.
fn version_of(code: i32) -> String {
    format!("{}.{}.{}", code / 10000, (code / 100) % 100, code % 100)
}

/// The full path of the library `name` the loader mapped, from `/proc/self/maps`.
fn loaded_path(name: &str) -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let stem = name.trim_end_matches(".2");
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| {
            Path::new(path)
                .file_name()
                .and_then(|f| f.to_str())
                .is_some_and(|f| f.starts_with(stem))
        })
        .map(PathBuf::from)
}

/// `lib/libnccl.so.2` of the `nvidia.nccl` package python3 finds (a namespace package:
/// its folder, not its `__file__`).
fn wheel_library() -> Option<PathBuf> {
    let script = "import importlib.util as u\ns = u.find_spec('nvidia.nccl')\nprint(next(iter(s.submodule_search_locations)) if s and s.submodule_search_locations else '')";
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let folder = String::from_utf8(out.stdout).ok()?;
    let file = Path::new(folder.trim()).join("lib/libnccl.so.2");
    (!folder.trim().is_empty() && file.is_file()).then_some(file)
}

/// `Ok` where `NCCL_NVLS_ENABLE` reads `0`: NVLink multicast can put a shared host's GPUs
/// out of service, so no communicator is made with it possible.
pub fn multicast_off() -> Result<(), RuntimeError> {
    match std::env::var(MULTICAST_VARIABLE) {
        Ok(v) if v.trim() == "0" => Ok(()),
        other => Err(RuntimeError::Nccl(format!(
            "{MULTICAST_VARIABLE} is {} where it must be 0 (NVLink multicast stays off): run streamlab itself, which sets it, or export {MULTICAST_VARIABLE}=0",
            other.map_or("unset".to_owned(), |v| format!("{v:?}"))
        ))),
    }
}

/// Every NCCL variable in force, `NAME=value`, sorted.
pub fn variables() -> Vec<String> {
    let mut vars: Vec<String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("NCCL_"))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    vars.sort();
    vars
}

/// One communicator per GPU, rank by rank; destroyed when dropped, or aborted where one
/// failed to be made or a collective was left issued on some ranks only.
pub struct Communicators<'g> {
    nccl: &'g Nccl,
    ranks: Vec<(&'g Gpu, Comm)>,
    broken: std::cell::Cell<bool>,
}

/// One rank's part of an all-reduce: its stream, and the elements summed, in place
/// (`send` none) or from `send`'s range into `recv`'s.
pub struct AllReduce<'a, 's> {
    pub stream: &'a Stream<'s>,
    pub send: Option<(&'a DeviceBuffer<f32>, Range<usize>)>,
    pub recv: (&'a mut DeviceBuffer<f32>, Range<usize>),
}

impl Communicators<'_> {
    pub fn ranks(&self) -> usize {
        self.ranks.len()
    }

    /// One float32 sum over every rank at once (`ops[r]` is rank `r`'s), issued inside
    /// one group: each rank's stream and buffers on its GPU, every range in bounds and of
    /// one count, else [`RuntimeError::Nccl`] and nothing issued.
    pub fn all_reduce(&self, ops: &mut [AllReduce]) -> Result<(), RuntimeError> {
        if self.broken.get() {
            return Err(RuntimeError::Nccl(
                "all-reduce refused: an earlier collective failed on these communicators".into(),
            ));
        }
        let count = self.checked(ops)?;
        for (gpu, _) in &self.ranks {
            gpu.bind()?;
        }
        // SAFETY: no arguments.
        self.nccl
            .check(unsafe { (self.nccl.api.group_start)() }, "ncclGroupStart")?;
        let mut issued = Ok(());
        for (op, &(gpu, comm)) in ops.iter_mut().zip(&self.ranks) {
            issued = gpu.bind();
            if issued.is_err() {
                break;
            }
            op.stream.work.issue();
            let (recv, range) = (&mut op.recv.0, &op.recv.1);
            let to = recv.addr(range.start) as *mut c_void;
            let from = match &op.send {
                Some((send, range)) => send.addr(range.start) as *const c_void,
                None => to as *const c_void,
            };
            // SAFETY: both ranges lie in live buffers of this rank's GPU (checked), of
            // `count` elements on every rank, and `recv` is borrowed `&mut`; the group
            // issues the sum on every rank.
            let status = unsafe {
                (self.nccl.api.all_reduce)(from, to, count, FLOAT32, SUM, comm, op.stream.raw)
            };
            issued = self.nccl.check(status, "ncclAllReduce");
            if issued.is_err() {
                break;
            }
        }
        // SAFETY: no arguments; ends the group on every path.
        let ended = (self.nccl).check(unsafe { (self.nccl.api.group_end)() }, "ncclGroupEnd");
        let outcome = issued.and(ended);
        // Some ranks may hold a collective the others never join: only aborting ends it.
        self.broken.set(self.broken.get() || outcome.is_err());
        outcome
    }

    /// The count every op sums, once each op is checked against its rank.
    fn checked(&self, ops: &[AllReduce]) -> Result<usize, RuntimeError> {
        let refuse = |why: String| Err(RuntimeError::Nccl(format!("all-reduce refused: {why}")));
        if ops.len() != self.ranks.len() {
            return refuse(format!(
                "{} ranks given for {} communicators",
                ops.len(),
                self.ranks.len()
            ));
        }
        let count = ops[0].recv.1.len();
        for (rank, (op, (gpu, _))) in ops.iter().zip(&self.ranks).enumerate() {
            let on_gpu = |work: &Arc<GpuWork>| Arc::ptr_eq(work, &gpu.work);
            let (recv, range) = (&op.recv.0, &op.recv.1);
            let in_bounds = range.start <= range.end && range.end <= recv.len;
            let send_ok = op.send.as_ref().is_none_or(|(send, r)| {
                on_gpu(&send.gpu) && r.start <= r.end && r.end <= send.len && r.len() == count
            });
            if !(on_gpu(op.stream.work.gpu()) && on_gpu(&recv.gpu) && in_bounds && send_ok)
                || range.len() != count
            {
                return refuse(format!(
                    "rank {rank}'s stream or buffers are not on its GPU, out of bounds, or of another count than rank 0's {count}"
                ));
            }
        }
        Ok(count)
    }
}

impl Drop for Communicators<'_> {
    fn drop(&mut self) {
        let broken = self.broken.get();
        for &(gpu, comm) in &self.ranks {
            let _ = gpu.bind();
            if broken {
                // SAFETY: a communicator NCCL made; aborting ends its work, finished or not.
                let _ = unsafe { (self.nccl.api.abort)(comm) };
            } else {
                let _ = gpu.synchronize();
                // SAFETY: a live communicator whose work has finished.
                let _ = unsafe { (self.nccl.api.destroy)(comm) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_code_reads_as_major_minor_patch() {
        assert_eq!(version_of(22803), "2.28.3");
        assert_eq!(version_of(OLDEST), "2.27.0");
    }

    #[test]
    fn the_configuration_sets_only_the_budget_asked_for() {
        let capped = Config::new(CtaBudget::MaxCtas(4));
        assert_eq!((capped.max_ctas, capped.cta_policy), (4, UNDEF));
        let efficient = Config::new(CtaBudget::Efficiency);
        assert_eq!((efficient.max_ctas, efficient.cta_policy), (UNDEF, 1));
        let default = Config::new(CtaBudget::Default);
        assert_eq!((default.max_ctas, default.min_ctas), (UNDEF, UNDEF));
        assert_eq!(default.size, size_of::<Config>());
        assert_eq!(default.magic, 0xcafe_beef);
    }

    #[test]
    fn a_folder_without_nccl_is_refused_in_one_line_naming_the_variable() {
        let dir = std::env::temp_dir().join(format!("streamlab-no-nccl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // SAFETY: this test alone reads or writes the variable.
        unsafe { std::env::set_var(PATH_VARIABLE, &dir) };
        let err = Nccl::find().err().expect("an empty folder holds no NCCL");
        unsafe { std::env::remove_var(PATH_VARIABLE) };
        assert!(
            err.0.contains(PATH_VARIABLE) && !err.0.contains('\n'),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
