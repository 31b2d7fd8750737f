// Runs the unchanged index.ts under Pulumi's mock runtime and records every resource
// registration as the engine would receive it: type token, name, parent, provider,
// dependencies and inputs (secrets masked).
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { MASK } from "./fakes";
import { fingerprint } from "./fingerprint";
import { requestOptions, type RecordedOptions } from "./options";
import type { RecordedResource } from "./resource";

export type { RecordedResource } from "./resource";

export type { RecordedAlias, RecordedOptions } from "./options";
import type { Project } from "./project";
import { deserializeProperties, freshRuntimeStore, getMonitor, runInPulumiStack, setMockUrns, specialSecretSig, specialSigKey, waitForRPCs } from "./sdk";
import { engineUrn } from "./urn";
import type { StackConfig } from "./stackfile";

export interface StackRun {
  stack: string;
  resources: RecordedResource[];
  outputs: Record<string, any>;
  /**
   * urn → property path (JSON of the path segments) → fingerprint of the secret's value.
   * Kept in memory only, never written: it lets a plan diff say "this secret changed"
   * although both sides read MASK (see fingerprint.ts).
   */
  secretFingerprints: Record<string, Record<string, string>>;
}

/** Every scalar of a secret value replaced by MASK; its shape (keys, list lengths) kept. */
function maskLeaves(v: any): any {
  if (Array.isArray(v)) return v.map(maskLeaves);
  if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, maskLeaves(x)]));
  return MASK;
}

/**
 * Replace every secret (the signature-wrapped form the mock sees) by MASK. A secret object
 * (e.g. a Secret's stringData holding one generated password) keeps its keys, so manifests
 * stay schema-valid and tests can see which keys exist, never the values. `onSecret`, when
 * given, sees each secret's path and real value (to fingerprint it, never to keep it).
 */
export function maskSecrets(v: any, onSecret?: (path: (string | number)[], value: unknown) => void): any {
  // One path array for the whole walk (pushed and popped), copied only for a secret: a
  // Helm release's values are deep, and a new array per node was most of this walk's cost.
  const at: (string | number)[] = [];
  const walk = (x: any): any => {
    if (x === null || typeof x !== "object") return x;
    if (Array.isArray(x)) {
      const out = new Array(x.length);
      for (let i = 0; i < x.length; i++) {
        at.push(i);
        out[i] = walk(x[i]);
        at.pop();
      }
      return out;
    }
    if (x[specialSigKey] === specialSecretSig) {
      onSecret?.([...at], x.value);
      return maskLeaves(x.value);
    }
    const out: Record<string, any> = {};
    for (const k of Object.keys(x)) {
      at.push(k);
      out[k] = walk(x[k]);
      at.pop();
    }
    return out;
  };
  return walk(v);
}

/**
 * Remove the program's own modules from the require cache so each stack runs it afresh. The
 * planner (tools/) and the policy pack (policies/) stay: they are not the program, and
 * reloading them per stack would only cost time (the rules are pure: their findings are
 * return values, their only module state is memo caches). Modules the pack shares with the
 * program keep the instance they first bound to; they are pure (no config read at load time).
 */
function forgetProgram(project: Project): void {
  const root = project.root;
  const keep = project.notProgram.map((d) => path.join(root, d) + path.sep);
  for (const id of Object.keys(require.cache)) {
    if (id.startsWith(root + path.sep) && !keep.some((k) => id.startsWith(k))) delete require.cache[id];
  }
}

/**
 * Plan one stack: run the project's program with the stack's config under mocks and return
 * what was registered. `projectName` is Pulumi.yaml's `name` (the URNs' project part).
 * Errors thrown by the program (e.g. SettingsError) propagate unchanged.
 */
export function recordStack(project: Project, projectName: string, stack: StackConfig): Promise<StackRun> {
  // One stack at a time, each with a fresh runtime store installed as the SDK's global
  // store (what a plain `pulumi up` uses). The Automation API's withLocalStorage would give
  // the same isolation through AsyncLocalStorage, but that turns on promise hooks for every
  // promise the SDK makes, which cost the plan measurably.
  const run = queue.then(() => {
    freshRuntimeStore();
    return recordInStore(project, projectName, stack);
  });
  queue = run.then(
    () => undefined,
    () => undefined,
  );
  return run;
}

let queue: Promise<void> = Promise.resolve();

/**
 * The request's options for resources.json: an alias's parentUrn left out where it is the
 * resource's own parent (the SDK states it on every spec; "unset" means the same), duplicates dropped.
 */
