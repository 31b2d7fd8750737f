// Stack configs for tests, built in code and owned by the tests: a dev-, staging- or
// prod-shaped stack (the raw config map Pulumi hands the program, and its secret keys),
// with overrides. The repository's Pulumi.<stack>.yaml files are examples that users edit;
// tests never read them (only test/stack-files.test.ts checks them, by invariants). The
// shapes below are the example stacks' content at the time the tests were written, so the
// tests' assertions keep their meaning whatever a user puts in the stack files.
import * as yaml from "js-yaml";
import { readProjectName, stackConfigOf, ROOT, type Levels, type StackConfig } from "../../tools/planner";

/** The shapes a fixture stack can take: the three environments the config knows. */
export const SHAPES = ["dev", "staging", "prod"] as const;
export type Shape = (typeof SHAPES)[number];

/** `s` as a shape, or an error naming the shapes (the helpers take a shape as a string, as test loops hold it). */
export function asShape(s: string): Shape {
  if (!(SHAPES as readonly string[]).includes(s)) throw new Error(`no fixture shape ${JSON.stringify(s)} (shapes: ${SHAPES.join(", ")})`);
  return s as Shape;
}

/** A stack file's `config:` mapping: `namespace:key` → structured value (`{ secure: … }` for a secret). */
export type StackValues = Record<string, unknown>;

/** A fixture stack: what the planner plans (name, raw config, secret keys), its values and its levels. */
export interface FixtureStack extends StackConfig {
  shape: Shape;
  values: StackValues;
  levels: Levels;
  secureFingerprints: Record<string, string>;
}

/**
 * Overrides of a fixture: section → value (a key without a namespace is a `triton-platform:`
 * section; `undefined` removes it), or a function that edits the sections in place (same keys).
 */
export type Overrides = Record<string, unknown> | ((sections: Record<string, any>) => void);

const NS = "triton-platform";

