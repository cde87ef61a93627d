// Passed to `jco componentize --bundle --bundle-config`: the contract's own
// interfaces are imports of the component, not modules to bundle (jco
// leaves only `wasi:` ones out by itself).
export default {
  external: [/^kaizen:/],
};
