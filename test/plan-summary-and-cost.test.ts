// The summary a reviewer reads first in every plan (tools/planner/summary.ts) and the GPU cost
// in it (config/cost.ts over components/upstream/ec2-prices.ts): what the summary of a fixture
// names, that a changed fixture changes it, the cost arithmetic (two instance types, a region
// without a price), and the delta's sign and wording. Fixtures only; prices are read from the
// table, never restated, so a price update does not break the arithmetic tests.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { loadConfig } from "../config";
import { capacityPlan } from "../config/capacity";
import { COST_EXCLUDES, costDelta, costInputOfValues, formatCostDelta, signedUsd, stackCost, usd, usdRange, type CostInput } from "../config/cost";
import { EC2_ON_DEMAND_USD_PER_HOUR, HOURS_PER_MONTH, onDemandHourlyUsd, onDemandMonthlyUsd, PRICED_REGIONS } from "../components/upstream/ec2-prices";
import { gpuInstanceType } from "../components/upstream/ec2-gpu-instances";
import { AWS_REGIONS } from "../components/upstream/aws-regions";
import { policyRow, summaryMarkdown, summaryText, type SummaryPolicy } from "../tools/planner/summary";
import { summaryRows } from "../config/summary";
import { fixtureConfig, fixtureStack, fixtureValues, fixtureYaml, type Overrides } from "./support/stacks";
import { git, planFixture, runTool, tempProject } from "./helpers";
import { formatText } from "../tools/planner/report";
import { stackMarkdown } from "../tools/planner/markdown";

type Sections = Record<string, any>;

const SECRET_KEYS = ["triton-platform:monitoring"];

function resolved(shape: string, edit: Overrides = {}) {
  return loadConfig(fixtureConfig(shape, edit), shape, SECRET_KEYS);
}

const POLICY: SummaryPolicy = {
  rules: [
    { name: "triton-image-pinned", level: "mandatory" },
    { name: "gateway-canary-mirrored", level: "advisory" },
    { name: "gpu-nodes-span-zones", level: "disabled" },
  ],
  violations: [],
};

function summaryOf(shape: string, edit: Overrides = {}, policy: SummaryPolicy = POLICY): string {
  const config = resolved(shape, edit);
  return summaryText([...summaryRows(config), policyRow(policy)]).join("\n");
}

const hourly = (type: string, region: string) => {
  const h = onDemandHourlyUsd(type, region);
  assert.ok(h !== undefined, `the price table has ${type} in ${region}`);
  return h;
};

describe("EC2 on-demand price table", () => {
  it("prices only instance types of the facts table, in the regions it names, as positive hourly USD", () => {
    const types = Object.keys(EC2_ON_DEMAND_USD_PER_HOUR);
    assert.ok(types.length > 40, `${types.length} types`);
    for (const t of types) {
      assert.ok(gpuInstanceType(t), `${t} is in ec2-gpu-instances.ts`);
      for (const [r, p] of Object.entries(EC2_ON_DEMAND_USD_PER_HOUR[t])) {
        assert.ok((PRICED_REGIONS as readonly string[]).includes(r), `${t}: ${r} is a priced region`);
        assert.ok(Number.isFinite(p) && p > 0 && p < 1000, `${t} in ${r}: ${p}`);
      }
    }
    for (const r of PRICED_REGIONS) assert.ok(AWS_REGIONS.includes(r), `${r} is an AWS region`);
  });

  it("the example stacks' regions and every common GPU region have prices for the L4 and T4 types", () => {
    for (const r of ["us-east-1", "us-east-2", "us-west-2", "eu-central-1", "ap-northeast-1"]) {
      for (const t of ["g4dn.xlarge", "g6.xlarge", "g6.4xlarge"]) assert.ok(onDemandHourlyUsd(t, r) !== undefined, `${t} in ${r}`);
    }
  });

  it("bigger sizes of a family cost more per hour in a region (a transposed row would break this)", () => {
    const bySize = (family: string, sizes: string[], region: string) => sizes.map((s) => hourly(`${family}.${s}`, region));
    for (const region of ["us-east-1", "eu-central-1", "ap-northeast-1"]) {
      for (const [family, sizes] of [
        ["g6", ["xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge"]],
        ["g5", ["xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge"]],
        ["g6e", ["xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge"]],
      ] as const) {
        const p = bySize(family, [...sizes], region);
        for (let i = 1; i < p.length; i++) assert.ok(p[i] > p[i - 1], `${family}.${sizes[i]} > ${family}.${sizes[i - 1]} in ${region}`);
      }
    }
    // us-east-1 is the cheapest of the priced regions for every type priced there and elsewhere.
    for (const [t, byRegion] of Object.entries(EC2_ON_DEMAND_USD_PER_HOUR)) {
      const east = byRegion["us-east-1"];
      if (east === undefined) continue;
      for (const [r, p] of Object.entries(byRegion)) assert.ok(p >= east - 1e-5, `${t}: ${r} ${p} >= us-east-1 ${east}`);
    }
  });

  it("monthly is hourly × 730; a type or region without a price is undefined, never 0", () => {
    assert.equal(HOURS_PER_MONTH, 730);
    assert.equal(onDemandMonthlyUsd("g6.xlarge", "us-east-1"), hourly("g6.xlarge", "us-east-1") * 730);
    assert.equal(onDemandHourlyUsd("g6.xlarge", "eu-west-1"), undefined, "g6 is not on demand in eu-west-1 in the source");
    assert.equal(onDemandHourlyUsd("g6.xlarge", "sa-east-1"), undefined, "a region the table does not cover");
    assert.equal(onDemandHourlyUsd("g6.9xlarge", "us-east-1"), undefined);
    assert.equal(onDemandHourlyUsd("p5e.48xlarge", "us-east-1"), undefined, "Capacity Blocks only: no on-demand price");
    assert.equal(onDemandHourlyUsd("__proto__", "us-east-1"), undefined);
    assert.equal(onDemandHourlyUsd("g6.xlarge", "toString"), undefined);
    assert.equal(onDemandMonthlyUsd("g6.xlarge", "eu-west-1"), undefined);
  });
});

