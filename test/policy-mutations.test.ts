// Mutation test of the policy pack: break one safety setting of the prod (or staging) fixture
// plan at a time and check that exactly the rule that protects it fires, at the stack's level.
// The mutations sit beside each rule's tests (declareMutations in test/<...>-policies.test.ts,
// checked there: test/support/mutations.ts); this file loads every declaring file, fails naming
// any rule of the pack without exactly one mutation, keeps the pack-wide variants that must pass,
// and runs `npm run policy` on a few mutated plans as a reviewer would.
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { rules } from "../policies/rules";
import type { RecordedResource } from "../tools/planner";
import type { Violation } from "../tools/planner/policy";
import { parseFlag } from "../components/upstream/tritonserver";
import { checkAtLevels, ROOT } from "./helpers";
import { baseline, DEPLOYMENT, editDoc, first, MUTATIONS, NETWORK_POLICY, SERVICE, tritonContainer } from "./support/mutations";

/** The test files that declare mutations (declareMutations): loaded here so the pack-wide checks below see every one. */
const DECLARING = fs
  .readdirSync(__dirname)
  .filter((f) => f.endsWith(".test.ts") && f !== path.basename(__filename))
  .filter((f) => fs.readFileSync(path.join(__dirname, f), "utf8").includes("declareMutations(["));
// eslint-disable-next-line @typescript-eslint/no-require-imports -- each declaring file by path; mocha loads it once (the require cache), whichever file asks first
for (const f of DECLARING) require(path.join(__dirname, f));

