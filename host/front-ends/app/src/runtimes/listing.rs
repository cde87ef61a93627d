//! What `kaizen runtimes` lists: each runtime, whether it can run here,
//! its version and what it can do.

use super::own_loop;
use crate::config::Setup;
use kaizen_protocol::RUNTIME_NAME;
use kaizen_runtimes::{Availability, RuntimeAdapter, RuntimeCapabilities, external_runtimes};

/// One runtime, as listed.
pub struct Listed {
    /// Its name, as `--runtime` takes it.
    pub name: String,
    /// Whether it can run here.
    pub availability: Availability,
    /// What it can do.
    pub capabilities: RuntimeCapabilities,
}

/// Every runtime, Kaizen's own loop first, with the user's configured
/// prices.
pub fn listing() -> anyhow::Result<Vec<Listed>> {
    let setup = Setup::new(None, &[], &[], None)?;
    let env = std::env::vars().collect();
    let externals = external_runtimes(&setup.prices, None);
    let mut rows = vec![Listed {
        name: RUNTIME_NAME.to_string(),
        availability: own_loop::availability(None),
        capabilities: own_loop::capabilities(),
    }];
    // Each CLI is asked its version at once: some take a second to start.
    std::thread::scope(|scope| {
        let asked: Vec<_> = externals
            .iter()
            .map(|external| scope.spawn(|| external.availability(&env)))
            .collect();
        for (external, asked) in externals.iter().zip(asked) {
            let availability = asked
                .join()
                .unwrap_or_else(|_| Availability::missing("its check failed"));
            rows.push(Listed {
                name: external.name().to_string(),
                availability,
                capabilities: external.capabilities(),
            });
        }
    });
    Ok(rows)
}
