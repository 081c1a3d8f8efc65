//! The GPU's clocks around each experiment, as NVML reads them: the SM and memory clocks,
//! their maxima, why the GPU holds them down, its temperature and power. A result whose
//! GPU slowed its SMs while it ran is marked ([`ClockProbe::held_back`]), as nvbench
//! marks a throttled measurement, so that it cannot pass for one that ran at speed. An
//! experiment of several GPUs records every GPU's clocks and host link ([`GpuProbe`]).
//! What NVML refused to read is recorded as unread, with its words ([`Reading`]), never
//! as an empty or absent value.
use serde::{Deserialize, Serialize};

/// An SM clock under this fraction of its maximum right after an experiment marks the
/// result (nvbench's default throttle threshold).
pub const THROTTLE_THRESHOLD: f64 = 0.75;

/// A value NVML read, or why it could not: saved as the value itself, or as
/// `{"unread": why}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Reading<T> {
    Read(T),
    Unread { unread: String },
}

impl<T> Reading<T> {
    /// `result` as a reading: its value, or its error's words after `what`, e.g. "NVML
    /// cannot read the throttle reasons (Not Supported)".
    pub fn of<E: std::fmt::Display>(what: &str, result: Result<T, E>) -> Reading<T> {
        match result {
            Ok(value) => Reading::Read(value),
            Err(e) => Reading::Unread {
                unread: format!("NVML cannot read {what} ({e})"),
            },
        }
    }

    /// The value, where it was read.
    pub fn read(&self) -> Option<&T> {
        match self {
            Reading::Read(value) => Some(value),
            Reading::Unread { .. } => None,
        }
    }

    /// The value in words, or "unread (why)".
    pub fn text(&self, show: impl Fn(&T) -> String) -> String {
        match self {
            Reading::Read(value) => show(value),
            Reading::Unread { unread } => format!("unread ({unread})"),
        }
    }
}

/// What NVML says of the GPU at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuClocks {
    pub sm_mhz: u32,
    pub sm_max_mhz: u32,
    pub memory_mhz: u32,
    pub memory_max_mhz: u32,
    /// Why the GPU holds its clocks down, in NVML's words ("sw_power_cap",
    /// "hw_thermal_slowdown", …; "gpu_idle" when it has no work), an empty list where
    /// nothing does; unread where NVML refused (results before 2026-11-28 wrote an empty
    /// list then too).
    pub reasons: Reading<Vec<String>>,
    /// Its temperature and power draw; `None` in results before 2026-11-28 where NVML
    /// refused them, unread with why since.
    pub temperature_c: Option<Reading<u32>>,
    pub power_w: Option<Reading<f64>>,
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
    /// The probe of two reads, before and after: unread with the first refusal's words
    /// where either failed.
    pub fn of(before: Result<GpuClocks, String>, after: Result<GpuClocks, String>) -> ClockProbe {
        match (before, after) {
            (Ok(before), Ok(after)) => ClockProbe::Read { before, after },
            (Err(why), _) | (_, Err(why)) => ClockProbe::Unread(why),
        }
    }

    /// Why this result's GPU ran slower than it can, where it did: its SM clock right
    /// after the work under [`THROTTLE_THRESHOLD`] of its maximum, or a slowdown reason
    /// set then (a reason set only before, on an idle GPU, does not count; reasons NVML
    /// could not read say nothing).
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
        let slowdowns: Vec<&str> = (after.reasons.read().into_iter().flatten())
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
    /// MHz; 41 °C, 123 W after; held down by: none"; what NVML could not read is said
    /// unread, with why.
    pub fn describe(&self) -> String {
        match self {
            ClockProbe::Unread(why) => format!("clocks not read: {why}"),
            ClockProbe::Read { before, after } => {
                let state = [
                    (after.temperature_c.as_ref()).map(|t| t.text(|t| format!("{t} °C"))),
                    (after.power_w.as_ref()).map(|w| w.text(|w| format!("{w:.0} W"))),
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
                    after.reasons.text(|reasons| {
                        let reasons: Vec<&str> = (reasons.iter())
                            .map(String::as_str)
                            .filter(|r| *r != "gpu_idle")
                            .collect();
                        if reasons.is_empty() {
                            "nothing".to_owned()
                        } else {
                            reasons.join(", ")
                        }
                    })
                )
            }
        }
    }
}