function runPolicy(file: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["--require", path.join(ROOT, "tools", "register.cjs"), path.join(ROOT, "tools", "policy.ts"), "--resources", file, "--stack", "prod", "--json"],
      { cwd: ROOT },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** Reasonable variants that must pass at prod levels (false alarms of the old pack among them). */
export const VARIANTS: { accepts: string; mutate: (rs: RecordedResource[]) => void; pendingUnless?: () => boolean }[] = [
  {
    accepts: "Triton's restriction flags --http-restricted-api / --grpc-restricted-protocol (the security fix)",
    pendingUnless: () => {
      try {
        parseFlag("--http-restricted-api=model-repository:x-triton-admin=k");
        return true;
      } catch {
        return false; // the flags land in components/upstream/tritonserver.ts with the restriction-flags branch
      }
    },
    mutate: (rs) =>
      tritonContainer(rs).args.push(
        "--http-restricted-api=model-repository,model-config:x-triton-admin=k",
        "--grpc-restricted-protocol=model-repository,model-config:x-triton-admin=k",
      ),
  },
  {
    accepts: "a list-form, lower-case aws:SecureTransport condition",
    mutate: (rs) =>
      editDoc(rs, "aws:s3/bucketPolicy:BucketPolicy", "model-repository-tls-only", "policy", (d) => {
        const st = d.Statement.find((x: { Sid?: string }) => x.Sid === "DenyInsecureTransport");
        st.Condition = { Bool: { "aws:securetransport": ["false"] } };
        st.Principal = { AWS: ["*"] };
      }),
  },
  {
    accepts: 's3:ListAllMyBuckets and ec2:Describe* on "*", and tag-scoped autoscaling writes on "*"',
    mutate: (rs) =>
      editDoc(rs, "aws:iam/rolePolicy:RolePolicy", "model-repository-reader", "policy", (d) =>
        d.Statement.push(
          { Effect: "Allow", Action: ["s3:ListAllMyBuckets", "ec2:DescribeInstances"], Resource: "*" },
          {
            Effect: "Allow",
            Action: ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"],
            Resource: "*",
            Condition: { StringEquals: { "aws:ResourceTag/k8s.io/cluster-autoscaler/ml-prod": "owned" } },
          },
        ),
      ),
  },
  {
    accepts: "an IRSA trust with list-form values and upper-case condition keys",
    mutate: (rs) =>
      editDoc(rs, "aws:iam/role:Role", "model-repository-reader", "assumeRolePolicy", (d) => {
        const c = d.Statement[0].Condition.StringEquals;
        d.Statement[0].Condition = { StringEquals: Object.fromEntries(Object.entries(c).map(([k, v]) => [k.replace(/:sub$/, ":SUB"), [v]])) };
      }),
  },
  {
    accepts: "SSE-S3 on an access-log bucket (log delivery supports nothing else)",
    mutate: (rs) => {
      const bucket = first(rs, "aws:s3/bucket:Bucket");
      const logBucket: RecordedResource = {
        ...structuredClone(bucket),
        urn: `${bucket.urn}-logs`,
        name: "access-logs",
        props: { bucket: "triton-access-logs" },
      };
      rs.push(logBucket);
      const modelBucket = String(first(rs, "aws:s3/bucketVersioning:BucketVersioning").props.bucket);
      for (const s of rs.filter((r) => r.type.startsWith("aws:s3/bucket") && r.props.bucket === modelBucket && !r.type.includes("Logging"))) {
        const props: Record<string, any> = { ...structuredClone(s.props), bucket: "triton-access-logs" };
        if (s.type.includes("ServerSideEncryption")) props.rules = [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "AES256" } }];
        if (s.type.includes("BucketPolicy")) props.policy = String(props.policy).split(modelBucket).join("triton-access-logs");
        rs.push({ ...structuredClone(s), urn: `${s.urn}-logs`, name: `${s.name}-logs`, dependencies: [logBucket.urn], props });
      }
      first(rs, "aws:s3/bucketLogging:BucketLogging").props.targetBucket = "triton-access-logs";
    },
  },
  {
    accepts: "a digest-pinned Triton image pulled Always, and an initContainer under the pod's security context",
    mutate: (rs) => {
      const c = tritonContainer(rs);
      c.image = `nvcr.io/nvidia/tritonserver@sha256:${"a".repeat(64)}`;
      c.imagePullPolicy = "Always";
      const gw = first(rs, DEPLOYMENT).props.spec.template.spec;
      gw.initContainers = [
        {
          name: "init",
          image: "public.ecr.aws/docker/library/busybox:1.37.0",
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"], add: ["NET_BIND_SERVICE"] } },
        },
      ];
    },
  },
  {
    accepts: "an internet-facing gateway load balancer restricted to client ranges, and SSH from a private range",
    mutate: (rs) => {
      const svc = first(rs, SERVICE, (r) => r.props.spec?.type === "LoadBalancer");
      svc.props.metadata.annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"] = "internet-facing";
      svc.props.spec.loadBalancerSourceRanges = ["198.51.100.0/24", "203.0.113.0/24", "52.94.0.0/16"];
      const r = structuredClone(first(rs, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", (x) => x.props.referencedSecurityGroupId !== undefined));
      rs.push({
        ...r,
        urn: `${r.urn}-ssh`,
        name: "ssh-admin",
        props: { securityGroupId: r.props.securityGroupId, ipProtocol: "tcp", fromPort: 22, toPort: 22, cidrIpv4: "10.0.0.0/8" },
      });
    },
  },
  {
    accepts: 'a key policy letting "*" use the key only from the account through S3, and anonymous Grafana viewers',
    mutate: (rs) => {
      editDoc(rs, "aws:kms/key:Key", "model-repository-key", "policy", (d) =>
        d.Statement.push({
          Effect: "Allow",
          Principal: { AWS: "*" },
          Action: ["kms:Decrypt"],
          Resource: "*",
          Condition: { StringEquals: { "kms:CallerAccount": "123456789012", "kms:ViaService": "s3.us-east-1.amazonaws.com" } },
        }),
      );
      first(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "kube-prometheus-stack").props.values.grafana["grafana.ini"] = {
        "auth.anonymous": { enabled: true, org_role: "Viewer" },
      };
    },
  },
  {
    accepts: "Triton with --model-control-mode=none (no load API), and Session Manager's policy on the GPU node role",
    mutate: (rs) => {
      const c = tritonContainer(rs);
      c.args = c.args
        .filter((a: string) => !a.startsWith("--load-model="))
        .map((a: string) => (a.startsWith("--model-control-mode=") ? "--model-control-mode=none" : a));
      const a = structuredClone(first(rs, "aws:iam/rolePolicyAttachment:RolePolicyAttachment"));
      rs.push({ ...a, urn: `${a.urn}-ssm`, name: "gpu-node-ssm", props: { ...a.props, policyArn: "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore" } });
    },
  },
  {
    accepts: "the Prometheus peer of Triton's metrics policy written with matchExpressions (In one value)",
    mutate: (rs) => {
      const peer = first(rs, NETWORK_POLICY, (r) => r.props.metadata.name === "triton-metrics-from-prometheus").props.spec.ingress[0].from[0];
      peer.namespaceSelector = { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["monitoring"] }] };
      peer.podSelector = { matchExpressions: [{ key: "app.kubernetes.io/name", operator: "In", values: ["prometheus"] }] };
    },
  },
];

