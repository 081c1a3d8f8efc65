//! The GPU's clocks, read through NVML (the driver ships `libnvidia-ml`; `nvml-wrapper`
//! loads it at run time): what a run records just before and just after each experiment
//! ([`streamlab_record::clocks`]), for every GPU of an experiment of several
//! with each one's PCIe link to the host ([`probe`]). Reading them never fails a run:
//! where NVML is missing or refuses, the result says why, field by field.
use std::sync::OnceLock;

use nvml_wrapper::Nvml;
use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use streamlab_record::clocks::{ClockProbe, GpuClocks, GpuProbe, PcieLink, Reading};

use crate::{Gpu, device};

/// NVML, loaded once per process; why not where it cannot be.
pub(crate) fn nvml() -> Result<&'static Nvml, String> {
    static NVML: OnceLock<Result<Nvml, String>> = OnceLock::new();
    NVML.get_or_init(|| Nvml::init().map_err(|e| format!("NVML could not be loaded ({e})")))
        .as_ref()
        .map_err(Clone::clone)
}

/// NVML's names of the reasons set in `reasons`.
fn reason_names(reasons: ThrottleReasons) -> Vec<String> {
    let named = [
        (ThrottleReasons::GPU_IDLE, "gpu_idle"),
        (
            ThrottleReasons::APPLICATIONS_CLOCKS_SETTING,
            "applications_clocks_setting",
        ),
        (ThrottleReasons::SW_POWER_CAP, "sw_power_cap"),
        (ThrottleReasons::HW_SLOWDOWN, "hw_slowdown"),
        (ThrottleReasons::SYNC_BOOST, "sync_boost"),
        (ThrottleReasons::SW_THERMAL_SLOWDOWN, "sw_thermal_slowdown"),
        (ThrottleReasons::HW_THERMAL_SLOWDOWN, "hw_thermal_slowdown"),
        (
            ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN,
            "hw_power_brake_slowdown",
        ),
        (
            ThrottleReasons::DISPLAY_CLOCK_SETTING,
            "display_clock_setting",
        ),
    ];
    (named.into_iter())
        .filter(|(flag, _)| reasons.contains(*flag))
        .map(|(_, name)| name.to_owned())
        .collect()
}

/// `gpu`'s clocks now, or why they cannot be read.
pub fn read(gpu: &Gpu) -> Result<GpuClocks, String> {
    let pci = device::pci_address(gpu.device).map_err(|e| e.to_string())?;
    read_at(&pci)
}

/// The clocks of the GPU of ordinal `ordinal` now (no context needed), or why they
/// cannot be read.
pub fn read_ordinal(ordinal: usize) -> Result<GpuClocks, String> {
    read_at(&pci_of(ordinal)?)
}

/// The PCI address of the GPU of ordinal `ordinal`.
fn pci_of(ordinal: usize) -> Result<String, String> {
    let device = device::handle(ordinal).map_err(|e| e.to_string())?;
    device::pci_address(device).map_err(|e| e.to_string())
}

/// NVML's handle of the GPU at PCI address `pci`.
pub(crate) fn nvml_device(pci: &str) -> Result<nvml_wrapper::Device<'static>, String> {
    (nvml()?.device_by_pci_bus_id(pci))
        .map_err(|e| format!("NVML does not know the GPU at {pci} ({e})"))
}

/// The clocks of the GPU at PCI address `pci` now: an error where NVML or a clock is
/// missing; the throttle reasons, temperature and power unread with why where NVML
/// refuses only them.
fn read_at(pci: &str) -> Result<GpuClocks, String> {
    let device = nvml_device(pci)?;
    let clock =
        |c: Clock| (device.clock_info(c)).map_err(|e| format!("NVML cannot read a clock ({e})"));
    let max = |c: Clock| {
        (device.max_clock_info(c)).map_err(|e| format!("NVML cannot read a clock's maximum ({e})"))
    };
    Ok(GpuClocks {
        sm_mhz: clock(Clock::SM)?,
        sm_max_mhz: max(Clock::SM)?,
        memory_mhz: clock(Clock::Memory)?,
        memory_max_mhz: max(Clock::Memory)?,
        reasons: Reading::of(
            "the throttle reasons",
            device.current_throttle_reasons().map(reason_names),
        ),
        temperature_c: Some(Reading::of(
            "the temperature",
            device.temperature(TemperatureSensor::Gpu),
        )),
        power_w: Some(Reading::of(
            "the power draw",
            (device.power_usage()).map(|mw| f64::from(mw) / 1000.0),
        )),
    })
}

/// The GPU of ordinal `ordinal` after an experiment of several GPUs: its clocks read
/// `before` and now, and its host link now.
pub fn probe(ordinal: usize, before: Result<GpuClocks, String>) -> GpuProbe {
    let pci = pci_of(ordinal);
    let after = pci.as_deref().map_err(Clone::clone).and_then(read_at);
    let pcie = match &pci {
        Ok(pci) => pcie_link(pci),
        Err(why) => Reading::Unread {
            unread: why.clone(),
        },
    };
    GpuProbe {
        ordinal,
        clocks: ClockProbe::of(before, after),
        pcie_link: pci.ok().and_then(|pci| device::pcie_link(&pci)),
        pcie,
    }
}

/// The PCIe link of the GPU at `pci` as NVML reads it now.
fn pcie_link(pci: &str) -> Reading<PcieLink> {
    let link = nvml_device(pci).and_then(|device| {
        let read = |r: Result<u32, nvml_wrapper::error::NvmlError>| {
            r.map_err(|e| format!("NVML cannot read the PCIe link ({e})"))
        };
        Ok(PcieLink {
            generation: read(device.current_pcie_link_gen())?,
            width: read(device.current_pcie_link_width())?,
            max_generation: read(device.max_pcie_link_gen())?,
            max_width: read(device.max_pcie_link_width())?,
        })
    });
    match link {
        Ok(link) => Reading::Read(link),
        Err(unread) => Reading::Unread { unread },
    }
}
