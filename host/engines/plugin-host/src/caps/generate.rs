//! The macro behind [`super::registry`]: from one list of capabilities it
//! generates everything that holds a value per capability, so that a new
//! capability is its module plus one line there (as Spin's
//! `RuntimeFactors` derive does for factors).
//!
//! Per-store state is a generated struct rather than a map keyed by type:
//! a host call reaches its capability's part without a lookup or a
//! downcast, and the compiler sees that every capability has its part;
//! the price is this macro.

/// Generates, from `field: Capability(Request => Grant),` lines (each with
/// the doc comment of its request field; the compiler checks the types
/// against the capability's):
/// - `Capabilities`, the request and grant tables, one field each;
/// - `EffectiveGrant`, what a plugin may use, one field each;
/// - `LoadedCaps` (per plugin) and `CapStates` (per store), one field each,
///   with a [`Slot`] impl per capability for typed access;
/// - `REGISTRY`, one [`Entry`] each, in the same order, and `link_each`,
///   which links those a filter picks into any [`CapStore`] whose parts
///   are `CapStates`.
macro_rules! capabilities {
    ($( $(#[$doc:meta])* $field:ident: $cap:ident($req:ty => $grant:ty), )*) => {
        /// A set of capabilities: the `[capabilities]` table of a manifest, or
        /// a `[grants.NAME]` table of the operator's config. Requests and
        /// grants have the same shape, so the effective grant is their
        /// intersection.
        #[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
        #[serde(deny_unknown_fields, rename_all = "kebab-case")]
        pub struct Capabilities {
            $(
                $(#[$doc])*
                #[serde(default, skip_serializing_if = "crate::caps::is_default")]
                pub $field: $req,
            )*
        }

        /// What a plugin may actually use, and what it asked for but did not
        /// get.
        #[derive(Debug, Clone, Default)]
        pub struct EffectiveGrant {
            $(
                #[doc = concat!("What it may use of `", stringify!($field), "`.")]
                pub $field: $grant,
            )*
            /// Headers the host adds to its requests for given hosts (names of
            /// the header and variable only; the secrets are read at load),
            /// set by the `http` capability.
            pub http_credentials: Vec<HttpCredential>,
            /// Limits in force.
            pub limits: EffectiveLimits,
            /// Requests that were refused or reduced, one line each.
            pub denied: Vec<String>,
        }

        /// What every store of one plugin shares, a field per capability.
        pub(crate) struct LoadedCaps {
            $( $field: <$cap as HostCapability>::Shared, )*
        }

        /// A store's capability state, a field per capability.
        pub(crate) struct CapStates {
            $( $field: <$cap as HostCapability>::State, )*
        }

        $(
            impl Slot<$cap> for CapStates {
                fn slot_mut(&mut self) -> &mut <$cap as HostCapability>::State {
                    &mut self.$field
                }
            }
        )*

        /// Every capability, in the order listings and refusals name them.
        pub(crate) const REGISTRY: &[Entry] = &[
            $(
                Entry {
                    name: <$cap as HostCapability>::NAME,
                    imports: <$cap as HostCapability>::IMPORTS,
                    since: <$cap as HostCapability>::SINCE,
                    env_var: <$cap as HostCapability>::ENV_VAR,
                    granted: |grant| <$cap as HostCapability>::is_granted(&grant.$field),
                },
            )*
        ];

        /// Links each capability whose [`Entry`] `wanted` picks, in
        /// [`REGISTRY`]'s order.
        pub(crate) fn link_each<T: CapStore<Caps = CapStates>>(
            linker: &mut Linker<T>,
            wanted: impl Fn(&Entry) -> bool,
        ) -> wasmtime::Result<()> {
            let links: [fn(&mut Linker<T>) -> wasmtime::Result<()>; FIELD_COUNT] =
                [$( <$cap as HostCapability>::link::<T> ),*];
            for (entry, link) in REGISTRY.iter().zip(links) {
                if wanted(entry) {
                    link(linker)?;
                }
            }
            Ok(())
        }

        /// The field of each capability, in [`REGISTRY`]'s order.
        #[cfg(test)]
        const FIELDS: &[&str] = &[$(stringify!($field)),*];

        impl Capabilities {
            /// Checks values serde cannot: path forms, host patterns, names.
            pub fn check(&self) -> Result<(), String> {
                $( <$cap as HostCapability>::check(&self.$field)?; )*
                Ok(())
            }

            /// The union of two capability sets (for layering grants).
            pub fn union(&self, other: &Capabilities) -> Capabilities {
                Capabilities {
                    $( $field: <$cap as HostCapability>::union(&self.$field, &other.$field), )*
                }
            }

            /// What the set asks for, one line per item, as `kaizen plugins
            /// list` shows a request.
            pub fn describe(&self) -> Vec<String> {
                let mut lines = Vec::new();
                $( lines.extend(<$cap as HostCapability>::describe_request(&self.$field)); )*
                lines
            }

            /// What every plugin is granted before the operator's grants.
            pub(crate) fn defaults(cx: &GrantContext<'_>) -> Capabilities {
                Capabilities {
                    $( $field: <$cap as HostCapability>::default_grant(cx), )*
                }
            }
        }

        impl EffectiveGrant {
            /// What a plugin may use of `requested` under `granted`, without
            /// limits.
            pub(crate) fn intersect(
                cx: &GrantContext<'_>,
                requested: &Capabilities,
                granted: &Capabilities,
            ) -> EffectiveGrant {
                let mut out = EffectiveGrant::default();
                $(
                    let grant = <$cap as HostCapability>::intersect(
                        cx, &requested.$field, &granted.$field, &mut out,
                    );
                    out.$field = grant;
                )*
                out
            }

            /// What the grant allows, one line per item, as `kaizen plugins
            /// list` shows it.
            pub fn describe(&self) -> Vec<String> {
                let mut lines = Vec::new();
                $( lines.extend(<$cap as HostCapability>::describe_grant(&self.$field)); )*
                lines
            }

            /// True when what the plugin's tools can do stays inside the
            /// grant (see [`HostCapability::escapes`]).
            pub(crate) fn contained(&self, sandbox: &Containment) -> bool {
                true $( && !<$cap as HostCapability>::escapes(&self.$field, sandbox) )*
            }

            /// Lets each capability settle the grant and add to `env` at load.
            pub(crate) fn admit(
                &mut self,
                plugin: &str,
                env: &mut Vec<(String, String)>,
            ) -> Result<(), String> {
                let reserved: Vec<&'static str> =
                    REGISTRY.iter().filter_map(|entry| entry.env_var).collect();
                let mut cx = Admission { plugin, grant: self, env, reserved_env: &reserved };
                $( <$cap as HostCapability>::admit(&mut cx)?; )*
                Ok(())
            }

            /// The variables capabilities set for this grant.
            pub(crate) fn capability_env(&self) -> Vec<(String, String)> {
                let mut env = Vec::new();
                $(
                    if let (Some(name), Some(value)) = (
                        <$cap as HostCapability>::ENV_VAR,
                        <$cap as HostCapability>::env_value(&self.$field),
                    ) {
                        env.push((name.to_string(), value));
                    }
                )*
                env
            }
        }

        impl serde::Serialize for EffectiveGrant {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeStruct;
                let mut out = serializer.serialize_struct("EffectiveGrant", FIELD_COUNT + 3)?;
                $(
                    if <$cap as HostCapability>::is_listed(&self.$field) {
                        out.serialize_field(stringify!($field), &self.$field)?;
                    } else {
                        out.skip_field(stringify!($field))?;
                    }
                )*
                if self.http_credentials.is_empty() {
                    out.skip_field("http_credentials")?;
                } else {
                    out.serialize_field("http_credentials", &self.http_credentials)?;
                }
                out.serialize_field("limits", &self.limits)?;
                out.serialize_field("denied", &self.denied)?;
                out.end()
            }
        }

        /// How many capabilities there are.
        const FIELD_COUNT: usize = [$(stringify!($field)),*].len();

        impl LoadedCaps {
            /// What a plugin's stores will share.
            pub(crate) fn load(cx: &LoadContext<'_>) -> LoadedCaps {
                LoadedCaps {
                    $( $field: <$cap as HostCapability>::load(cx), )*
                }
            }

            /// The capability state of a new store.
            pub(crate) fn new_state(&self, cx: &mut StoreContext<'_>) -> anyhow::Result<CapStates> {
                Ok(CapStates {
                    $( $field: <$cap as HostCapability>::new_state(&self.$field, cx)?, )*
                })
            }

            /// Releases what is kept for `session`.
            pub(crate) fn end_session(&self, session: &str) {
                $( <$cap as HostCapability>::end_session(&self.$field, session); )*
            }
        }

        impl CapStates {
            /// Prepares every capability's state for a call.
            pub(crate) fn begin_call(&mut self, loaded: &LoadedCaps, call: &CallSetup<'_>) {
                $( <$cap as HostCapability>::begin_call(&mut self.$field, &loaded.$field, call); )*
            }

            /// What the capabilities refused during the call.
            pub(crate) fn take_refusals(&self) -> Vec<String> {
                let mut refusals = Vec::new();
                $( refusals.extend(<$cap as HostCapability>::take_refusals(&self.$field)); )*
                refusals
            }
        }
    };
}
