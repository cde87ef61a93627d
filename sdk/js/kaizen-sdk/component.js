// Wires the kit's `log` to the host: the entry module that the build
// generates imports this file before the plugin's own module. It imports
// the contract's `log` interface, so it only loads inside a component (and
// is never imported under Node).
import { log } from "kaizen:plugin/log@0.1.4";

globalThis[Symbol.for("kaizen-sdk.log-sink")] = log;
