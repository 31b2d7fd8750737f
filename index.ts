// triton-platform: wiring only. The stack file is validated first (nothing is created on
// bad input), then every component of the registry is built in its order, each taking what
// it needs from the ones before it, and their outputs are the stack's outputs.
import { loadStackConfig, PROJECT } from "./config";
import { buildStack } from "./components/component";
import { REGISTRY } from "./components/registry";

const { stack, region, ...settings } = loadStackConfig();

// A component's error names the stack-file key (triton-platform:<section>.<key>) it came from.
export = buildStack(REGISTRY, settings, stack, region, PROJECT + ":");