describe("GPU cost of a stack", () => {
  it("is nodes × the first instance type's hourly price × 730, at the minimum and the maximum", () => {
    const cfg = resolved("staging");
    const c = stackCost(cfg);
    const m = hourly(cfg.gpu.instanceTypes[0], "us-east-1") * HOURS_PER_MONTH;
    assert.deepEqual(c.monthlyUsd, { min: cfg.gpu.scaling.min * m, max: cfg.gpu.scaling.max * m });
    assert.equal(c.nodeGroups[0].spread, undefined, "one instance type: no range");
    assert.deepEqual(c.nodeGroups[0].unpriced, []);
  });

  it("with two instance types prices the first (the group launches it first) and gives the cheapest..dearest range", () => {
    // g6.8xlarge first, g6.4xlarge second: the first is the dearer one, so the range is not the headline.
    const cfg = resolved("prod", (s: Sections) => (s.gpu.instanceTypes = ["g6.8xlarge", "g6.4xlarge"]));
    const ng = stackCost(cfg).nodeGroups[0];
    const first = hourly("g6.8xlarge", "us-east-1") * 730;
    const other = hourly("g6.4xlarge", "us-east-1") * 730;
    const { min, max } = cfg.gpu.scaling;
    assert.equal(ng.priced.type, "g6.8xlarge");
    assert.deepEqual(ng.monthlyUsd, { min: min * first, max: max * first });
    assert.deepEqual(ng.spread, {
      cheapest: "g6.4xlarge",
      dearest: "g6.8xlarge",
      low: { min: min * other, max: max * other },
      high: { min: min * first, max: max * first },
    });
    // Order matters: swapped, the headline is the cheaper type.
    const swapped = stackCost(resolved("prod", (s: Sections) => (s.gpu.instanceTypes = ["g6.4xlarge", "g6.8xlarge"])));
    assert.deepEqual(swapped.monthlyUsd, { min: min * other, max: max * other });
  });

  it("in a region without a price: no total, each type listed as unpriced, and the summary says price unknown", () => {
    const edit = (s: Sections) => {
      s["aws:region"] = "eu-west-1";
      s.cluster.zones = ["eu-west-1a", "eu-west-1b", "eu-west-1c"];
      s.gpu.instanceTypes = ["g6.4xlarge", "g6.8xlarge"];
    };
    const c = stackCost(resolved("prod", edit));
    assert.equal(c.monthlyUsd, undefined);
    assert.deepEqual(c.nodeGroups[0].unpriced, ["g6.4xlarge", "g6.8xlarge"]);
    assert.equal(c.nodeGroups[0].spread, undefined);
    const text = summaryOf("prod", edit);
    assert.match(text, /cost +price unknown: g6\.4xlarge has no on-demand price in eu-west-1/);
    assert.doesNotMatch(text, /\$\d[\d,]*\/month/, "no dollar figure when the price is unknown");
    assert.match(text, /price unknown in eu-west-1: g6\.8xlarge/);
  });

  it("when only the first type is unpriced, the total is unknown and the range covers the priced ones", () => {
    // p4de has no us-east-2 price in the source, p4d has: a pure input (the two are one GPU model, A100).
    const input: CostInput = { region: "us-east-2", gpu: { instanceTypes: ["p4de.24xlarge", "p4d.24xlarge"], scaling: { min: 1, max: 2 } } };
    const ng = stackCost(input).nodeGroups[0];
    const p4d = hourly("p4d.24xlarge", "us-east-2") * 730;
    assert.equal(ng.monthlyUsd, undefined);
    assert.deepEqual(ng.unpriced, ["p4de.24xlarge"]);
    assert.deepEqual(ng.spread, { cheapest: "p4d.24xlarge", dearest: "p4d.24xlarge", low: { min: p4d, max: 2 * p4d }, high: { min: p4d, max: 2 * p4d } });
    assert.equal(stackCost(input).monthlyUsd, undefined);
  });

  it("a node group scaled to zero costs $0 at its minimum", () => {
    const c = stackCost({ region: "us-west-2", gpu: { instanceTypes: ["g5.xlarge"], scaling: { min: 0, max: 3 } } });
    assert.deepEqual(c.monthlyUsd, { min: 0, max: 3 * hourly("g5.xlarge", "us-west-2") * 730 });
  });

  it("the base's cost input comes from its stack file's values as written, the same as the resolved config's", () => {
    for (const shape of ["dev", "staging", "prod"]) {
      const cfg = resolved(shape);
      assert.deepEqual(costInputOfValues(fixtureValues(shape), "triton-platform"), {
        region: cfg.region,
        gpu: { instanceTypes: cfg.gpu.instanceTypes, scaling: { min: cfg.gpu.scaling.min, max: cfg.gpu.scaling.max } },
      });
    }
    assert.equal(costInputOfValues(fixtureValues("prod", { gpu: undefined }), "triton-platform"), undefined);
    assert.equal(
      costInputOfValues(
        fixtureValues("prod", (s: Sections) => (s.gpu.scaling = { min: "3", max: 9 })),
        "triton-platform",
      ),
      undefined,
    );
    assert.equal(
      costInputOfValues(
        fixtureValues("prod", (s: Sections) => (s.gpu.instanceTypes = "g6.xlarge")),
        "triton-platform",
      ),
      undefined,
    );
    assert.equal(costInputOfValues(fixtureValues("prod", { "aws:region": undefined }), "triton-platform"), undefined);
  });
});