const VALUES: Record<Shape, StackValues> = {
  dev: {
    "aws:region": "us-west-2",
    "triton-platform:environment": "dev",
    "triton-platform:cluster": {
      name: "ml-dev",
      zones: ["us-west-2a"],
    },
    "triton-platform:tags": {
      team: "ml-platform",
      "cost-center": "ml-dev",
    },
    "triton-platform:triton": {
      namespace: "triton",
      groups: [
        {
          name: "vision",
          models: ["resnet50"],
          image: {
            tag: "25.01-py3",
          },
          replicas: 1,
          gpu: {
            type: "nvidia-t4",
            count: 1,
          },
          cpu: "2",
          memory: "8Gi",
          shmSize: "1Gi",
          modelLoadBudgetSeconds: 300,
          hpa: {
            min: 1,
            max: 1,
          },
        },
      ],
    },
    "triton-platform:gpu": {
      amiType: "AL2023_x86_64_NVIDIA",
      instanceTypes: ["g4dn.xlarge"],
      scaling: {
        min: 1,
        desired: 1,
        max: 1,
      },
      rootVolumeGiB: 100,
      maxUnavailable: 1,
      operator: {
        version: "v26.7.0",
      },
    },
    "triton-platform:modelRepository": {
      backend: "s3",
      modelPrefix: "models",
      s3: {
        bucketPrefix: "triton-models-dev-",
        noncurrentVersionDays: 7,
      },
    },
    "triton-platform:monitoring": {
      kubePrometheusStackVersion: "88.1.5",
      prometheusAdapterVersion: "5.2.0",
      scrapeInterval: "60s",
      retention: "3d",
      storageSize: "20Gi",
      prometheusResources: {
        cpu: "250m",
        memory: "1Gi",
      },
      alerting: {
        enabled: false,
      },
      thresholds: {
        queueTimeBudgetMs: 200,
        p99SloMs: 2000,
      },
    },
    "triton-platform:gateway": {
      defaultGroup: "vision",
      clientNamespaces: ["ml-apps"],
      replicas: 1,
      cpu: "250m",
      memory: "128Mi",
    },
  },
  staging: {
    "aws:region": "us-east-1",
    "triton-platform:environment": "staging",
    "triton-platform:cluster": {
      name: "ml-staging",
      zones: ["us-east-1a", "us-east-1b"],
    },
    "triton-platform:tags": {
      team: "ml-platform",
      "cost-center": "ml-staging",
    },
    "triton-platform:triton": {
      namespace: "triton",
      groups: [
        {
          name: "vision",
          models: ["resnet50", "efficientnet_b0"],
          image: {
            tag: "25.01-py3",
          },
          replicas: 2,
          gpu: {
            type: "nvidia-l4",
            count: 1,
          },
          cpu: "3",
          memory: "12Gi",
          shmSize: "2Gi",
          modelLoadBudgetSeconds: 600,
          hpa: {
            min: 2,
            max: 4,
            targetQueueUs: 10000,
          },
          canary: {
            image: {
              tag: "25.02-py3",
            },
            replicas: 1,
          },
        },
      ],
    },
    "triton-platform:gpu": {
      amiType: "AL2023_x86_64_NVIDIA",
      instanceTypes: ["g6.xlarge"],
      scaling: {
        min: 2,
        desired: 2,
        max: 5,
      },
      rootVolumeGiB: 200,
      maxUnavailable: 1,
      operator: {
        version: "v26.7.0",
      },
    },
    "triton-platform:modelRepository": {
      backend: "efs",
      modelPrefix: "models",
      efs: {
        subnetIds: ["subnet-0a00000000000000a", "subnet-0b00000000000000b"],
        throughputMode: "elastic",
      },
    },
    "triton-platform:monitoring": {
      kubePrometheusStackVersion: "88.1.5",
      prometheusAdapterVersion: "5.2.0",
      scrapeInterval: "30s",
      retention: "7d",
      storageSize: "50Gi",
      prometheusResources: {
        cpu: "500m",
        memory: "4Gi",
      },
      alerting: {
        enabled: true,
        replicas: 1,
        // Receivers: secure: values the planner replaces by its placeholder (stackfile.ts).
        slack: {
          apiUrl: { secure: "v1:fixture-staging-slack-url" },
          channel: "#ml-staging-alerts",
        },
        webhook: {
          url: "https://alerts.example.com/triton/staging",
          bearerToken: { secure: "v1:fixture-staging-webhook-token" },
        },
        heartbeat: {
          url: "https://heartbeat.example.com/ping/ml-staging",
        },
      },
      thresholds: {
        queueTimeBudgetMs: 100,
        p99SloMs: 1000,
      },
    },
    "triton-platform:gateway": {
      defaultGroup: "vision",
      mirrorPercent: 10,
      clientCidrs: ["10.20.0.0/16"],
      clientNamespaces: ["ml-apps"],
      replicas: 2,
      cpu: "1",
      memory: "256Mi",
    },
  },
  prod: {
    "aws:region": "us-east-1",
    "triton-platform:environment": "prod",
    "triton-platform:cluster": {
      name: "ml-prod",
      zones: ["us-east-1a", "us-east-1b", "us-east-1c"],
    },
    "triton-platform:tags": {
      team: "ml-platform",
      "cost-center": "ml-prod",
      "data-classification": "internal",
    },
    "triton-platform:triton": {
      namespace: "triton",
      groups: [
        {
          name: "vision",
          models: ["resnet50", "efficientnet_b0"],
          image: {
            tag: "25.01-py3",
          },
          replicas: 3,
          gpu: {
            type: "nvidia-l4",
            count: 1,
          },
          cpu: "6",
          memory: "24Gi",
          shmSize: "4Gi",
          modelLoadBudgetSeconds: 900,
          preStopSleepSeconds: 10,
          hpa: {
            min: 3,
            max: 9,
            targetQueueUs: 10000,
          },
          extraArgs: ["--metrics-config=summary_quantiles=0.5:0.05,0.9:0.01,0.99:0.001"],
          canary: {
            image: {
              tag: "25.02-py3",
            },
            replicas: 1,
          },
        },
      ],
    },
    "triton-platform:gpu": {
      amiType: "AL2023_x86_64_NVIDIA",
      instanceTypes: ["g6.4xlarge"],
      scaling: {
        min: 3,
        desired: 3,
        max: 10,
      },
      rootVolumeGiB: 300,
      maxUnavailable: 1,
      operator: {
        version: "v26.7.0",
      },
    },
    "triton-platform:autoscaler": {
      replicas: 2,
    },
    "triton-platform:modelRepository": {
      backend: "s3",
      modelPrefix: "models",
      s3: {
        bucketPrefix: "triton-models-prod-",
        noncurrentVersionDays: 90,
        publisher: {
          enabled: true,
          trustedPrincipalArns: ["arn:aws:iam::123456789012:role/ml-model-publisher-ci"],
        },
        // Prod must state its disaster recovery (s3-model-bucket-disaster-recovery); republish keeps the
        // fixture's resources as they were (a replica is planned by test/model-repository-disaster-recovery.test.ts).
        disasterRecovery: { strategy: "republish", recoveryTimeHours: 6 },
      },
    },
    "triton-platform:monitoring": {
      kubePrometheusStackVersion: "88.1.5",
      prometheusAdapterVersion: "5.2.0",
      scrapeInterval: "15s",
      retention: "30d",
      storageSize: "200Gi",
      prometheusReplicas: 2,
      prometheusResources: {
        cpu: "2",
        memory: "16Gi",
      },
      alerting: {
        enabled: true,
        replicas: 3,
        pagerduty: {
          routingKey: { secure: "v1:fixture-prod-pagerduty-key" },
        },
        slack: {
          apiUrl: { secure: "v1:fixture-prod-slack-url" },
          channel: "#ml-prod-alerts",
        },
        heartbeat: {
          url: "https://heartbeat.example.com/ping/ml-prod",
          bearerToken: { secure: "v1:fixture-prod-heartbeat-token" },
        },
      },
      adapterReplicas: 2,
      thresholds: {
        queueTimeBudgetMs: 50,
        failureRatio: 0.01,
        p99SloMs: 500,
        canaryFailureRatioMargin: 0.01,
        gpuTempCelsius: 85,
        gpuUtilPercent: 95,
        gpuMemoryGrowthMiBPerHour: 256,
      },
    },
    "triton-platform:gateway": {
      defaultGroup: "vision",
      mirrorPercent: 5,
      clientCidrs: ["10.10.0.0/16", "10.11.0.0/16", "fd12:3456:789a::/48"],
      clientNamespaces: ["ml-apps"],
      replicas: 3,
      zoneSpread: "required",
      cpu: "2",
      memory: "512Mi",
      inferTimeoutSeconds: 120,
      maxRequestsPerPod: 64,
    },
  },
};

