// Rules on the model configs the stack writes (a contracted model's config.pbtxt, an S3 object
// <prefix>/<model>/config.pbtxt): production properties of a model, read from the config itself with
// the stack's own parser (components/triton/model-config), in the environments of the Triton
// StatefulSets that load the model (label triton-platform/environment, --load-model=<model>).
import { GPU_RESOURCE as GPU } from "../../components/contracts";
import { ENVIRONMENT_LABEL } from "../../components/naming";
import { parseModelConfig, PbtxtError, type PbMessage } from "../../components/triton/model-config";
import { containersOf, podSpecsOf } from "./props";
import { stackRule, type Finding, type Rule } from "./rule";
import { commandLine, environmentsSchema, isTritonContainer, type EnvConfig } from "./util";
import type { PolicyResource } from "@pulumi/policy";

const OBJECT = "aws:s3/bucketObjectv2:BucketObjectv2";
const CONFIG_FILE = "config.pbtxt";

interface Loader {
  readonly environment: string | undefined;
  /** The loading container has a GPU limit. */
  readonly gpu: boolean;
}

/** Each model a Triton container loads (--load-model), with the environments and GPUs of its pods. */
function loadersByModel(resources: readonly PolicyResource[]): Map<string, Loader[]> {
  const out = new Map<string, Loader[]>();
  for (const r of resources) {
    const environment = (r.props as { metadata?: { labels?: Record<string, string> } }).metadata?.labels?.[ENVIRONMENT_LABEL];
    for (const { spec, path } of podSpecsOf(r)) {
      if (!spec) continue;
      for (const { c } of containersOf(spec, path)) {
        if (!isTritonContainer(c)) continue;
        const gpu = Number(c.resources?.limits?.[GPU] ?? 0) >= 1;
        for (const a of commandLine(c)) {
          const m = typeof a === "string" ? /^--load-model=(.+)$/.exec(a) : null;
          if (m) out.set(m[1], [...(out.get(m[1]) ?? []), { environment, gpu }]);
        }
      }
    }
  }
  return out;
}

interface ConfigObject {
  readonly r: PolicyResource;
  readonly model: string;
  readonly config?: PbMessage;
  readonly error?: string;
}

/** The config.pbtxt objects among the resources, parsed. */
function configObjects(resources: readonly PolicyResource[]): ConfigObject[] {
  const out: ConfigObject[] = [];
  for (const r of resources) {
    if (r.type !== OBJECT) continue;
    const props = r.props as { key?: unknown; content?: unknown };
    const key = typeof props.key === "string" ? props.key : "";
    const parts = key.split("/");
    if (parts.length < 2 || parts[parts.length - 1] !== CONFIG_FILE || typeof props.content !== "string") continue;
    const model = parts[parts.length - 2];
    try {
      out.push({ r, model, config: parseModelConfig(props.content, key) });
    } catch (e) {
      out.push({ r, model, error: e instanceof PbtxtError ? e.message : String(e) });
    }
  }
  return out;
}

/** The config objects of models loaded in one of `environments`, with their loaders there. */
function inEnvironments(resources: readonly PolicyResource[], cfg: EnvConfig): { o: ConfigObject; loaders: Loader[] }[] {
  const loaders = loadersByModel(resources);
  return configObjects(resources).flatMap((o) => {
    const here = (loaders.get(o.model) ?? []).filter((l) => cfg.environments.includes(l.environment as string));
    return here.length ? [{ o, loaders: here }] : [];
  });
}

const unreadable = (o: ConfigObject): Finding => ({ path: "content", value: null, urn: o.r.urn, message: `config of model ${o.model} (content): ${o.error}` });

const versionsSettings = {
  ...environmentsSchema("Environments (label triton-platform/environment of the pods that load the model) the rule applies to."),
  minVersions: { type: "integer", minimum: 1, default: 2, description: "Least model versions the version policy keeps served." },
} as const;

/** How many versions a version_policy keeps served (Triton's default: latest 1); Infinity for all. */
function versionsServed(config: PbMessage): number {
  const vp = config.version_policy as { latest?: { num_versions?: number }; specific?: { versions?: number[] }; all?: object } | undefined;
  if (!vp) return 1;
  if (vp.all) return Infinity;
  if (vp.specific) return vp.specific.versions?.length ?? 0;
  return vp.latest?.num_versions ?? 0;
}

export const modelsKeepRollbackVersions = stackRule<EnvConfig & { minVersions: number }>({
  name: "models-keep-rollback-versions",
  domain: "models",
  configKey: "triton.groups[name={group}].models",
  description: "In the listed environments (default: production), a model config the stack writes serves at least minVersions versions.",
  prevents: "A bad model version with nothing loaded to roll back to: reverting means a new push and a reload, while the bad version serves.",
  remediationSteps: `Set the model's versionPolicy to {latest: ${versionsSettings.minVersions.default}} or more (or specific versions, or all).`,
  configSchema: { properties: versionsSettings },
  check: (resources, cfg) => {
    const out: Finding[] = [];
    for (const { o } of inEnvironments(resources, cfg)) {
      if (!o.config) {
        out.push(unreadable(o));
        continue;
      }
      const n = versionsServed(o.config);
      if (n < cfg.minVersions)
        out.push({
          path: "content",
          value: o.config.version_policy ?? null,
          urn: o.r.urn,
          message: `config of model ${o.model} (content): version_policy serves ${n} version(s), must serve >= ${cfg.minVersions} (${cfg.environments.join(", ")})`,
        });
    }
    return out;
  },
});

export const modelsWarmUpOnGpu = stackRule<EnvConfig>({
  name: "models-warm-up-on-gpu",
  domain: "models",
  configKey: "triton.groups[name={group}].models",
  description: "In the listed environments (default: production), a model config the stack writes for a GPU model has warm-up samples.",
  prevents:
    "The first requests after a rollout or scale-out paying the GPU's lazy initialisation (kernels, TensorRT context): timeouts while the pod reports ready.",
  remediationSteps: "Add a warmup sample to the model's contract (warmup: [{name, batchSize, inputs: {<input>: {dataType, dims, zeroData: true}}}]).",
  configSchema: {
    properties: { ...environmentsSchema("Environments (label triton-platform/environment of the pods that load the model) the rule applies to.") },
  },
  check: (resources, cfg) => {
    const out: Finding[] = [];
    for (const { o, loaders } of inEnvironments(resources, cfg)) {
      if (!o.config) {
        out.push(unreadable(o));
        continue;
      }
      const groups = (o.config.instance_group as { kind?: string }[] | undefined) ?? [];
      // KIND_GPU anywhere; KIND_AUTO (the default, and no instance group at all) is a GPU model in a GPU pod.
      const onGpu =
        groups.some((g) => g.kind === "KIND_GPU") ||
        ((groups.length === 0 || groups.some((g) => (g.kind ?? "KIND_AUTO") === "KIND_AUTO")) && loaders.some((l) => l.gpu));
      const warmups = (o.config.model_warmup as unknown[] | undefined) ?? [];
      if (onGpu && warmups.length === 0)
        out.push({
          path: "content",
          value: null,
          urn: o.r.urn,
          message: `config of model ${o.model} (content): a GPU model without model_warmup in ${cfg.environments.join(", ")}: its first requests after each start pay the warm-up`,
        });
    }
    return out;
  },
});

export const rules: readonly Rule[] = [modelsKeepRollbackVersions, modelsWarmUpOnGpu];
