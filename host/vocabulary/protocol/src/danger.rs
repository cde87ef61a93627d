//! How much harm a tool can do, on the seeds' five-step scale.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How much harm a tool can do: `safe`, `low`, `medium`, `high`,
/// `critical`, in that order.
///
/// The permission modes' defaults know three tiers (reads, edits inside the
/// grant, everything else); the five levels fall into them as
/// [`Danger::tier`] says, so a finer level never changes what runs without
/// asking. Rules can name the levels (`danger:critical`, `danger:>=high`),
/// and the approval prompt shows them. A component declares one of the
/// contract's three (`safe`, `moderate`, `dangerous`: read as `safe`,
/// `medium`, `high`); its manifest may refine that within the tier or raise it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Danger {
    /// Reads only; can never change anything.
    Safe,
    /// Changes only what the session keeps for itself (its notes, its
    /// memory), or a file inside the grant in a small, reviewable way.
    Low,
    /// Changes files inside the granted directories (the contract's
    /// `moderate`).
    #[serde(alias = "moderate")]
    Medium,
    /// Runs programs, reaches the network, or deletes data (the contract's
    /// `dangerous`).
    #[serde(alias = "dangerous")]
    High,
    /// Can do what cannot be undone or reaches beyond the machine with the
    /// user's authority (deploys, payments, production data).
    Critical,
}

/// The three tiers the permission modes' defaults know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DangerTier {
    /// Runs in every mode but plan's limits: `safe`.
    Reads,
    /// Accepted by `acceptEdits`: `low` and `medium`.
    Edits,
    /// Asks unless a rule or `bypassPermissions` says otherwise (or its
    /// effects stay inside the session's grant): `high` and `critical`.
    Beyond,
}

impl Danger {
    /// Every level, lowest first.
    pub const ALL: [Danger; 5] = [
        Danger::Safe,
        Danger::Low,
        Danger::Medium,
        Danger::High,
        Danger::Critical,
    ];

    /// The level's name as rules and manifests spell it (`high`).
    pub fn name(self) -> &'static str {
        match self {
            Danger::Safe => "safe",
            Danger::Low => "low",
            Danger::Medium => "medium",
            Danger::High => "high",
            Danger::Critical => "critical",
        }
    }

    /// The tier the permission modes' defaults treat this level as.
    pub fn tier(self) -> DangerTier {
        match self {
            Danger::Safe => DangerTier::Reads,
            Danger::Low | Danger::Medium => DangerTier::Edits,
            Danger::High | Danger::Critical => DangerTier::Beyond,
        }
    }
}

impl fmt::Display for Danger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A level name that is none of the five.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownDanger(pub String);

impl fmt::Display for UnknownDanger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a danger level; the levels are safe, low, medium, high and critical",
            self.0
        )
    }
}

impl std::error::Error for UnknownDanger {}

impl FromStr for Danger {
    type Err = UnknownDanger;

    /// Reads a level in any case (`HIGH`, `high`), and the contract's
    /// three names (`moderate`, `dangerous`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let lower = text.trim().to_ascii_lowercase();
        match lower.as_str() {
            "moderate" => return Ok(Danger::Medium),
            "dangerous" => return Ok(Danger::High),
            _ => {}
        }
        Danger::ALL
            .into_iter()
            .find(|level| level.name() == lower)
            .ok_or_else(|| UnknownDanger(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_read_in_any_case_and_in_the_contract_s_names() {
        assert_eq!("CRITICAL".parse(), Ok(Danger::Critical));
        assert_eq!(" low ".parse(), Ok(Danger::Low));
        assert_eq!("moderate".parse(), Ok(Danger::Medium));
        assert_eq!("dangerous".parse(), Ok(Danger::High));
        let err = "severe".parse::<Danger>().unwrap_err();
        assert!(
            err.to_string()
                .contains("safe, low, medium, high and critical")
        );
        for level in Danger::ALL {
            assert_eq!(level.name().parse(), Ok(level));
        }
    }

    #[test]
    fn serde_writes_the_five_names_and_reads_the_old_three() {
        assert_eq!(
            serde_json::to_string(&Danger::Critical).unwrap(),
            "\"critical\""
        );
        let old: Vec<Danger> = serde_json::from_str(r#"["safe","moderate","dangerous"]"#).unwrap();
        assert_eq!(old, [Danger::Safe, Danger::Medium, Danger::High]);
    }

    #[test]
    fn the_five_levels_fall_into_today_s_three_tiers_in_order() {
        let tiers: Vec<_> = Danger::ALL.iter().map(|d| d.tier()).collect();
        assert_eq!(
            tiers,
            [
                DangerTier::Reads,
                DangerTier::Edits,
                DangerTier::Edits,
                DangerTier::Beyond,
                DangerTier::Beyond
            ]
        );
        assert!(Danger::Low < Danger::Medium && Danger::High < Danger::Critical);
    }
}
