//! System stats section: metric groups and sampling.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A metric group of invocation system stats.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub enum SystemStatsGroup {
    /// Adapter-host process tree CPU time, RSS and process count.
    #[serde(rename = "process")]
    Process,
    /// Visible CPU limits, usage and throttling.
    #[serde(rename = "cgroup.cpu")]
    CgroupCpu,
    /// Visible memory limits, accounted memory, peak, swap, OOM kills.
    #[serde(rename = "cgroup.memory")]
    CgroupMemory,
    /// CPU, memory and I/O pressure counters.
    #[serde(rename = "cgroup.pressure")]
    CgroupPressure,
}

impl SystemStatsGroup {
    /// Every group, in canonical order.
    pub const ALL: [SystemStatsGroup; 4] = [
        SystemStatsGroup::Process,
        SystemStatsGroup::CgroupCpu,
        SystemStatsGroup::CgroupMemory,
        SystemStatsGroup::CgroupPressure,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SystemStatsGroup::Process => "process",
            SystemStatsGroup::CgroupCpu => "cgroup.cpu",
            SystemStatsGroup::CgroupMemory => "cgroup.memory",
            SystemStatsGroup::CgroupPressure => "cgroup.pressure",
        }
    }
}

/// Tri-state `system_stats`: absent, explicit `null`, or an object.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum SystemStatsSetting {
    /// Key absent: every group at the invocation endpoints.
    #[default]
    Default,
    /// Explicit `null`: invocation stats disabled (kept when serialized).
    Disabled,
    /// Explicit object.
    Configured(SystemStatsConfig),
}

impl SystemStatsSetting {
    /// True when the key was absent.
    pub fn is_default(&self) -> bool {
        matches!(self, SystemStatsSetting::Default)
    }

    /// The effective configuration: `None` when disabled; all groups at endpoints by default.
    pub fn effective(&self) -> Option<SystemStatsConfig> {
        match self {
            SystemStatsSetting::Default => Some(SystemStatsConfig::default()),
            SystemStatsSetting::Disabled => None,
            SystemStatsSetting::Configured(config) => Some(config.clone()),
        }
    }
}

impl Serialize for SystemStatsSetting {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SystemStatsSetting::Default | SystemStatsSetting::Disabled => {
                serializer.serialize_none()
            }
            SystemStatsSetting::Configured(config) => config.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for SystemStatsSetting {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(
            match Option::<SystemStatsConfig>::deserialize(deserializer)? {
                None => SystemStatsSetting::Disabled,
                Some(config) => SystemStatsSetting::Configured(config),
            },
        )
    }
}

impl JsonSchema for SystemStatsSetting {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SystemStatsSetting".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = <Option<SystemStatsConfig>>::json_schema(generator);
        schema.insert(
            "description".to_owned(),
            Value::from(
                "Invocation system stats: absent = every group at the invocation endpoints; \
                 null = disabled; object = as given.",
            ),
        );
        schema
    }
}

/// Invocation system stats selection (closed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SystemStatsConfig {
    /// Groups to collect; `None` = every supported group. Non-empty, unique.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collect: Option<Vec<SystemStatsGroup>>,
    /// Periodic sampling; `None` = endpoints only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SystemStatsSamplingConfig>,
}

impl SystemStatsConfig {
    /// The selected groups (every group when `collect` is `None`).
    pub fn groups(&self) -> Vec<SystemStatsGroup> {
        match &self.collect {
            None => SystemStatsGroup::ALL.to_vec(),
            Some(groups) => groups.clone(),
        }
    }
}

fn default_interval_ms() -> u64 {
    1000
}

/// Smallest accepted `system_stats.sampling.interval_ms` (a floor on sampling CPU cost).
pub const MIN_SAMPLING_INTERVAL_MS: u64 = 10;

/// Largest accepted `system_stats.sampling.max_samples`: the hard retention cap of one
/// invocation's sampled series (memory stays bounded whatever the config says).
pub const MAX_SAMPLING_MAX_SAMPLES: u64 = 100_000;

fn default_max_samples() -> u64 {
    10_000
}

/// Sampling cadence and retention bound (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SystemStatsSamplingConfig {
    /// Sampling interval in milliseconds (>= 10, default 1000).
    #[serde(default = "default_interval_ms")]
    #[schemars(range(min = 10))]
    #[serde(deserialize_with = "crate::number::u64_integral")]
    pub interval_ms: u64,
    /// Maximum retained intermediate samples (1 to 100000, default 10000).
    #[serde(default = "default_max_samples")]
    #[schemars(range(min = 1, max = 100_000))]
    #[serde(deserialize_with = "crate::number::u64_integral")]
    pub max_samples: u64,
}

impl Default for SystemStatsSamplingConfig {
    fn default() -> Self {
        SystemStatsSamplingConfig {
            interval_ms: default_interval_ms(),
            max_samples: default_max_samples(),
        }
    }
}
