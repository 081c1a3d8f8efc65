//! How two GPUs of one machine are joined, as NVML reports it: the active NVLinks from
//! one to the other (directly or through NVSwitches), their version and each link's rate,
//! or PCIe where no NVLink joins them. What a copy between them can reach is the links'
//! rate: `links × per-link rate` one way, twice that both ways at once
//! ([`PairLink::rate_gbps`]). Reading it never fails a run: where NVML is missing or
//! refuses, the entry says why, never an empty value that reads as "no links".
use serde::{Deserialize, Serialize};

/// A value NVML gave, or why it did not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reading<T> {
    Read(T),
    /// What NVML said instead.
    Unread(String),
}

impl<T> Reading<T> {
    pub fn read(&self) -> Option<&T> {
        match self {
            Reading::Read(value) => Some(value),
            Reading::Unread(_) => None,
        }
    }
}

/// One GPU's PCIe link as NVML reports it now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcieLink {
    pub generation: u32,
    /// Lanes.
    pub width: u32,
}

/// How one GPU reaches another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Joined {
    /// Over NVLink.
    NvLink {
        /// The active links that carry a copy from the source to the destination: those
        /// of the source whose far end is the destination, or, through NVSwitches, the
        /// fewer of the two GPUs' links to the switches they share.
        links: u32,
        /// Whether the links end at NVSwitches rather than at the other GPU.
        switched: bool,
        /// NVML's version of the source's first such link (`nvmlNvlinkVersion_t`: 6 is
        /// NVLink 4.0).
        version: Reading<u32>,
        /// Each link's rate one way, GB/s (NVML's common NVLink speed, MB/s over 1000).
        per_link_gbps: Reading<f64>,
    },
    /// No active NVLink joins them: PCIe, each GPU's own link as NVML reports it.
    Pcie {
        src: Reading<PcieLink>,
        dst: Reading<PcieLink>,
    },
    /// NVML could not tell (missing, or refused): why.
    Unread(String),
}

/// How the GPU `src` reaches the GPU `dst` (ordinals).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairLink {
    pub src: usize,
    pub dst: usize,
    pub joined: Joined,
}

impl PairLink {
    /// The NVLinks' rate for copies in `directions` directions at once (1: one way, 2:
    /// both ways), GB/s: links × per-link rate × directions. `None` over PCIe, or where
    /// NVML did not give the rate.
    pub fn rate_gbps(&self, directions: u64) -> Option<f64> {
        match &self.joined {
            Joined::NvLink {
                links,
                per_link_gbps: Reading::Read(per_link),
                ..
            } if *links > 0 => Some(f64::from(*links) * per_link * directions as f64),
            _ => None,
        }
    }

    /// How they are joined, in a few words: "18 × NVLink 4.0 through NVSwitch",
    /// "PCIe 5.0 x16", "not read (…)".
    pub fn describe(&self) -> String {
        match &self.joined {
            Joined::NvLink {
                links,
                switched,
                version,
                ..
            } => format!(
                "{links} × NVLink{}{}",
                version
                    .read()
                    .map_or(String::new(), |v| format!(" {}", nvlink_version(*v))),
                if *switched { " through NVSwitch" } else { "" }
            ),
            Joined::Pcie { src, dst } => match (src.read(), dst.read()) {
                (Some(a), Some(b)) if a == b => format!("PCIe {}", pcie(a)),
                (Some(a), Some(b)) => format!("PCIe ({} to {})", pcie(a), pcie(b)),
                _ => "PCIe".into(),
            },
            Joined::Unread(why) => format!("not read ({why})"),
        }
    }
}

/// NVML's NVLink version (`nvmlNvlinkVersion_t`) as the NVLink generation it names,
/// e.g. 6 → "4.0"; an unknown number as NVML gave it.
pub fn nvlink_version(nvml: u32) -> String {
    match nvml {
        1 => "1.0".into(),
        2 => "2.0".into(),
        3 => "2.2".into(),
        4 => "3.0".into(),
        5 => "3.1".into(),
        6 => "4.0".into(),
        7 => "5.0".into(),
        other => format!("(NVML version {other})"),
    }
}

/// "5.0 x16": PCIe generation 5 over 16 lanes.
fn pcie(link: &PcieLink) -> String {
    format!("{}.0 x{}", link.generation, link.width)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nvlink(links: u32, per_link: Reading<f64>) -> PairLink {
        PairLink {
            src: 0,
            dst: 1,
            joined: Joined::NvLink {
                links,
                switched: true,
                version: Reading::Read(6),
                per_link_gbps: per_link,
            },
        }
    }

    #[test]
    fn the_rate_is_links_times_the_per_link_rate_and_twice_that_both_ways() {
        let link = nvlink(18, Reading::Read(26.5625));
        assert!((link.rate_gbps(1).unwrap() - 478.125).abs() < 1e-9);
        assert!((link.rate_gbps(2).unwrap() - 956.25).abs() < 1e-9);
        assert_eq!(link.describe(), "18 × NVLink 4.0 through NVSwitch");
        let unread = nvlink(18, Reading::Unread("NVML refused".into()));
        assert_eq!(unread.rate_gbps(1), None, "no rate where NVML gave none");
        assert_eq!(nvlink(0, Reading::Read(25.0)).rate_gbps(1), None);
        let pcie = PairLink {
            src: 0,
            dst: 1,
            joined: Joined::Pcie {
                src: Reading::Read(PcieLink {
                    generation: 5,
                    width: 16,
                }),
                dst: Reading::Read(PcieLink {
                    generation: 5,
                    width: 16,
                }),
            },
        };
        assert_eq!(pcie.rate_gbps(1), None);
        assert_eq!(pcie.describe(), "PCIe 5.0 x16");
    }

    #[test]
    fn a_failed_reading_says_why_and_reads_back() {
        let link = PairLink {
            src: 1,
            dst: 0,
            joined: Joined::Unread("NVML could not be loaded".into()),
        };
        let json = serde_json::to_string(&link).unwrap();
        assert!(
            json.contains("\"unread\":\"NVML could not be loaded\""),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<PairLink>(&json).unwrap(), link);
        assert_eq!(nvlink_version(9), "(NVML version 9)");
    }
}
