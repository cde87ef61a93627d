//! The [`export_tools!`] macro.

/// Exports the listed [`Tool`](crate::Tool) types as the component's tools.
///
/// Invoke it once per plugin, at the crate's top level:
/// `export_tools!(Greet, Add);`. It implements the contract's `tools`
/// interface: `tools()` describes each tool (its input schema derived with
/// `schemars`), and `call` routes by name, deserializes the input into the
/// tool's `Input` (a failure becomes an `invalid-input` error naming the
/// tool) and converts the result.
///
/// # Panics
///
/// When the host asks for the tool list and two tools share a name, or a
/// tool's input is not a JSON object (see [`raw::spec`](crate::raw::spec)).
#[macro_export]
macro_rules! export_tools {
    ($($tool:ty),+ $(,)?) => {
        const _: () = {
            struct KaizenSdkTools;

            impl $crate::raw::Guest for KaizenSdkTools {
                fn tools() -> ::std::vec::Vec<$crate::raw::ToolSpec> {
                    let listed = ::std::vec![$(
                        (<$tool as $crate::Tool>::INTERNAL, $crate::raw::spec::<$tool>())
                    ),+];
                    $crate::raw::unique(
                        listed
                            .into_iter()
                            .filter(|(internal, _)| !internal)
                            .map(|(_, spec)| spec)
                            .collect(),
                    )
                }

                fn call(
                    ctx: $crate::raw::CallContext,
                    name: ::std::string::String,
                    input: ::std::string::String,
                ) -> ::core::result::Result<$crate::raw::ToolOutput, $crate::raw::ToolError> {
                    $(
                        if name == <$tool as $crate::Tool>::NAME {
                            return $crate::raw::call::<$tool>(&ctx, &input);
                        }
                    )+
                    ::core::result::Result::Err($crate::raw::unknown_tool(
                        &name,
                        &[$(<$tool as $crate::Tool>::NAME),+],
                    ))
                }
            }

            $crate::bindings::export!(KaizenSdkTools with_types_in $crate::bindings);
        };
    };
}
