//! The GPU's clocks, read through NVML (the driver ships `libnvidia-ml`; `nvml-wrapper`
//! loads it at run time): what a run records just before and just after each experiment
//! ([`streamlab_results::saved::clocks`]). Reading them never fails a run: where NVML is
//! missing or refuses, the result says why.
use std::sync::OnceLock;

use nvml_wrapper::Nvml;
use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use streamlab_results::saved::clocks::GpuClocks;

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
    let nvml = nvml()?;
    let pci = device::pci_address(gpu.device).map_err(|e| e.to_string())?;
    let device = (nvml.device_by_pci_bus_id(pci.as_str()))
        .map_err(|e| format!("NVML does not know the GPU at {pci} ({e})"))?;
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
        reasons: device
            .current_throttle_reasons()
            .map(reason_names)
            .unwrap_or_default(),
        temperature_c: device.temperature(TemperatureSensor::Gpu).ok(),
        power_w: device.power_usage().ok().map(|mw| f64::from(mw) / 1000.0),
    })
}
