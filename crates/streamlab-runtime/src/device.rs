//! Reading what a GPU is: name, compute capability, engines, memory, driver, PCIe link.
use cudarc::driver::{result, sys};

use crate::{Context, RuntimeError, raw};
use streamlab_record::DeviceInfo;

use sys::CUdevice_attribute as A;

/// Describe `device` (whose context is current).
pub fn query_info(ordinal: usize, device: sys::CUdevice) -> Result<DeviceInfo, RuntimeError> {
    let attr = |a: A| -> Result<i32, RuntimeError> {
        // SAFETY: `device` is a valid handle.
        unsafe { result::device::get_attribute(device, a) }.doing("reading device attributes")
    };
    let version = raw::driver_version().doing("reading the driver version")?;
    let pci = pci_address(device)?;
    Ok(DeviceInfo {
        ordinal,
        name: result::device::get_name(device).doing("reading the device name")?,
        compute_capability: (
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ),
        sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        copy_engines: attr(A::CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT)?,
        concurrent_kernels: attr(A::CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS)? != 0,
        // SAFETY: `device` is a valid handle.
        total_memory_bytes: unsafe { result::device::total_mem(device) }
            .doing("reading the memory size")? as u64,
        l2_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?.max(0) as u64,
        driver_cuda_version: format!("{}.{}", version / 1000, version % 1000 / 10),
        pcie_link: pcie_link(&pci),
    })
}

/// The driver's handle of the GPU of ordinal `ordinal` (its context need not exist).
pub(crate) fn handle(ordinal: usize) -> Result<sys::CUdevice, RuntimeError> {
    if !crate::driver_present() {
        return Err(RuntimeError::NoDriver);
    }
    result::init().doing("initialising the driver")?;
    let count = result::device::get_count().doing("counting GPUs")? as usize;
    if ordinal >= count {
        return Err(RuntimeError::NoDevice { ordinal, count });
    }
    result::device::get(ordinal as i32).doing("opening the GPU")
}

/// `device`'s PCI address, "dddd:bb:dd.0", as sysfs and NVML name it.
pub(crate) fn pci_address(device: sys::CUdevice) -> Result<String, RuntimeError> {
    let attr = |a: A| -> Result<i32, RuntimeError> {
        // SAFETY: `device` is a valid handle.
        unsafe { result::device::get_attribute(device, a) }.doing("reading device attributes")
    };
    Ok(format!(
        "{:04x}:{:02x}:{:02x}.0",
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?,
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?,
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?
    ))
}

/// "PCIe 32.0 GT/s x16" from sysfs, where the device's PCI function is visible.
pub(crate) fn pcie_link(pci: &str) -> Option<String> {
    let base = format!("/sys/bus/pci/devices/{pci}");
    let read = |file: &str| std::fs::read_to_string(format!("{base}/{file}")).ok();
    let speed = read("current_link_speed")?;
    let width = read("current_link_width")?;
    Some(format!(
        "PCIe {} x{}",
        speed.trim().trim_end_matches(" PCIe"),
        width.trim()
    ))
}
