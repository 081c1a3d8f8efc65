//! `summary.json`: the stable, machine-readable headline of a run. Other tools read these
//! keys. Each experiment writes its own headline and facts ([`crate::experiment`]);
//! this module only holds them, in the registry's order, and says how the run ended.
use std::fmt;

use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::saved::{DeviceInfo, Provenance};

/// `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub device: DeviceInfo,
    pub provenance: Provenance,
    /// False when the run was stopped before every step ran.
    pub complete: bool,
    /// The signal that stopped the run, e.g. "SIGINT".
    pub interrupted_by: Option<String>,
    /// The steps of the run that did not run or did not finish.
    pub steps_not_run: Vec<String>,
    /// The headline of each experiment run with the Rust kernels, by experiment.
    pub experiments: Entries,
    /// What experiments add at the top level: the measured limits (`bounds`), the kernel
    /// ratios (`rust_over_cuda`, `rust_over_cuda_safe`, `rust_over_cuda_plain`).
    #[serde(flatten)]
    pub facts: Entries,
    /// The headlines of the experiments that also ran with the CUDA C++ kernels.
    pub cuda_experiments: Option<Entries>,
    /// Per such experiment: total time of every configuration measured with both kernel
    /// sets, Rust over CUDA C++.
    pub experiment_rust_over_cuda: Option<Entries>,
    /// Per experiment: how far the link's both-ways rate moved between the probes before
    /// and after it (their medians), relative to the faster (summaries of 2026-11-25 and
    /// before lack it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_moved: Option<Entries>,
    /// How many experiments probed the link, and in how many it moved no more than
    /// [`crate::derived::rates::NOISY_LINK`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_steady: Option<LinkSteady>,
    /// Seconds from the run's start (opening the GPU) to its summary (runs before
    /// 2026-11-25 17:30 UTC did not record it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
}

/// How many experiments saw the link hold still.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LinkSteady {
    pub experiments: usize,
    pub steady: usize,
}

impl RunSummary {
    /// The headline of experiment `name` (Rust kernels), if it has one.
    pub fn experiment(&self, name: &str) -> Option<&Json> {
        self.experiments.get(name).filter(|v| !v.is_null())
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunStatus {
    pub interrupted_by: Option<String>,
    pub steps_not_run: Vec<String>,
    /// Seconds from the run's start to its summary.
    pub duration_s: Option<f64>,
}

/// A JSON value whose objects keep their keys' order (serde_json's `Value` sorts them),
/// so that each experiment's headline is written field by field, in its own order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Entries),
}

impl Json {
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Number(n) => n.serialize(serializer),
            Json::String(s) => serializer.serialize_str(s),
            Json::Array(items) => items.serialize(serializer),
            Json::Object(entries) => entries.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        struct Any;
        impl<'de> Visitor<'de> for Any {
            type Value = Json;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_none<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
                Json::deserialize(d)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
                Ok(Json::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_f64<E>(self, x: f64) -> Result<Json, E> {
                Ok(serde_json::Number::from_f64(x).map_or(Json::Null, Json::Number))
            }
            fn visit_str<E>(self, s: &str) -> Result<Json, E> {
                Ok(Json::String(s.to_owned()))
            }
            fn visit_string<E>(self, s: String) -> Result<Json, E> {
                Ok(Json::String(s))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Json::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Json, A::Error> {
                InOrder.visit_map(map).map(Json::Object)
            }
        }
        deserializer.deserialize_any(Any)
    }
}

/// Named JSON values in a fixed order, written as one JSON object.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Entries(pub Vec<(String, Json)>);

impl Entries {
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn push(&mut self, key: &str, value: Json) {
        self.0.push((key.to_owned(), value));
    }

    /// Take `other`'s value for every key whose value here is `null` or missing.
    pub fn keep_where_null(&mut self, other: &Entries) {
        for (key, value) in &other.0 {
            match self.0.iter_mut().find(|(k, _)| k == key) {
                Some((_, v)) if v.is_null() => *v = value.clone(),
                Some(_) => {}
                None => self.0.push((key.clone(), value.clone())),
            }
        }
    }

    /// Whether any value is not `null`.
    pub fn any(&self) -> bool {
        self.0.iter().any(|(_, v)| !v.is_null())
    }
}

impl Serialize for Entries {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// An object's entries, read in their order.
struct InOrder;

impl<'de> Visitor<'de> for InOrder {
    type Value = Entries;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
        let mut out = Entries::default();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            out.0.push((k, v));
        }
        Ok(out)
    }
}

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Entries, D::Error> {
        deserializer.deserialize_map(InOrder)
    }
}
