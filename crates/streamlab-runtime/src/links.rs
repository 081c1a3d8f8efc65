//! How the run's GPUs are joined, read through NVML
//! ([`streamlab_record::links`]): for each ordered pair, the active NVLinks of
//! the first whose far end is the second, or, where the GPUs hang off NVSwitches, the
//! links of both that end at the switches they share; the links' version and rate; PCIe
//! where no NVLink joins them. Reading never fails a run: where NVML is missing or
//! refuses, the pair's entry says why.
use nvml_wrapper::Device;
use nvml_wrapper::enums::device::SampleValue;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::struct_wrappers::device::PciInfo;
use nvml_wrapper::structs::device::FieldId;
use nvml_wrapper::sys_exports::field_id::{
    NVML_FI_DEV_NVLINK_GET_SPEED, NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON,
    NVML_FI_DEV_NVLINK_SPEED_MBPS_L0, NVML_FI_DEV_NVLINK_SPEED_MBPS_L6,
};
use streamlab_record::links::{Joined, PairLink, PcieLink, Reading};

use crate::{Gpu, clocks, device};

/// The most NVLinks a GPU has (`NVML_NVLINK_MAX_LINKS`).
const MAX_LINKS: u32 = 18;

/// A PCI address: domain, bus, device.
type Address = (u32, u32, u32);

/// One active NVLink of a GPU: its index, NVML's version of it and its far end.
#[derive(Debug, Clone)]
struct Link {
    index: u32,
    version: Reading<u32>,
    remote: Address,
}

/// One GPU as NVML shows it: its NVML handle, its PCI address and its active NVLinks
/// (none on a GPU without NVLink).
struct Ends<'n> {
    device: Device<'n>,
    address: Address,
    links: Vec<Link>,
}

/// How each ordered pair of `gpus` is joined, in the order of the pairs (every GPU to
/// every other, by source then destination).
pub fn read(gpus: &[&Gpu]) -> Vec<PairLink> {
    let ordinals: Vec<usize> = gpus.iter().map(|g| g.info().ordinal).collect();
    let pairs: Vec<(usize, usize)> = (0..gpus.len())
        .flat_map(|s| {
            (0..gpus.len())
                .filter(move |&d| d != s)
                .map(move |d| (s, d))
        })
        .collect();
    let pair = |(s, d): (usize, usize), joined| PairLink {
        src: ordinals[s],
        dst: ordinals[d],
        joined,
    };
    let nvml = match clocks::nvml() {
        Ok(nvml) => nvml,
        Err(why) => {
            return (pairs.into_iter())
                .map(|p| pair(p, Joined::Unread(why.clone())))
                .collect();
        }
    };
    let machine = machine_addresses(nvml);
    let ends: Vec<Result<Ends, String>> = gpus.iter().map(|gpu| ends(gpu)).collect();
    (pairs.into_iter())
        .map(|(s, d)| {
            let joined = match (&ends[s], &ends[d]) {
                (Err(why), _) | (_, Err(why)) => Joined::Unread(why.clone()),
                (Ok(a), Ok(b)) => joined(a, b, machine.as_deref().unwrap_or(&[])),
            };
            pair((s, d), joined)
        })
        .collect()
}

/// How `a` reaches `b`, among the GPUs at `machine`.
fn joined(a: &Ends, b: &Ends, machine: &[Address]) -> Joined {
    let mut gpus = machine.to_vec();
    gpus.extend([a.address, b.address]);
    match between(&a.links, (&b.links, b.address), &gpus) {
        Some((links, switched, first)) => Joined::NvLink {
            links,
            switched,
            version: first.version.clone(),
            per_link_gbps: per_link_rate(&a.device, first.index),
        },
        None => Joined::Pcie {
            src: pcie(&a.device),
            dst: pcie(&b.device),
        },
    }
}

/// The links that carry a copy from a GPU with active links `a` to the GPU at
/// `b_address` with active links `b`, whether they go through switches, and the first of
/// them: `a`'s links whose far end is that GPU; where none is, `a`'s and `b`'s links
/// that end at a device both reach that is none of the GPUs at `gpus` (an NVSwitch), the
/// fewer of the two. `None` where no NVLink joins them.
fn between<'l>(
    a: &'l [Link],
    (b, b_address): (&[Link], Address),
    gpus: &[Address],
) -> Option<(u32, bool, &'l Link)> {
    let direct: Vec<&Link> = a.iter().filter(|l| l.remote == b_address).collect();
    if let Some(first) = direct.first() {
        return Some((direct.len() as u32, false, first));
    }
    let switch = |l: &&Link| !gpus.contains(&l.remote);
    let reaches = |links: &[Link], remote: Address| links.iter().any(|l| l.remote == remote);
    let out: Vec<&Link> = (a.iter().filter(switch))
        .filter(|l| reaches(b, l.remote))
        .collect();
    let into = (b.iter().filter(switch))
        .filter(|l| reaches(a, l.remote))
        .count();
    let links = out.len().min(into);
    (links > 0).then(|| (links as u32, true, out[0]))
}

