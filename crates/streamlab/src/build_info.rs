//! What made a result, beside its GPU: how this binary was built (recorded by the build
//! script: the commit and whether the tree differed from it, the host's and the kernels'
//! compilers, the profile) and the machine it runs on (the NVIDIA driver's version, the
//! CPU, the command line). Every result's provenance carries both.
use streamlab_results::saved::{BuildInfo, HostInfo};

/// How this binary was built.
pub fn build() -> BuildInfo {
    let commit = env!("STREAMLAB_COMMIT");
    BuildInfo {
        commit: (!commit.is_empty()).then(|| commit.to_owned()),
        dirty: match env!("STREAMLAB_DIRTY") {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        },
        host_rustc: env!("STREAMLAB_HOST_RUSTC").to_owned(),
        kernel_rustc: env!("STREAMLAB_KERNEL_RUSTC").to_owned(),
        profile: env!("STREAMLAB_PROFILE").to_owned(),
    }
}

/// The machine this process runs on, and its command line; `nvrtc` is the NVRTC that
/// compiled the CUDA C++ twins, if any did.
pub fn host(nvrtc: Option<String>) -> HostInfo {
    HostInfo {
        driver_version: std::fs::read_to_string("/proc/driver/nvidia/version")
            .ok()
            .and_then(|t| driver_version(&t)),
        nvrtc,
        cpu: std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| cpu_model(&t)),
        command_line: std::env::args().collect::<Vec<_>>().join(" "),
    }
}

/// The version in `/proc/driver/nvidia/version`'s first line ("NVRM version: NVIDIA UNIX
/// x86_64 Kernel Module  580.159.04  Thu …"): its first word made of digits and dots.
fn driver_version(text: &str) -> Option<String> {
    let line = text.lines().next()?;
    line.split_whitespace()
        .find(|w| w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_owned)
}

/// The first `model name` of `/proc/cpuinfo`.
fn cpu_model(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|rest| rest.split_once(':'))
        .map(|(_, name)| name.trim().to_owned())
        .filter(|name| !name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_driver_and_cpu_are_read_from_the_systems_files() {
        let version = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct 30 2025\nGCC version:  gcc 12\n";
        assert_eq!(driver_version(version).as_deref(), Some("580.159.04"));
        assert_eq!(driver_version("nothing here"), None);
        let cpu = "processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor\n";
        assert_eq!(
            cpu_model(cpu).as_deref(),
            Some("AMD EPYC 9654 96-Core Processor")
        );
        assert_eq!(cpu_model("processor: 0\n"), None);
    }

    #[test]
    fn this_build_is_recorded() {
        let b = build();
        assert!(b.host_rustc.starts_with("rustc "), "{}", b.host_rustc);
        assert!(!b.profile.is_empty());
        if let Some(commit) = &b.commit {
            assert_eq!(commit.len(), 40, "{commit}");
            assert!(b.dirty.is_some());
        }
    }
}