describe("cost wording and the delta against the base", () => {
  it("dollars are whole, with thousands separators; a range collapses when both ends round alike", () => {
    assert.equal(usd(1234.4), "$1,234");
    assert.equal(usd(1234.5), "$1,235");
    assert.equal(usd(0), "$0");
    assert.equal(usd(1_234_567), "$1,234,567");
    assert.equal(usdRange({ min: 383.98, max: 383.98 }), "$384");
    assert.equal(usdRange({ min: 2897.8, max: 8693.4 }), "$2,898..$8,693");
  });

  it("a delta carries its sign: +$1,234, -$300, and $0 for less than 50 cents", () => {
    assert.equal(signedUsd(1234), "+$1,234");
    assert.equal(signedUsd(-300.2), "-$300");
    assert.equal(signedUsd(0.4), "$0");
    assert.equal(signedUsd(-0.4), "$0");
  });

  it("one more node at the minimum is +1 node's month at minimum; the maximum unchanged is $0", () => {
    const base = stackCost(resolved("prod"));
    const head = stackCost(resolved("prod", (s: Sections) => Object.assign(s.gpu.scaling, { min: 4, desired: 4 })));
    const node = hourly("g6.4xlarge", "us-east-1") * 730;
    const d = costDelta(base, head);
    assert.ok(Math.abs(d.min! - node) < 1e-9, `${d.min} = ${node}`);
    assert.equal(d.max, 0);
    const line = formatCostDelta(d);
    assert.ok(line.startsWith(`${signedUsd(node)}/month at minimum, $0/month at maximum`), line);
    assert.match(line, /^\+\$[\d,]+\/month at minimum/);
    assert.ok(line.includes(`${usd(base.monthlyUsd!.min)} → ${usd(head.monthlyUsd!.min)} at minimum`), line);
  });

  it("a cheaper instance type is a negative delta at both ends; no change says so", () => {
    const base = stackCost(resolved("prod"));
    const head = stackCost(resolved("prod", (s: Sections) => (s.gpu.instanceTypes = ["g6.2xlarge"])));
    const d = costDelta(base, head);
    assert.ok(d.min! < 0 && d.max! < 0);
    assert.match(formatCostDelta(d), /^-\$[\d,]+\/month at minimum, -\$[\d,]+\/month at maximum/);
    assert.match(formatCostDelta(costDelta(base, base)), /^no change \(\$[\d,]+\.\.\$[\d,]+\/month\)$/);
  });

  it("an unknown price on either side is said, not counted as $0", () => {
    const priced = stackCost(resolved("prod"));
    const unpriced = stackCost({ region: "eu-west-1", gpu: { instanceTypes: ["g6.4xlarge"], scaling: { min: 3, max: 9 } } });
    assert.equal(costDelta(unpriced, priced).min, undefined);
    assert.match(formatCostDelta(costDelta(unpriced, priced)), /^price unknown on the base \(now \$[\d,]+\.\.\$[\d,]+\/month\)$/);
    assert.equal(formatCostDelta(costDelta(priced, unpriced)), "price unknown on the head");
    assert.equal(formatCostDelta(costDelta(undefined, undefined)), "price unknown on the base and head");
    assert.match(
      formatCostDelta(costDelta(undefined, priced), { newStack: true }),
      /^\+\$[\d,]+\/month at minimum, \+\$[\d,]+\/month at maximum \(new stack\)$/,
    );
  });
});

