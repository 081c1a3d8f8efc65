//! What made a result and where, as the report and the printed tables say it: the GPU,
//! the link probed around an experiment, every GPU's clocks and host link, and the build.
use crate::derived::rates::{NOISY_LINK, link_moved};
use crate::saved::clocks::GpuProbe;
use crate::saved::{BuildInfo, DeviceInfo, HostInfo, NOT_RECORDED, Provenance};

/// The link probed around an experiment, e.g. "link both ways 96.1 GB/s before, 95.0
/// GB/s after (moved 1.1%)", marked "machine noisy" when it moved more than
/// [`NOISY_LINK`].
pub fn link(p: &Provenance) -> Option<String> {
    let (before, after, fraction) = link_moved(p.link.as_ref()?);
    let moved = 100.0 * fraction;
    let noisy =
        (fraction > NOISY_LINK).then(|| format!("machine noisy: link rate moved {moved:.1}%; "));
    let noisy = noisy.unwrap_or_default();
    Some(format!(
        "{noisy}link both ways {before:.1} GB/s before, {after:.1} GB/s after (moved {moved:.1}%)"
    ))
}

/// The GPU's clocks around an experiment (each GPU's, named, for an experiment of
/// several), led by "GPU held back: …" where they were held down while it ran
/// ([`Provenance::held_back`]); "not recorded" where the result predates them.
pub fn clocks(p: &Provenance) -> String {
    let described = if p.gpus.is_empty() {
        let not_recorded =
            || format!("{NOT_RECORDED}: results before 2026-11-26 did not read the GPU's clocks");
        (p.clocks.as_ref()).map_or_else(not_recorded, |c| c.describe())
    } else {
        each_gpu(p, |g| g.clocks.describe())
    };
    match p.held_back() {
        Some(why) => {
            format!("GPU held back: {why}; this result ran slower than the GPU can. {described}")
        }
        None => described,
    }
}

/// Each GPU's link to the host, for an experiment of several GPUs, e.g. "GPU 0: PCIe gen
/// 5 x16 (at most gen 5 x16); GPU 1: …".
pub fn host_links(p: &Provenance) -> Option<String> {
    (!p.gpus.is_empty()).then(|| each_gpu(p, |g| g.host_link()))
}

/// "GPU 0: …; GPU 1: …", each of the result's GPUs as `what` says it.
fn each_gpu(p: &Provenance, what: impl Fn(&GpuProbe) -> String) -> String {
    (p.gpus.iter())
        .map(|g| format!("GPU {}: {}", g.ordinal, what(g)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// What made a result, as `(label, value)` rows of a header: the streamlab, its kernels,
/// the build and the machine, "not recorded" where the result's format predates them.
pub fn build_facts(p: &Provenance) -> Vec<(&'static str, String)> {
    let known = |v: Option<String>| v.unwrap_or_else(|| NOT_RECORDED.to_owned());
    let build = |f: fn(&BuildInfo) -> String| known(p.build.as_ref().map(f));
    let host = |f: fn(&HostInfo) -> Option<String>| known(p.host.as_ref().and_then(f));
    let form = p.form.label();
    let mut facts = vec![
        ("streamlab", p.streamlab_version.clone()),
        ("Rust PTX target", p.ptx_target.clone()),
        (
            "Kernel form",
            format!("{form} (unless a section says otherwise)"),
        ),
        ("Commit", build(BuildInfo::commit_text)),
        ("Rust compiler (host)", build(|b| b.host_rustc.clone())),
        ("Rust compiler (kernels)", build(|b| b.kernel_rustc.clone())),
        ("Build profile", build(|b| b.profile.clone())),
        ("NVIDIA driver", host(|h| h.driver_version.clone())),
        (
            "NVRTC",
            host(|h| Some(h.nvrtc.clone().unwrap_or_else(|| "none found".into()))),
        ),
        ("CPU", host(|h| h.cpu.clone())),
        ("Command line", host(|h| Some(h.command_line.clone()))),
    ];
    if let Some(n) = &p.nccl {
        let (vars, found_in) = (n.variables.join(" "), &n.found_in);
        let nccl = format!("{} at {} (found in {found_in}); {vars}", n.version, n.path);
        facts.push(("NCCL", nccl));
    }
    facts
}

pub fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

/// One line naming the GPU.
pub fn device(info: &DeviceInfo) -> String {
    let (major, minor) = info.compute_capability;
    let (name, sms, engines) = (&info.name, info.sm_count, info.copy_engines);
    let concurrent = crate::report::table::yes_no(info.concurrent_kernels);
    let (gib, cuda) = (gib(info.total_memory_bytes), &info.driver_cuda_version);
    let link = (info.pcie_link.as_ref()).map_or(String::new(), |l| format!(", {l}"));
    format!(
        "GPU {}: {name} (compute {major}.{minor}, {sms} SMs, {engines} copy engines, concurrent kernels: {concurrent}, {gib:.1} GiB, CUDA driver {cuda}{link})\n",
        info.ordinal
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_gpu_of_several_is_in_the_clocks_note_and_one_held_back_is_named() {
        use crate::saved::clocks::{ClockProbe, GpuClocks, GpuProbe, PcieLink, Reading};
        let at = |sm_mhz: u32, reasons: &[&str]| GpuClocks {
            sm_mhz,
            sm_max_mhz: 1980,
            memory_mhz: 3201,
            memory_max_mhz: 3201,
            reasons: Reading::Read(reasons.iter().map(|r| (*r).to_owned()).collect()),
            temperature_c: None,
            power_w: None,
        };
        let mut p = Provenance::made_up();
        let never = "not recorded: results before 2026-11-26 did not read the GPU's clocks";
        assert_eq!(clocks(&p), never);
        assert!(!p.clocks_read() && host_links(&p).is_none());
        let read = |after| ClockProbe::Read {
            before: at(1980, &[]),
            after,
        };
        p.clocks = Some(read(at(1980, &[])));
        assert!(p.clocks_read() && p.held_back().is_none());
        let probe = |ordinal: usize, after: GpuClocks| GpuProbe {
            ordinal,
            clocks: read(after),
            pcie_link: Some("PCIe 32.0 GT/s x16".into()),
            pcie: Reading::Read(PcieLink {
                generation: 5,
                width: 16,
                max_generation: 5,
                max_width: 16,
            }),
        };
        let held = probe(1, at(1800, &["sw_power_cap"]));
        p.gpus = vec![probe(0, at(1980, &[])), held];
        assert_eq!(p.held_back().unwrap(), "GPU 1: held down by sw_power_cap");
        let note = clocks(&p);
        assert!(
            note.starts_with("GPU held back: GPU 1: held down by sw_power_cap; this result ran slower than the GPU can. GPU 0: SM 1980 MHz before, 1980 after")
                && note.contains("; GPU 1: SM 1980 MHz before, 1800 after"),
            "{note}"
        );
        let links = "GPU 0: PCIe gen 5 x16 (at most gen 5 x16), PCIe 32.0 GT/s x16; GPU 1: PCIe gen 5 x16 (at most gen 5 x16), PCIe 32.0 GT/s x16";
        assert_eq!(host_links(&p).unwrap(), links);
        // One GPU unread: whether it held back is not known.
        p.gpus[1].clocks = ClockProbe::Unread("NVML could not be loaded".into());
        assert!(!p.clocks_read() && p.held_back().is_none());
        assert!(clocks(&p).ends_with("GPU 1: clocks not read: NVML could not be loaded"));
    }
}
