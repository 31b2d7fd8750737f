// triton-platform: wiring only. The stack file is validated first (nothing is created on
// bad input), then every component of the registry is built in its order, each taking what
// it needs from the ones before it, and their outputs are the stack's outputs.
import { loadStackConfig } from "./config";
import { buildStack } from "./components/component";
import { REGISTRY } from "./components/registry";

const { stack, region, ...settings } = loadStackConfig();

export = buildStack(REGISTRY, settings, stack, region);
