// The Pulumi SDK internals the offline planner relies on, in one place, each with the reason
// it is needed. They are not part of @pulumi/pulumi's public API and may change in any
// release: after an SDK upgrade, `npm test` (test/planner.test.ts, test/plan-diff.test.ts)
// exercises every one of them. The public API used elsewhere (runtime.setMocks,
// runtime.setAllConfig) is not listed.
//
// - runtime/state LocalStore: a fresh runtime state per planned stack, so several programs
//   run one after the other in one process (record.ts, recordStack).
// - runtime/settings waitForRPCs: wait until every registration of a program has been
//   answered by the (mock) monitor before the recording is read.
// - runtime/settings getMonitor: wrap the mock monitor's registerResource to see what
//   MockResourceArgs omits (parent, provider, dependencies), as the engine receives them.
// - runtime/mocks MockMonitor.newUrn: the mock monitor's URN scheme, replaced by the engine's
//   (urn.ts) so that every URN the program and the plan see is the one `pulumi up` writes
//   (record.ts; the mock qualifies a child by its parent's last type and keeps the root Stack's).
// - runtime/stack runInPulumiStack: run the program as the body of the root Stack resource,
//   as the CLI's language host does, and get its exports (the stack outputs).
// - runtime/rpc deserializeProperties, specialSigKey, specialSecretSig: read a registration's
//   inputs and recognise the secrets in them, to mask them (record.ts, maskSecrets).
// - runtime/config isConfigSecret: not called by the planner but by the program
//   (config/index.ts, which cannot import tools/) to learn which keys the planner's
//   setAllConfig (or the CLI) marked secret. Listed so every internal a plan depends on is here.
/* eslint-disable @typescript-eslint/no-require-imports */
import { getMonitor as sdkGetMonitor } from "@pulumi/pulumi/runtime/settings";
import { runInPulumiStack as sdkRunInPulumiStack } from "@pulumi/pulumi/runtime/stack";
import { deserializeProperties as sdkDeserializeProperties, specialSigKey, specialSecretSig } from "@pulumi/pulumi/runtime/rpc";

// Not in the SDK's type declarations: read through require with the shape used.
const { LocalStore } = require("@pulumi/pulumi/runtime/state") as { LocalStore: new () => object };
const { waitForRPCs: sdkWaitForRPCs } = require("@pulumi/pulumi/runtime/settings") as { waitForRPCs: () => Promise<void> };

export { specialSigKey, specialSecretSig };

/** Install a fresh runtime store as the SDK's global store (what a plain `pulumi up` uses). */
export function freshRuntimeStore(): void {
  (globalThis as { globalStore?: object }).globalStore = new LocalStore();
}

/** Resolves once every outstanding resource registration has been answered. */
export function waitForRPCs(): Promise<void> {
  return sdkWaitForRPCs();
}

/** The resource monitor the SDK talks to (the mock monitor after runtime.setMocks). */
export function getMonitor(): any {
  return sdkGetMonitor();
}

/**
 * Make the mock monitor answer registrations with `urnOf(parent, type, name)` instead of its own
 * URN scheme: MockMonitor.registerResource and readResource call `this.newUrn` for the URN they
 * return and keep their table under (runtime/mocks.js at 3.248.0).
 */
export function setMockUrns(monitor: any, urnOf: (parent: string, type: string, name: string) => string): void {
  if (typeof monitor?.newUrn !== "function") throw new Error("@pulumi/pulumi's mock monitor has no newUrn: the SDK changed, see tools/planner/sdk.ts");
  monitor.newUrn = urnOf;
}

/** Run the program as the body of the root Stack resource; resolves to its exports. */
export function runInPulumiStack(program: () => Promise<any>): Promise<Record<string, any> | undefined> {
  return sdkRunInPulumiStack(program);
}

/** A registration request's property struct as plain values (secrets signature-wrapped). */
export function deserializeProperties(struct: any): Record<string, any> {
  return sdkDeserializeProperties(struct);
}
