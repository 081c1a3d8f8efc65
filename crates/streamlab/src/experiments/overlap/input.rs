//! The user's input: the kernel's entry checked against the shape it must have, its
//! scalars as the PTX declares them, and its arrays read from `.npy` files.
use crate::experiments::RunError;
use crate::verify::Bits;
use nvptx_kernel::PtxType;
use std::path::Path;
use streamlab_results::saved::UsageError;

/// Check the entry's shape and parse the extra arguments; returns the entry's parameter
/// types and the extra arguments' bytes.
pub(super) fn check_entry(
    text: &str,
    file: &Path,
    name: &str,
    args: &[String],
) -> Result<(Vec<String>, Vec<Vec<u8>>), UsageError> {
    let summary = nvptx_builder::ptx::parse(text);
    let Some(entry) = summary.entry(name) else {
        let names: Vec<&str> = summary.entries.iter().map(|e| e.name.as_str()).collect();
        return Err(UsageError::new(format!(
            "{} has no kernel `{name}`; its entries are: {}",
            file.display(),
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )));
    };
    let types: Vec<Option<PtxType>> = entry.params.iter().map(|t| PtxType::parse(t)).collect();
    let slices = types.len() >= 4 && types[..4].iter().all(|t| *t == Some(PtxType::Int64));
    if !slices {
        return Err(UsageError::new(format!(
            "kernel `{name}` takes ({}), not (input: &[T], output: &mut [T], …): its first four PTX parameters must be 64-bit (pointer and length of each slice)",
            entry.params.join(", ")
        )));
    }
    let extra = &types[4..];
    if extra.len() != args.len() {
        return Err(UsageError::new(format!(
            "kernel `{name}` takes {} more parameter(s) after the two slices ({}): give one --arg each, {} given",
            extra.len(),
            entry.params[4..].join(", "),
            args.len()
        )));
    }
    let bytes = (extra.iter().zip(args))
        .enumerate()
        .map(|(i, (ty, value))| {
            scalar_bytes(*ty, value).ok_or_else(|| {
                UsageError::new(format!(
                    "--arg {value} does not fit parameter {} of `{name}`, a PTX `{}`",
                    i + 5,
                    entry.params[i + 4]
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((entry.params.clone(), bytes))
}

/// `value` as the bytes of a PTX parameter of type `ty`.
pub(super) fn scalar_bytes(ty: Option<PtxType>, value: &str) -> Option<Vec<u8>> {
    match ty? {
        PtxType::Int32 => {
            let v: i64 = value.parse().ok()?;
            (i64::from(i32::MIN)..=i64::from(u32::MAX))
                .contains(&v)
                .then(|| (v as u32).to_ne_bytes().to_vec())
        }
        PtxType::Int64 => value
            .parse::<i64>()
            .map(|v| v as u64)
            .or_else(|_| value.parse::<u64>())
            .ok()
            .map(|v| v.to_ne_bytes().to_vec()),
        PtxType::F32 => value.parse::<f32>().ok().map(|v| v.to_ne_bytes().to_vec()),
        PtxType::F64 => value.parse::<f64>().ok().map(|v| v.to_ne_bytes().to_vec()),
    }
}

/// An element type of the user's slices.
pub trait Element: Bits + streamlab_runtime::Element + Into<f64> {
    /// The `.npy` type code (little-endian).
    const NPY: &'static str;
    fn from_le(bytes: &[u8]) -> Self;
    fn random(rng: &mut crate::rng::Rng) -> Self;
    fn poison() -> Self;
}

macro_rules! element {
    ($t:ty, $npy:literal, $random:expr, $poison:expr) => {
        impl Element for $t {
            const NPY: &'static str = $npy;
            fn from_le(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("element-sized"))
            }
            fn random(rng: &mut crate::rng::Rng) -> Self {
                let f: fn(&mut crate::rng::Rng) -> $t = $random;
                f(rng)
            }
            fn poison() -> Self {
                $poison
            }
        }
    };
}
element!(f32, "<f4", |r| r.unit_f32(), f32::NAN);
element!(f64, "<f8", |r| f64::from(r.unit_f32()), f64::NAN);
element!(i32, "<i4", |r| r.any_i32(), -1);
element!(u32, "<u4", |r| r.any_i32() as u32, u32::MAX);

/// Read `n` elements of `T` from a raw little-endian file or a `.npy` array.
pub(super) fn read_array<T: Element>(path: &Path, n: usize) -> Result<Vec<T>, RunError> {
    let what = path.display();
    let bytes =
        std::fs::read(path).map_err(|e| RunError::Input(format!("cannot read {what}: {e}")))?;
    let data = if bytes.starts_with(b"\x93NUMPY") {
        npy_data::<T>(&bytes)
            .map_err(|e| RunError::Input(format!("{what} is not a usable .npy array: {e}")))?
    } else {
        &bytes[..]
    };
    let size = size_of::<T>();
    if data.len() != n * size {
        return Err(RunError::Input(format!(
            "{what} holds {} bytes, but {n} elements of {} need {}: match --elements to the file",
            data.len(),
            T::NPY,
            n * size
        )));
    }
    Ok(data.chunks_exact(size).map(T::from_le).collect())
}

/// The data of a `.npy` file of a one-dimensional C-order array of `T`.
fn npy_data<T: Element>(bytes: &[u8]) -> Result<&[u8], String> {
    let (header_len, start) = match bytes.get(6) {
        Some(1) => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        Some(2 | 3) if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        _ => return Err("unknown .npy version".into()),
    };
    let header = bytes
        .get(start..start + header_len)
        .map(String::from_utf8_lossy)
        .ok_or("truncated header")?;
    if !header.contains(&format!("'descr': '{}'", T::NPY)) {
        return Err(format!(
            "its element type is not {} (header {})",
            T::NPY,
            header.trim()
        ));
    }
    if header.contains("'fortran_order': True") {
        return Err("it is in Fortran order".into());
    }
    Ok(&bytes[start + header_len..])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GPU-free check of the entry shape and argument parsing.
    fn check_kernel_shape(
        text: &str,
        name: &str,
        args: &[String],
    ) -> Result<Vec<String>, UsageError> {
        check_entry(text, Path::new("the PTX"), name, args).map(|(entry, _)| entry)
    }

    const PTX: &str = "\
.version 8.7
.target sm_90
.visible .entry clamp(
	.param .u64 .ptr .align 1 clamp_param_0,
	.param .u64 clamp_param_1,
	.param .u64 .ptr .align 1 clamp_param_2,
	.param .u64 clamp_param_3,
	.param .f32 clamp_param_4,
	.param .f32 clamp_param_5
)
{
	ret;
}
.visible .entry wrong(
	.param .u64 .ptr .align 1 wrong_param_0,
	.param .u32 wrong_param_1
)
{
	ret;
}
";

    fn strings(values: &[&str]) -> Vec<String> {
        values.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_entry_must_exist_take_two_slices_and_get_one_arg_per_scalar() {
        let ok = check_kernel_shape(PTX, "clamp", &strings(&["0", "1.5"])).unwrap();
        assert_eq!(ok.len(), 6);
        let missing = check_kernel_shape(PTX, "saxpy", &[])
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("no kernel `saxpy`; its entries are: clamp, wrong"),
            "{missing}"
        );
        let shape = check_kernel_shape(PTX, "wrong", &[])
            .unwrap_err()
            .to_string();
        assert!(shape.contains("takes (.u64, .u32)"), "{shape}");
        let count = check_kernel_shape(PTX, "clamp", &strings(&["0"]))
            .unwrap_err()
            .to_string();
        assert!(
            count.contains("2 more parameter(s)") && count.contains("1 given"),
            "{count}"
        );
        let value = check_kernel_shape(PTX, "clamp", &strings(&["0", "x"]))
            .unwrap_err()
            .to_string();
        assert!(
            value.contains("--arg x does not fit parameter 6"),
            "{value}"
        );
    }

    #[test]
    fn scalar_arguments_become_the_declared_bytes() {
        assert_eq!(
            scalar_bytes(Some(PtxType::Int32), "-1"),
            Some(u32::MAX.to_ne_bytes().to_vec())
        );
        assert_eq!(scalar_bytes(Some(PtxType::Int32), "4294967296"), None);
        assert_eq!(
            scalar_bytes(Some(PtxType::F64), "0.5"),
            Some(0.5f64.to_ne_bytes().to_vec())
        );
        assert_eq!(
            scalar_bytes(Some(PtxType::Int64), "18446744073709551615"),
            Some(u64::MAX.to_ne_bytes().to_vec())
        );
        assert_eq!(scalar_bytes(None, "1"), None);
    }

    #[test]
    fn raw_and_npy_inputs_are_read_and_checked() {
        let dir = std::env::temp_dir().join(format!("streamlab-inputs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let raw = dir.join("a.bin");
        std::fs::write(
            &raw,
            [1.0f32, 2.0]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect::<Vec<u8>>(),
        )
        .unwrap();
        assert_eq!(read_array::<f32>(&raw, 2).unwrap(), [1.0, 2.0]);
        let err = read_array::<f32>(&raw, 3).unwrap_err().to_string();
        assert!(
            err.contains("holds 8 bytes, but 3 elements of <f4 need 12"),
            "{err}"
        );
        let header = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
        let mut npy = b"\x93NUMPY\x01\x00".to_vec();
        let padded = format!("{header:<118}\n");
        npy.extend((padded.len() as u16).to_le_bytes());
        npy.extend(padded.as_bytes());
        npy.extend([7i32, -3].iter().flat_map(|x| x.to_le_bytes()));
        let file = dir.join("a.npy");
        std::fs::write(&file, &npy).unwrap();
        assert_eq!(read_array::<i32>(&file, 2).unwrap(), [7, -3]);
        let err = read_array::<f32>(&file, 2).unwrap_err().to_string();
        assert!(err.contains("element type is not <f4"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