/// `gpu` in NVML: its handle, address and active NVLinks, or why not.
fn ends(gpu: &Gpu) -> Result<Ends<'static>, String> {
    let pci = device::pci_address(gpu.device).map_err(|e| e.to_string())?;
    let device = clocks::nvml_device(&pci)?;
    let address = (device.pci_info())
        .map(|p| address_of(&p))
        .map_err(|e| format!("NVML cannot read the PCI address of the GPU at {pci} ({e})"))?;
    let mut links = Vec::new();
    for index in 0..MAX_LINKS {
        let link = device.link_wrapper_for(index);
        match link.is_active() {
            Ok(true) => links.push(Link {
                index,
                version: (link.version()).map_or_else(
                    |e| Reading::Unread(format!("NVML cannot read NVLink {index}'s version ({e})")),
                    Reading::Read,
                ),
                remote: (link.remote_pci_info())
                    .map(|p| address_of(&p))
                    .map_err(|e| {
                        format!(
                            "NVML cannot read where NVLink {index} of the GPU at {pci} ends ({e})"
                        )
                    })?,
            }),
            // No such link, or no NVLink on this GPU at all.
            Ok(false) | Err(NvmlError::NotSupported | NvmlError::InvalidArg) => {}
            Err(e) => {
                return Err(format!(
                    "NVML cannot read the state of NVLink {index} of the GPU at {pci} ({e})"
                ));
            }
        }
    }
    Ok(Ends {
        device,
        address,
        links,
    })
}

/// Every GPU of the machine's PCI address, so that a link to another GPU is never taken
/// for a link to a switch; `None` where NVML cannot list them.
fn machine_addresses(nvml: &nvml_wrapper::Nvml) -> Option<Vec<Address>> {
    let count = nvml.device_count().ok()?;
    (0..count)
        .map(|i| {
            let device = nvml.device_by_index(i).ok()?;
            device.pci_info().ok().map(|p| address_of(&p))
        })
        .collect()
}

fn address_of(pci: &PciInfo) -> Address {
    (pci.domain, pci.bus, pci.device)
}

/// Each NVLink's rate one way, GB/s: NVML's speed of link `first` (the field scoped to
/// one link, which drivers of NVLink 4 answer), else the common speed of the active
/// links, else link `first`'s own speed field (NVML names those of links 0 to 11 only).
fn per_link_rate(device: &Device, first: u32) -> Reading<f64> {
    let scoped = link_speed_mbps(device, first);
    let common = || mbps(device, NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON);
    let own = || match first {
        0..=5 => mbps(device, NVML_FI_DEV_NVLINK_SPEED_MBPS_L0 + first),
        6..=11 => mbps(device, NVML_FI_DEV_NVLINK_SPEED_MBPS_L6 + first - 6),
        _ => Err(format!("NVML names no speed field of NVLink {first}")),
    };
    let read = scoped.or_else(|a| common().map_err(|b| format!("{a}; {b}")));
    match read.or_else(|ab| own().map_err(|c| format!("{ab}; {c}"))) {
        Ok(rate) => Reading::Read(rate / 1000.0),
        Err(why) => Reading::Unread(why),
    }
}

/// NVML's speed of NVLink `link` of `device` in MB/s (`NVML_FI_DEV_NVLINK_GET_SPEED`,
/// scoped to the link: nvml-wrapper's field reads leave the scope 0, so this one goes
/// through NVML's own call).
fn link_speed_mbps(device: &Device, link: u32) -> Result<f64, String> {
    use nvml_wrapper_sys::bindings::{
        nvmlFieldValue_t, nvmlReturn_enum_NVML_SUCCESS, nvmlValueType_enum_NVML_VALUE_TYPE_DOUBLE,
        nvmlValueType_enum_NVML_VALUE_TYPE_SIGNED_LONG_LONG,
        nvmlValueType_enum_NVML_VALUE_TYPE_UNSIGNED_INT,
        nvmlValueType_enum_NVML_VALUE_TYPE_UNSIGNED_LONG,
        nvmlValueType_enum_NVML_VALUE_TYPE_UNSIGNED_LONG_LONG,
    };
    let id = NVML_FI_DEV_NVLINK_GET_SPEED;
    // SAFETY: an all-zero field request is valid; its id and scope are set below.
    let mut field: nvmlFieldValue_t = unsafe { std::mem::zeroed() };
    field.fieldId = id;
    field.scopeId = link;
    // SAFETY: the device handle is live for `device`'s life, and NVML writes one value
    // into the one request it is given.
    let code = unsafe {
        device
            .nvml()
            .lib()
            .nvmlDeviceGetFieldValues(device.handle(), 1, &mut field)
    };
    if code != nvmlReturn_enum_NVML_SUCCESS || field.nvmlReturn != nvmlReturn_enum_NVML_SUCCESS {
        return Err(format!(
            "NVML cannot read field {id} of NVLink {link} (return {code}, field {})",
            field.nvmlReturn
        ));
    }
    // SAFETY: the union's member is the one `valueType` names.
    let value = unsafe {
        match field.valueType {
            t if t == nvmlValueType_enum_NVML_VALUE_TYPE_DOUBLE => field.value.dVal,
            t if t == nvmlValueType_enum_NVML_VALUE_TYPE_UNSIGNED_INT => {
                f64::from(field.value.uiVal)
            }
            t if t == nvmlValueType_enum_NVML_VALUE_TYPE_UNSIGNED_LONG => field.value.ulVal as f64,
            t if t == nvmlValueType_enum_NVML_VALUE_TYPE_UNSIGNED_LONG_LONG => {
                field.value.ullVal as f64
            }
            t if t == nvmlValueType_enum_NVML_VALUE_TYPE_SIGNED_LONG_LONG => {
                field.value.sllVal as f64
            }
            other => return Err(format!("NVML gave field {id} as value type {other}")),
        }
    };
    if value > 0.0 && value.is_finite() {
        Ok(value)
    } else {
        Err(format!(
            "NVML gave {value} MB/s for field {id} of NVLink {link}"
        ))
    }
}