/// A GPU's PCIe link to the host as NVML reads it: its generation and width now, and the
/// most it can reach (an idle link may train down to save power).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcieLink {
    pub generation: u32,
    pub width: u32,
    pub max_generation: u32,
    pub max_width: u32,
}

impl PcieLink {
    /// E.g. "PCIe gen 5 x16 (at most gen 5 x16)".
    pub fn describe(&self) -> String {
        format!(
            "PCIe gen {} x{} (at most gen {} x{})",
            self.generation, self.width, self.max_generation, self.max_width
        )
    }
}

/// One GPU of an experiment that ran on several: its clocks just before and just after
/// the experiment, and its link to the host read right after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuProbe {
    pub ordinal: usize,
    pub clocks: ClockProbe,
    /// Its PCIe link as sysfs says it (as [`crate::DeviceInfo::pcie_link`]),
    /// where the system shows it.
    pub pcie_link: Option<String>,
    /// Its PCIe link as NVML reads it.
    pub pcie: Reading<PcieLink>,
}

impl GpuProbe {
    /// Its host link in words: NVML's reading, and sysfs's where it has one.
    pub fn host_link(&self) -> String {
        let nvml = self.pcie.text(PcieLink::describe);
        match &self.pcie_link {
            Some(sysfs) => format!("{nvml}, {sysfs}"),
            None => nvml,
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
            reasons: Reading::Read(reasons.iter().map(|r| (*r).to_owned()).collect()),
            temperature_c: Some(Reading::Read(40)),
            power_w: Some(Reading::Read(120.0)),
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

    #[test]
    fn reasons_nvml_could_not_read_are_unread_with_why_not_an_empty_list() {
        let refused =
            Reading::of::<String>("the throttle reasons", Err("Not Supported".to_owned()));
        let unread = GpuClocks {
            reasons: refused.clone(),
            temperature_c: Some(Reading::of("the temperature", Err("Unknown Error"))),
            power_w: None,
            ..clocks(1980, &[])
        };
        assert_ne!(unread.reasons, Reading::Read(Vec::new()));
        let probe = ClockProbe::Read {
            before: unread.clone(),
            after: unread,
        };
        let words = probe.describe();
        assert!(
            words.ends_with(
                "held down by: unread (NVML cannot read the throttle reasons (Not Supported))"
            ),
            "{words}"
        );
        assert!(
            words.contains("; unread (NVML cannot read the temperature (Unknown Error)) after;"),
            "{words}"
        );
        // Unread reasons mark nothing; a slow clock still does.
        assert_eq!(probe.held_back(), None);
        // Saved as {"unread": why}, read back as such; an empty list stays a read one.
        let json = serde_json::to_string(&refused).unwrap();
        assert_eq!(
            json,
            r#"{"unread":"NVML cannot read the throttle reasons (Not Supported)"}"#
        );
        assert_eq!(
            serde_json::from_str::<Reading<Vec<String>>>(&json).unwrap(),
            refused
        );
        assert_eq!(
            serde_json::from_str::<Reading<Vec<String>>>("[]").unwrap(),
            Reading::Read(Vec::new())
        );
    }

    #[test]
    fn clocks_saved_before_unread_was_recorded_still_read() {
        let old = r#"{"sm_mhz":1980,"sm_max_mhz":1980,"memory_mhz":3201,"memory_max_mhz":3201,
            "reasons":["gpu_idle"],"temperature_c":null,"power_w":146.882}"#;
        let c: GpuClocks = serde_json::from_str(old).unwrap();
        assert_eq!(c.reasons, Reading::Read(vec!["gpu_idle".to_owned()]));
        assert_eq!(
            (&c.temperature_c, &c.power_w),
            (&None, &Some(Reading::Read(146.882)))
        );
        // Written back as it was.
        let again = serde_json::to_value(&c).unwrap();
        assert_eq!(again["reasons"], serde_json::json!(["gpu_idle"]));
        assert_eq!(again["power_w"], serde_json::json!(146.882));
    }
}
