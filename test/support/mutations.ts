// Mutations of the fixture plans, one per rule of the pack: the smallest change to the prod plan
// (or the staging plan, for EFS) that the rule must catch. Each is declared beside the rule's own
// tests (`declareMutations([...])` in test/<...>-policies.test.ts), which then checks, in that file,
// that exactly its rule fires at the stack's fixture level with a located finding;
// test/policy-mutations.test.ts loads every declaring file and fails, naming the rule, for a rule
// of the pack without exactly one mutation.
import { strict as assert } from "node:assert";
import { rules } from "../../policies/rules";
import { CONFIG_MAP, DEPLOYMENT, NETWORK_POLICY, SERVICE, STATEFUL_SET } from "../../policies/rules/types";
import type { RecordedResource } from "../../tools/planner";
import { levelOf } from "../../tools/planner/policy";
import { checkAtLevels, fixtureLevels, plan } from "../helpers";

export { DEPLOYMENT, NETWORK_POLICY, SERVICE };

export interface Mutation {
  readonly rule: string;
  /** What it breaks, in a reviewer's words. */
  readonly breaks: string;
  /** The fixture plan it breaks (prod unless set). */
  readonly stack?: "prod" | "staging";
  readonly mutate: (rs: RecordedResource[]) => void;
}

/** Every mutation declared so far (by the test files loaded in this process). */
export const MUTATIONS: Mutation[] = [];

export const first = (rs: RecordedResource[], type: string, where: (r: RecordedResource) => boolean = () => true): RecordedResource => {
  const r = rs.find((x) => x.type === type && where(x));
  if (!r) throw new Error(`the prod plan has no ${type} to mutate`);
  return r;
};

/** Edit the Envoy bootstrap held in the gateway's ConfigMap. */
export const editEnvoy = (rs: RecordedResource[], edit: (c: Record<string, any>) => void) => {
  const cm = first(rs, CONFIG_MAP, (r) => typeof r.props.data?.["envoy.json"] === "string");
  const c = JSON.parse(cm.props.data["envoy.json"]) as Record<string, any>;
  edit(c);
  cm.props.data["envoy.json"] = JSON.stringify(c, null, 2);
};
export const walk = (v: unknown, visit: (o: Record<string, any>) => void): void => {
  if (Array.isArray(v)) v.forEach((x) => walk(x, visit));
  else if (v && typeof v === "object") {
    visit(v as Record<string, any>);
    Object.values(v).forEach((x) => walk(x, visit));
  }
};
export const tritonSts = (rs: RecordedResource[]) => first(rs, STATEFUL_SET, (r) => r.name === "vision");
export const tritonContainer = (rs: RecordedResource[]) => tritonSts(rs).props.spec.template.spec.containers[0];
export const servingNamespace = (rs: RecordedResource[]) => first(rs, "kubernetes:core/v1:Namespace", (r) => r.props.metadata.name === "triton");

/** A Kubernetes object on the stack's provider with the standard labels (so only the rule under test can fire). */
export const k8sObject = (rs: RecordedResource[], type: string, name: string, props: Record<string, any>): RecordedResource => {
  const ns = servingNamespace(rs);
  return {
    urn: `urn:pulumi:prod::triton-platform::${type}::${name}`,
    type,
    name,
    custom: true,
    parent: rs[0].urn,
    provider: ns.provider,
    dependencies: [],
    props: { ...props, metadata: { ...props.metadata, labels: { ...ns.props.metadata.labels } } },
  };
};

/** Edit a JSON document held in a resource property. */
export const editDoc = (rs: RecordedResource[], type: string, name: string, field: string, edit: (d: Record<string, any>) => void) => {
  const r = first(rs, type, (x) => x.name === name);
  const d = JSON.parse(r.props[field]);
  edit(d);
  r.props[field] = JSON.stringify(d);
};

const baselines = new Map<string, Promise<RecordedResource[]>>();

/** The fixture plan a mutation starts from (a fresh copy each call); prod gets access logging for its bucket, so its baseline has no advisory either. */
export async function baseline(stack: "prod" | "staging"): Promise<RecordedResource[]> {
  let b = baselines.get(stack);
  if (!b) {
    b = plan(stack).then(({ resources }) => {
      const rs = structuredClone(resources);
      const bucket = rs.find((r) => r.type === "aws:s3/bucket:Bucket");
      const settings = rs.find((r) => r.type === "aws:s3/bucketVersioning:BucketVersioning");
      if (bucket && settings)
        rs.push({
          ...structuredClone(settings),
          urn: `${settings.urn}-logging`,
          type: "aws:s3/bucketLogging:BucketLogging",
          name: "model-repository-logging",
          dependencies: [bucket.urn],
          props: { bucket: settings.props.bucket, targetBucket: "central-access-logs", targetPrefix: "triton/" },
        });
      return rs;
    });
    baselines.set(stack, b);
  }
  return structuredClone(await b);
}

/** What a mutation fired, and why that is wrong (undefined when it fired exactly its rule, at the stack's level, located). */
export async function mutationProblem(m: Mutation): Promise<string | undefined> {
  const stack = m.stack ?? "prod";
  const rule = rules.find((r) => r.name === m.rule);
  if (!rule) return `${m.rule}: no rule of the pack has this name`;
  const rs = await baseline(stack);
  m.mutate(rs);
  const vs = await checkAtLevels(rs, stack);
  const level = levelOf(rule, fixtureLevels(stack));
  const expected = level === "mandatory" || level === "remediate" ? "mandatory" : "advisory";
  const fired = [...new Set(vs.map((v) => v.policy))];
  const unlocated = vs.filter((v) => !(v.type && v.name && v.path && "value" in v && v.message.includes(v.path) && v.remediation));
  if (fired.length === 1 && fired[0] === m.rule && vs.every((v) => v.level === expected) && unlocated.length === 0) return undefined;
  return (
    `${m.rule} (${m.breaks}): fired [${fired.join(", ")}] at [${vs.map((v) => v.level).join(", ")}], expected ${expected}` +
    (unlocated.length ? `; unlocated ${JSON.stringify(unlocated)}` : "")
  );
}

/** Declare the mutations of the rules a test file tests, and check each in that file. */
export function declareMutations(ms: readonly Mutation[]): void {
  MUTATIONS.push(...ms);
  describe(`mutations of the fixture plans (${ms.map((m) => m.rule).join(", ")})`, function () {
    this.timeout(120_000);
    for (const m of ms) {
      it(`${m.rule}: ${m.breaks}: fires exactly ${m.rule}, at the stack's level, located`, async () => {
        const problem = await mutationProblem(m);
        assert.equal(problem, undefined, problem);
      });
    }
  });
}