/// Field `id` of `device` in MB/s: a positive number, or why not.
fn mbps(device: &Device, id: u32) -> Result<f64, String> {
    let cannot = |e: &dyn std::fmt::Display| format!("NVML cannot read field {id} ({e})");
    let sample = (device.field_values_for(&[FieldId(id)]))
        .map_err(|e| cannot(&e))?
        .into_iter()
        .next()
        .ok_or_else(|| format!("NVML returned no value of field {id}"))?
        .map_err(|e| cannot(&e))?;
    let value = match sample.value.map_err(|e| cannot(&e))? {
        SampleValue::F64(v) => v,
        SampleValue::U32(v) => f64::from(v),
        SampleValue::U64(v) => v as f64,
        SampleValue::I64(v) => v as f64,
    };
    if value > 0.0 && value.is_finite() {
        Ok(value)
    } else {
        Err(format!("NVML gave {value} MB/s for field {id}"))
    }
}

/// `device`'s PCIe link now, or why not.
fn pcie(device: &Device) -> Reading<PcieLink> {
    let read = || {
        Ok::<_, NvmlError>(PcieLink {
            generation: device.current_pcie_link_gen()?,
            width: device.current_pcie_link_width()?,
        })
    };
    read().map_or_else(
        |e| Reading::Unread(format!("NVML cannot read the PCIe link ({e})")),
        Reading::Read,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const GPU_A: Address = (0, 0x18, 0);
    const GPU_B: Address = (0, 0x2a, 0);
    const GPU_C: Address = (0, 0x3a, 0);

    fn links(remotes: &[Address]) -> Vec<Link> {
        (remotes.iter().enumerate())
            .map(|(i, &remote)| Link {
                index: i as u32,
                version: Reading::Read(6),
                remote,
            })
            .collect()
    }

    #[test]
    fn direct_links_count_those_that_end_at_the_other_gpu() {
        let a = links(&[GPU_B, GPU_B, GPU_C, GPU_B]);
        let b = links(&[GPU_A, GPU_A, GPU_A]);
        let (count, switched, first) = between(&a, (&b, GPU_B), &[GPU_A, GPU_B, GPU_C]).unwrap();
        assert_eq!((count, switched, first.index), (3, false, 0));
    }

    #[test]
    fn through_switches_the_fewer_of_both_gpus_links_to_shared_switches_count() {
        let switches: Vec<Address> = (0..4).map(|s| (0, 0x80 + s, 0)).collect();
        // A's 18 links spread over four switches (5, 4, 4, 5); B reaches only three.
        let a: Vec<Address> = [5, 4, 4, 5]
            .iter()
            .zip(&switches)
            .flat_map(|(&n, &s)| std::iter::repeat_n(s, n))
            .collect();
        let b: Vec<Address> = [5, 4, 4]
            .iter()
            .zip(&switches)
            .flat_map(|(&n, &s)| std::iter::repeat_n(s, n))
            .collect();
        let (a, b) = (links(&a), links(&b));
        let gpus = [GPU_A, GPU_B];
        let (count, switched, _) = between(&a, (&b, GPU_B), &gpus).unwrap();
        assert_eq!((count, switched), (13, true), "A sends on 13, B takes 13");
        let (count, ..) = between(&b, (&a, GPU_A), &gpus).unwrap();
        assert_eq!(count, 13);
    }

    #[test]
    fn no_nvlink_or_a_link_to_a_third_gpu_is_not_a_path() {
        assert!(between(&[], (&[], GPU_B), &[GPU_A, GPU_B]).is_none());
        // Both reach GPU C directly: C is a GPU, not a switch between them.
        let a = links(&[GPU_C]);
        let b = links(&[GPU_C]);
        assert!(between(&a, (&b, GPU_B), &[GPU_A, GPU_B, GPU_C]).is_none());
    }
}