describe("policy pack mutation test (prod and staging plans, at their levels)", function () {
  this.timeout(120_000);

  it("loads the files that declare mutations", () => {
    assert.ok(DECLARING.length >= 2, `declaring files: ${DECLARING.join(", ")}`);
  });

  for (const r of rules)
    it(`${r.name} has exactly one mutation of a fixture plan (declareMutations beside its tests)`, () => {
      const found = MUTATIONS.filter((m) => m.rule === r.name);
      assert.equal(found.length, 1, `${r.name}: ${found.length} mutations declared (in ${DECLARING.join(", ")})`);
    });

  it("every mutation names a rule of the pack", () => {
    const names = new Set(rules.map((r) => r.name));
    assert.deepEqual(
      MUTATIONS.filter((m) => !names.has(m.rule)).map((m) => m.rule),
      [],
    );
  });

  it("the fixture baselines the mutations start from pass at their levels", async () => {
    for (const stack of ["prod", "staging"] as const)
      assert.deepEqual(
        (await checkAtLevels(await baseline(stack), stack)).map((v) => v.policy),
        [],
        `${stack} baseline`,
      );
  });

  for (const v of VARIANTS) {
    it(`accepts ${v.accepts}`, async function () {
      if (v.pendingUnless && !v.pendingUnless()) this.skip();
      const rs = await baseline("prod");
      v.mutate(rs);
      assert.deepEqual(
        (await checkAtLevels(rs, "prod")).map((x) => `${x.policy}: ${x.message}`),
        [],
      );
    });
  }

  it("npm run policy --stack prod: exit 0 on the baseline and on the variants, exit 1 on mutations, each naming its rule", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mutations-"));
    const write = (name: string, rs: RecordedResource[]) => {
      const file = path.join(dir, `${name}.json`);
      fs.writeFileSync(file, JSON.stringify(rs));
      return file;
    };
    const variants = await baseline("prod");
    for (const v of VARIANTS) if (!v.pendingUnless || v.pendingUnless()) v.mutate(variants);
    const picked = [
      "pod-security-restricted",
      "firewall-no-world-ingress-on-triton-ports",
      "iam-statements-least-privilege",
      "gateway-envoy-admin-not-exposed",
    ];
    const jobs = [
      { expect: 0, rule: undefined as string | undefined, file: write("baseline", await baseline("prod")) },
      { expect: 0, rule: undefined, file: write("variants", variants) },
      ...(await Promise.all(
        picked.map(async (rule) => {
          const rs = await baseline("prod");
          MUTATIONS.find((m) => m.rule === rule)!.mutate(rs);
          return { expect: 1, rule: rule, file: write(rule, rs) };
        }),
      )),
    ];
    for (let i = 0; i < jobs.length; i += 2) {
      const results = await Promise.all(jobs.slice(i, i + 2).map(async (j) => ({ j, r: await runPolicy(j.file) })));
      for (const { j, r } of results) {
        const vs: Violation[] = r.stdout ? JSON.parse(r.stdout).stacks[0].violations : [];
        assert.equal(r.status, j.expect, `${j.rule ?? path.basename(j.file)}: ${vs.map((v) => v.policy).join(", ")} ${r.stderr}`);
        assert.deepEqual([...new Set(vs.map((v) => v.policy))], j.rule ? [j.rule] : []);
      }
    }
  });
});

describe("the pack as properties, end to end: npm run policy --stack prod on the breaks and on the variants", function () {
  this.timeout(120_000);
  // One process for all the breaks (each caught alone in-process by its mutation above) and one for the variants: what a
  // reviewer's `npm run policy` prints, without a process per case.
  const BREAKS: { rule: string; mutate: (rs: RecordedResource[]) => void }[] = [
    {
      rule: "gpu-node-role-least-privilege",
      mutate: (rs) =>
        (first(rs, "aws:iam/rolePolicyAttachment:RolePolicyAttachment").props.policyArn = "arn:aws:iam::123456789012:policy/AmazonEKSWorkerNodePolicy"),
    },
    {
      rule: "triton-explicit-model-control",
      mutate: (rs) => {
        const c = tritonContainer(rs);
        c.args = c.args
          .filter((a: string) => !a.startsWith("--load-model="))
          .map((a: string) => (a.startsWith("--model-control-mode=") ? "--model-control-mode=poll" : a));
      },
    },
    ...["aws-keys-never-reach-containers", "firewall-triton-ports-only-from-stack-groups", "gateway-envoy-admin-no-service", "triton-metrics-enabled"].map(
      (rule) => ({ rule, mutate: MUTATIONS.find((m) => m.rule === rule)!.mutate }),
    ),
  ];
  const VARIANT_NAMES = [
    "Triton with --model-control-mode=none (no load API), and Session Manager's policy on the GPU node role",
    "the Prometheus peer of Triton's metrics policy written with matchExpressions (In one value)",
  ];

  it("exits 1 naming exactly the broken rules, and 0 for the variants together", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pack-properties-"));
    const variants = await baseline("prod");
    for (const v of VARIANTS.filter((x) => VARIANT_NAMES.includes(x.accepts))) v.mutate(variants);
    const broken = await baseline("prod");
    for (const b of BREAKS) b.mutate(broken);
    fs.writeFileSync(path.join(dir, "variants.json"), JSON.stringify(variants));
    fs.writeFileSync(path.join(dir, "broken.json"), JSON.stringify(broken));
    const [ok, bad] = await Promise.all([runPolicy(path.join(dir, "variants.json")), runPolicy(path.join(dir, "broken.json"))]);
    const vs = (r: { stdout: string }): Violation[] => (r.stdout ? JSON.parse(r.stdout).stacks[0].violations : []);
    assert.equal(
      ok.status,
      0,
      `variants: ${vs(ok)
        .map((v) => `${v.policy}: ${v.message}`)
        .join("; ")} ${ok.stderr}`,
    );
    assert.equal(bad.status, 1, bad.stderr);
    assert.deepEqual([...new Set(vs(bad).map((v) => v.policy))].sort(), BREAKS.map((b) => b.rule).sort());
    assert.ok(
      vs(bad).every((v) => v.level === "mandatory"),
      "prod levels: every break is mandatory",
    );
  });
});
