//! The GPU's clocks around each experiment, as NVML reads them: the SM and memory clocks,
//! their maxima, why the GPU holds them down, its temperature and power. A result whose
//! GPU slowed its SMs while it ran is marked ([`ClockProbe::held_back`]), as nvbench
//! marks a throttled measurement, so that it cannot pass for one that ran at speed.
use serde::{Deserialize, Serialize};

/// An SM clock under this fraction of its maximum right after an experiment marks the
/// result (nvbench's default throttle threshold).
pub const THROTTLE_THRESHOLD: f64 = 0.75;

/// What NVML says of the GPU at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuClocks {
    pub sm_mhz: u32,
    pub sm_max_mhz: u32,
    pub memory_mhz: u32,
    pub memory_max_mhz: u32,
    /// Why the GPU holds its clocks down, in NVML's words ("sw_power_cap",
    /// "hw_thermal_slowdown", …); "gpu_idle" when it has no work.
    pub reasons: Vec<String>,
    pub temperature_c: Option<u32>,
    pub power_w: Option<f64>,
}

/// The reasons that slow a GPU at work, as opposed to one idle or set by its owner.
const SLOWDOWNS: [&str; 5] = [
    "sw_power_cap",
    "hw_slowdown",
    "sw_thermal_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
];

/// The clocks just before an experiment and just after it, or why they could not be read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockProbe {
    Read {
        before: GpuClocks,
        after: GpuClocks,
    },
    /// NVML was not there or refused: what it said.
    Unread(String),
}

impl ClockProbe {
    /// Why this result's GPU ran slower than it can, where it did: its SM clock right
    /// after the work under [`THROTTLE_THRESHOLD`] of its maximum, or a slowdown reason
    /// set then (a reason set only before, on an idle GPU, does not count).
    pub fn held_back(&self) -> Option<String> {
        let ClockProbe::Read { after, .. } = self else {
            return None;
        };
        let mut why = Vec::new();
        if f64::from(after.sm_mhz) < THROTTLE_THRESHOLD * f64::from(after.sm_max_mhz) {
            why.push(format!(
                "SM clock {} MHz, under {:.0}% of its {} MHz maximum",
                after.sm_mhz,
                100.0 * THROTTLE_THRESHOLD,
                after.sm_max_mhz
            ));
        }
        let slowdowns: Vec<&str> = (after.reasons.iter())
            .map(String::as_str)
            .filter(|r| SLOWDOWNS.contains(r))
            .collect();
        if !slowdowns.is_empty() {
            why.push(format!("held down by {}", slowdowns.join(", ")));
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// The SM and memory clocks (MHz) right after the work, where they were read: what the
    /// GPU ran the experiment at (before it, an idle GPU may show its idle clocks).
    pub fn working(&self) -> Option<(u32, u32)> {
        match self {
            ClockProbe::Read { after, .. } => Some((after.sm_mhz, after.memory_mhz)),
            ClockProbe::Unread(_) => None,
        }
    }

    /// The probe in words, e.g. "SM 1980 MHz before, 1980 after (max 1980); memory 3201
    /// MHz; 41 °C, 123 W after; held down by: none".
    pub fn describe(&self) -> String {
        match self {
            ClockProbe::Unread(why) => format!("clocks not read: {why}"),
            ClockProbe::Read { before, after } => {
                let reasons = (after.reasons.iter())
                    .filter(|r| *r != "gpu_idle")
                    .cloned()
                    .collect::<Vec<_>>();
                let state = [
                    after.temperature_c.map(|t| format!("{t} °C")),
                    after.power_w.map(|w| format!("{w:.0} W")),
                ]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>();
                format!(
                    "SM {} MHz before, {} after (max {}); memory {} MHz (max {}){}; held down by: {}",
                    before.sm_mhz,
                    after.sm_mhz,
                    after.sm_max_mhz,
                    after.memory_mhz,
                    after.memory_max_mhz,
                    if state.is_empty() {
                        String::new()
                    } else {
                        format!("; {} after", state.join(", "))
                    },
                    if reasons.is_empty() {
                        "nothing".to_owned()
                    } else {
                        reasons.join(", ")
                    }
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clocks(sm: u32, reasons: &[&str]) -> GpuClocks {
        GpuClocks {
            sm_mhz: sm,
            sm_max_mhz: 1980,
            memory_mhz: 3201,
            memory_max_mhz: 3201,
            reasons: reasons.iter().map(|r| (*r).to_owned()).collect(),
            temperature_c: Some(40),
            power_w: Some(120.0),
        }
    }

    #[test]
    fn a_slow_or_held_clock_after_the_work_marks_the_result_an_idle_one_before_does_not() {
        let idle_before = ClockProbe::Read {
            before: clocks(345, &["gpu_idle"]),
            after: clocks(1980, &[]),
        };
        assert_eq!(idle_before.held_back(), None);
        let slow = ClockProbe::Read {
            before: clocks(1980, &[]),
            after: clocks(1400, &[]),
        };
        assert!(slow.held_back().unwrap().contains("1400 MHz, under 75%"));
        let capped = ClockProbe::Read {
            before: clocks(1980, &[]),
            after: clocks(1800, &["sw_power_cap"]),
        };
        assert_eq!(capped.held_back().unwrap(), "held down by sw_power_cap");
        assert_eq!(ClockProbe::Unread("no NVML".into()).held_back(), None);
        assert!(
            idle_before
                .describe()
                .contains("SM 345 MHz before, 1980 after")
        );
        assert!(idle_before.describe().ends_with("held down by: nothing"));
    }
}
