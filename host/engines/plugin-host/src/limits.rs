//! Resource limits: what a manifest asks for, and what is in force once
//! the operator's maximums apply.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Memory a plugin gets when its manifest names no limit.
pub const DEFAULT_MEMORY_MIB: u64 = 256;
/// Time one call may run when the manifest names no limit.
pub const DEFAULT_CPU_SECONDS: f64 = 30.0;
/// The most memory the operator allows any plugin unless configured.
pub const DEFAULT_MAX_MEMORY_MIB: u64 = 1024;

/// Resource limits a manifest asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Limits {
    /// Linear memory, in MiB.
    pub memory_mib: Option<u64>,
    /// Time one call may run, in seconds.
    pub cpu_seconds: Option<f64>,
}

impl Limits {
    /// Checks that the numbers are usable.
    pub fn check(&self) -> Result<(), String> {
        if self.memory_mib == Some(0) {
            return Err("limits.memory-mib must be at least 1".into());
        }
        if let Some(secs) = self.cpu_seconds
            && !(secs.is_finite() && secs > 0.0)
        {
            return Err("limits.cpu-seconds must be a positive number".into());
        }
        Ok(())
    }
}

impl Limits {
    /// The limits in force when the operator allows at most `max_memory_mib`
    /// and `max_cpu_seconds`; each request lowered is noted in `denied`.
    pub(crate) fn capped(
        &self,
        max_memory_mib: u64,
        max_cpu_seconds: f64,
        denied: &mut Vec<String>,
    ) -> EffectiveLimits {
        let want_mib = self.memory_mib.unwrap_or(DEFAULT_MEMORY_MIB);
        let memory_mib = want_mib.min(max_memory_mib);
        if memory_mib < want_mib {
            denied.push(format!(
                "limits: memory-mib {want_mib} lowered to the operator's maximum {memory_mib}"
            ));
        }
        let want_secs = self.cpu_seconds.unwrap_or(DEFAULT_CPU_SECONDS);
        let cpu_seconds = want_secs.min(max_cpu_seconds);
        if cpu_seconds < want_secs {
            denied.push(format!(
                "limits: cpu-seconds {want_secs} lowered to the operator's maximum {cpu_seconds}"
            ));
        }
        EffectiveLimits {
            memory_bytes: memory_mib << 20,
            cpu_time: Duration::from_secs_f64(cpu_seconds),
        }
    }
}

/// Limits in force for a plugin.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EffectiveLimits {
    /// Linear memory bound.
    pub memory_bytes: u64,
    /// How long one call may run.
    pub cpu_time: Duration,
}

impl Default for EffectiveLimits {
    fn default() -> Self {
        Self {
            memory_bytes: DEFAULT_MEMORY_MIB << 20,
            cpu_time: Duration::from_secs_f64(DEFAULT_CPU_SECONDS),
        }
    }
}