export function optionsEntry(req: any, parent: string | null): { options?: RecordedOptions } {
  const options = requestOptions(req);
  if (!options) return {};
  if (options.aliases) {
    const seen = new Set<string>();
    options.aliases = options.aliases
      .map((a) => ("parentUrn" in a && a.parentUrn === parent ? (({ parentUrn: _, ...rest }) => rest)(a) : a))
      .filter((a) => {
        const k = JSON.stringify(a);
        return !seen.has(k) && (seen.add(k), true);
      });
  }
  return { options };
}

function recordInStore(project: Project, projectName: string, stackFile: StackConfig): Promise<StackRun> {
  const { fakes } = project;
  return (async () => {
    const region = stackFile.config["aws:region"] ?? "us-east-1";
    // Kept in the order the program asked for them (not the order the mock answered), so
    // resources.json is stable whatever the SDK's scheduling.
    const registered: { seq: number; resource: RecordedResource }[] = [];
    let seq = 0;
    const secretFingerprints: Record<string, Record<string, string>> = {};

    let lastInputs: Record<string, any> | undefined;
    await pulumi.runtime.setMocks(
      {
        newResource: (args) => {
          lastInputs = args.inputs;
          // Only what the provider would compute: for every input the engine does not echo,
          // the SDK resolves the output from the input itself (runtime/resource.js
          // resolveOutputs), which spares a protobuf round trip of every spec.
          const state = fakes.computedOutputs(args.type, args.name, args.inputs, region);
          return { id: args.custom ? fakes.fakeId(args.type, args.name, args.inputs) : undefined, state };
        },
        call: (args) => {
          const answer = fakes.invokes[args.token];
          if (!answer) throw new Error(`the offline planner has no fake for invoke ${args.token}: add one to tools/planner/fakes.ts`);
          return answer(args.inputs, region);
        },
      },
      projectName,
      stackFile.stack,
      false,
    );
    pulumi.runtime.setAllConfig(stackFile.config, stackFile.secretKeys);

    // Listen on the mock monitor's registrations to see what MockResourceArgs omits
    // (parent, dependencies); the mock itself still answers.
    const monitor = getMonitor();
    // URNs as the engine forms them (urn.ts), so resources.json, aliases and diffs name what
    // `pulumi up` writes to state, and the program sees those URNs as its resources' urn outputs.
    setMockUrns(monitor, (parent, type, name) => engineUrn(stackFile.stack, projectName, parent, type, name));
    const register = monitor.registerResource.bind(monitor);
    monitor.registerResource = (req: any, callback: (err: any, resp: any) => void) => {
      const secrets: Record<string, string> = {};
      const mySeq = seq++;
      // The mock monitor deserializes the inputs and calls newResource synchronously, before
      // its first await: take them from there rather than deserializing a second time.
      lastInputs = undefined;
      register(req, (err: any, resp: any) => {
        if (!err && resp) {
          registered.push({ seq: mySeq, resource: { urn: resp.getUrn(), ...entry } });
          if (Object.keys(secrets).length > 0) secretFingerprints[resp.getUrn()] = secrets;
        }
        callback(err, resp);
      });
      const inputs = lastInputs ?? deserializeProperties(req.getObject());
      const entry = {
        type: req.getType() as string,
        name: req.getName() as string,
        custom: req.getCustom() as boolean,
        parent: (req.getParent() as string) || null,
        provider: (req.getProvider() as string) || null,
        dependencies: [...new Set<string>(req.getDependenciesList())],
        props: maskSecrets(inputs, (p, value) => (secrets[JSON.stringify(p)] = fingerprint(value))),
        ...optionsEntry(req, (req.getParent() as string) || null),
      };
    };

    forgetProgram(project);
    // A program error (e.g. SettingsError) is kept and rethrown once the runtime is idle, so it
    // surfaces once, here, instead of also as an unhandled rejection inside the SDK.
    let programError: { error: unknown } | undefined;
    // The SDK records a stack trace on every promise it creates (debuggablePromise, for its
    // leak report); formatting those was a quarter of the plan's own time. Resource source
    // positions are unaffected (the SDK lifts the limit for them). PLAN_STACK_TRACES=1 keeps
    // them, e.g. to debug a hang.
    const stackTraceLimit = Error.stackTraceLimit;
    if (!process.env.PLAN_STACK_TRACES) Error.stackTraceLimit = 0;
    let outputs: Record<string, any> | undefined;
    try {
      outputs = await runInPulumiStack(() => {
        try {
          // eslint-disable-next-line @typescript-eslint/no-require-imports -- the program is loaded by path, as Pulumi's language host does
          return Promise.resolve(require(path.join(project.root, project.program)));
        } catch (e) {
          programError = { error: e };
          return Promise.resolve({});
        }
      });
      await waitForRPCs();
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    if (programError) throw programError.error;
    const resources = registered.sort((a, b) => a.seq - b.seq).map((r) => r.resource);
    return { stack: stackFile.stack, resources, outputs: maskSecrets(outputs ?? {}), secretFingerprints };
  })();
}