describe("the summary of a stack", () => {
  it("names the region, cluster, zones, GPU nodes, serving group, capacity, cost, gateway, monitoring, autoscaler and policies", () => {
    const cfg = resolved("prod");
    const text = summaryOf("prod");
    const g = cfg.triton.groups[0];
    const c = stackCost(cfg);
    const { min, max } = cfg.gpu.scaling;
    const cap = capacityPlan(cfg).gpus;
    for (const want of [
      `stack       prod · us-east-1 · cluster ml-prod · zones us-east-1a, us-east-1b, us-east-1c`,
      `g6.4xlarge × ${min}..${max} nodes · 1 × nvidia-l4 per node`,
      `AMI AL2023_x86_64_NVIDIA (NVIDIA driver R580) · GPU Operator ${cfg.gpu.operator.version}`,
      `vision: Triton ${g.image.tag} · ${g.replicas} replicas, HPA ${g.hpa.min}..${g.hpa.max} · per pod 1 GPU (nvidia-l4), ${g.cpu} CPU, ${g.memory} · models resnet50, efficientnet_b0`,
      `canary: Triton ${g.canary!.image!.tag} × ${g.canary!.replicas} · mirror ${cfg.gateway.mirrorPercent} % of requests`,
      `GPUs needed ${cap.needed.min}..${cap.needed.max}, available ${cap.available.min}..${cap.available.max}`,
      `${usd(c.monthlyUsd!.min)}/month at minimum, ${usd(c.monthlyUsd!.max)}/month at maximum (${min}..${max} × g6.4xlarge at $${hourly("g6.4xlarge", "us-east-1")}/h in us-east-1)`,
      `leaves out: ${COST_EXCLUDES.join(", ")}`,
      `internal load balancer for 10.10.0.0/16, 10.11.0.0/16, fd12:3456:789a::/48 · 3 replicas`,
      `retention 30d · 2 Prometheus replicas · Alertmanager × 3 → pagerduty, slack (#ml-prod-alerts), heartbeat`,
      `Cluster Autoscaler (chart ${cfg.autoscaler.version}, image ${cfg.autoscaler.imageTag}) · 2 replicas · expander least-waste`,
      `2 of 3 rules evaluated (1 mandatory, 1 advisory, 1 disabled) · no violations`,
    ]) {
      assert.ok(text.includes(want), `summary lacks: ${want}\n${text}`);
    }
    // One row per subject, labels in a column.
    const labels = text
      .split("\n")
      .filter((l) => !l.startsWith(" "))
      .map((l) => l.split(/ {2,}/)[0]);
    assert.deepEqual(labels, ["stack", "GPU nodes", "serving", "capacity", "cost", "gateway", "monitoring", "autoscaler", "policies"]);
  });

  it("a second serving group appears with its own line; a group without a canary has no canary line", () => {
    const edit = (s: Sections) => {
      s.gpu.scaling = { min: 5, desired: 5, max: 12 };
      s.triton.groups.push({ ...structuredClone(s.triton.groups[0]), name: "text", models: ["bert"], canary: undefined, image: { tag: "25.02-py3" } });
    };
    const text = summaryOf("prod", edit);
    assert.match(text, /^ {12}text: Triton 25\.02-py3 · 3 replicas, HPA 3\.\.9 · per pod 1 GPU \(nvidia-l4\), 6 CPU, 24Gi · models bert$/m);
    assert.equal(text.match(/canary:/g)?.length, 1, "only vision has a canary");
    assert.doesNotMatch(summaryOf("dev"), /canary/);
  });

  it("a price change changes the cost: another instance type, another region, more nodes", () => {
    const cost = (t: string) => /cost +(.*)/.exec(t)![1];
    const base = cost(summaryOf("prod"));
    assert.notEqual(cost(summaryOf("prod", (s: Sections) => (s.gpu.instanceTypes = ["g6.8xlarge"]))), base);
    assert.notEqual(cost(summaryOf("prod", (s: Sections) => (s.gpu.scaling.max = 12))), base);
    const frankfurt = (s: Sections) => {
      s["aws:region"] = "eu-central-1";
      s.cluster.zones = ["eu-central-1a", "eu-central-1b", "eu-central-1c"];
    };
    const fra = cost(summaryOf("prod", frankfurt));
    assert.notEqual(fra, base);
    assert.ok(fra.includes(`$${hourly("g6.4xlarge", "eu-central-1")}/h in eu-central-1`), fra);
  });

  it("shows the canary's traffic share where the config has the key, and the violations by level and rule", () => {
    const withTraffic = resolved("staging", (s: Sections) => (s.triton.groups[0].canary.trafficPercent = 20));
    const policy: SummaryPolicy = {
      rules: POLICY.rules,
      violations: [
        { policy: "triton-image-pinned", level: "mandatory" },
        { policy: "triton-image-pinned", level: "mandatory" },
        { policy: "gateway-canary-mirrored", level: "advisory" },
      ],
      levelsFile: "policies/config/staging.json",
    };
    const text = summaryText([...summaryRows(withTraffic), policyRow(policy)]).join("\n");
    assert.match(text, /canary: Triton 25\.02-py3 × 1 · mirror 10 % of requests, traffic 20 %/);
    // The default share (0) is said too: the canary gets mirrored requests only.
    assert.match(summaryOf("staging"), /canary: Triton 25\.02-py3 × 1 · mirror 10 % of requests, traffic 0 %/);
    assert.match(text, /from policies\/config\/staging\.json · 3 violations: 2 mandatory, 1 advisory \(triton-image-pinned, gateway-canary-mirrored\)/);
  });

  it("names receivers by kind, never a secret or a receiver's URL", () => {
    for (const shape of ["staging", "prod"]) {
      const text = summaryOf(shape);
      const cfg = resolved(shape);
      const md = summaryMarkdown(summaryRows(cfg)).join("\n");
      for (const out of [text, md]) {
        assert.doesNotMatch(out, /placeholder|secret|https?:\/\/|hooks\.slack/i, out);
      }
    }
    assert.match(summaryOf("staging"), /Alertmanager × 1 → slack \(#ml-staging-alerts\), webhook, heartbeat/);
    assert.match(summaryOf("dev"), /Alertmanager off/);
    assert.match(summaryOf("dev"), /no load balancer \(no gateway\.clientCidrs\) · 1 replica/);
  });

  it("renders as Markdown: a bullet per row, further lines nested, Markdown's special characters escaped", () => {
    const cfg = resolved("prod");
    const rows = [...summaryRows(cfg), policyRow(POLICY)];
    const md = summaryMarkdown(rows);
    assert.ok(md[0].startsWith("- **stack**: prod · us-east-1"), md[0]);
    assert.ok(
      md.every((l) => /^(- \*\*[a-zA-Z ]+\*\*: | {2}- )/.test(l)),
      md.join("\n"),
    );
    assert.ok(
      md.some((l) => l.includes("AL2023\\_x86\\_64\\_NVIDIA")),
      "underscores escaped",
    );
    assert.equal(md.filter((l) => l.startsWith("- ")).length, rows.length);
  });
});

describe("the summary in the plan", function () {
  this.timeout(120_000);

  it("is the first section of every stack's report: first in the text, first in the Markdown, with its data in the JSON", async () => {
    const { report } = await planFixture(fixtureStack("staging"));
    assert.equal(report.sections?.[0]?.id, "summary");
    const text = formatText(report).split("\n");
    assert.match(text[0], /^stack staging: \d+ resources/);
    assert.equal(text[1], "  summary");
    assert.match(text[2], /^ {4}stack {7}staging · us-east-1 · cluster ml-staging · zones us-east-1a, us-east-1b$/);
    assert.ok(text.findIndex((l) => l.startsWith("  policies:")) > text.findIndex((l) => l.startsWith("    policies")), "the summary before the policy block");
    const md = stackMarkdown(report).split("\n");
    const first = md.findIndex((l) => l.length > 0 && !l.startsWith("### "));
    assert.equal(md[first], "**summary**");
    assert.match(md[first + 2], /^- \*\*stack\*\*: staging · us-east-1/);
    const data = report.sections[0].data as { cost: { monthlyUsd: { min: number } } };
    const cfg = resolved("staging");
    assert.equal(data.cost.monthlyUsd.min, cfg.gpu.scaling.min * hourly("g6.xlarge", "us-east-1") * 730);
  });
});

describe("the cost delta in the pull-request diff (fixture stack in a temporary git repository)", function () {
  this.timeout(120_000);
  let dir: string;

  before(() => {
    dir = tempProject({ dev: fixtureYaml("dev") });
    fs.writeFileSync(path.join(dir, ".gitignore"), "node_modules\nout/\n");
    git(dir, "init", "-q");
    git(dir, "add", "-A");
    git(dir, "commit", "-q", "-m", "base: dev on one g4dn.xlarge");
  });

  it("says +$N/month at minimum and maximum in text, Markdown and JSON when a bigger instance type is chosen", async () => {
    fs.writeFileSync(
      path.join(dir, "Pulumi.dev.yaml"),
      fixtureYaml("dev", (s: Sections) => (s.gpu.instanceTypes = ["g4dn.2xlarge"])),
    );
    const node = (hourly("g4dn.2xlarge", "us-west-2") - hourly("g4dn.xlarge", "us-west-2")) * 730;
    const want = `${signedUsd(node)}/month at minimum, ${signedUsd(node)}/month at maximum`;
    assert.match(want, /^\+\$\d+/);

    const text = await runTool(dir, "plan", ["--stack", "dev", "--base", "HEAD", "--out", path.join(dir, "out")]);
    assert.equal(text.status, 0, text.stderr);
    assert.ok(text.stdout.includes(`  GPU cost (on demand): ${want}`), text.stdout);

    const out = path.join(dir, "plan.json");
    const md = await runTool(dir, "plan", ["--stack", "dev", "--base", "HEAD", "--format", "markdown", "--out", path.join(dir, "out"), "--output", out]);
    assert.equal(md.status, 0, md.stderr);
    assert.ok(md.stdout.includes(`**GPU cost (on demand)**: ${want}`), md.stdout);
    // The summary of the head prices the new type.
    assert.ok(md.stdout.includes(`g4dn.2xlarge at $${hourly("g4dn.2xlarge", "us-west-2")}/h in us-west-2`), md.stdout);
    const cost = JSON.parse(fs.readFileSync(out, "utf8")).stacks[0].diff.cost;
    assert.ok(Math.abs(cost.min - node) < 1e-9 && Math.abs(cost.max - node) < 1e-9, JSON.stringify(cost));
    assert.equal(
      cost.text,
      formatCostDelta(costDelta(stackCost(resolved("dev")), stackCost(resolved("dev", (s: Sections) => (s.gpu.instanceTypes = ["g4dn.2xlarge"]))))),
    );
  });

  it("says no change when the stack's GPU nodes are unchanged", async () => {
    fs.writeFileSync(
      path.join(dir, "Pulumi.dev.yaml"),
      fixtureYaml("dev", (s: Sections) => (s.gateway.replicas = 2)),
    );
    const r = await runTool(dir, "plan", ["--stack", "dev", "--base", "HEAD", "--out", path.join(dir, "out")]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^ {2}GPU cost \(on demand\): no change \(\$\d+\/month\)$/m);
  });

  afterEach(() => git(dir, "checkout", "-q", "--", "."));
});