/** The enforcement levels of each shape (the --policy-pack-config format). */
const LEVELS: Record<Shape, Levels> = {
  dev: { all: "advisory", "autoscaler-present-for-scaling-node-groups": "advisory", "gateway-canary-traffic-within-max": { maxPercent: 100 } },
  staging: {
    all: "mandatory",
    "gateway-mirror-percent-within-max": { maxPercent: 50 },
    "gateway-canary-traffic-within-max": { maxPercent: 50 },
    "gateway-canary-mirrored": "advisory",
    "s3-access-logging": "advisory",
    "image-pull-always-with-tag": "advisory",
    "triton-min-replicas": { environments: ["staging"], minReplicas: 2 },
    "gpu-nodes-span-zones": { environments: ["staging"], minZones: 2 },
    "autoscaler-present-for-scaling-node-groups": "mandatory",
  },
  prod: {
    all: "mandatory",
    "gateway-mirror-percent-within-max": { maxPercent: 25 },
    "s3-access-logging": "advisory",
    "image-pull-always-with-tag": "advisory",
    "triton-min-replicas": { environments: ["prod"], minReplicas: 3 },
    "gpu-nodes-span-zones": { environments: ["prod"], minZones: 3 },
    "autoscaler-present-for-scaling-node-groups": "mandatory",
  },
};

const shortKey = (key: string) => (key.startsWith(`${NS}:`) ? key.slice(NS.length + 1) : key);
const fullKey = (key: string) => (key.includes(":") ? key : `${NS}:${key}`);

/** A fresh copy of a shape's stack values with `overrides` applied. */
export function fixtureValues(shape: string, overrides: Overrides = {}): StackValues {
  const sections: Record<string, any> = {};
  for (const [k, v] of Object.entries(structuredClone(VALUES[asShape(shape)]))) sections[shortKey(k)] = v;
  if (typeof overrides === "function") overrides(sections);
  else for (const [k, v] of Object.entries(overrides)) sections[shortKey(fullKey(k))] = structuredClone(v);
  const out: StackValues = {};
  for (const [k, v] of Object.entries(sections)) if (v !== undefined) out[fullKey(k)] = v;
  return out;
}

/** A shape's enforcement levels (a fresh copy). */
export function fixtureLevels(shape: string): Levels {
  return structuredClone(LEVELS[asShape(shape)]);
}

let projectName: string | undefined;

/** A fixture stack of `shape` with `overrides`, named `name` (default: the shape's name). */
export function fixtureStack(shape: string, overrides: Overrides = {}, name: string = shape): FixtureStack {
  const project = (projectName ??= readProjectName(ROOT));
  const values = fixtureValues(shape, overrides);
  return { ...stackConfigOf(project, name, values), shape: asShape(shape), values, levels: fixtureLevels(shape) };
}

/** A fixture's raw config (`namespace:key` → string), what a config test hands loadConfig. */
export function fixtureConfig(shape: string, overrides: Overrides = {}): Record<string, string> {
  return fixtureStack(shape, overrides).config;
}

/** A stack file's text (Pulumi.<stack>.yaml) for a fixture, for tests that run the CLI on a project copy. */
export function fixtureYaml(shape: string, overrides: Overrides = {}): string {
  return `# ${shape}-shaped test fixture (test/support/stacks.ts)\n` + yaml.dump({ config: fixtureValues(shape, overrides) }, { lineWidth: -1, noRefs: true });
}
