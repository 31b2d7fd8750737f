// One builder for every Helm release the stack installs (cdk-eks-blueprints' HelmAddOn does
// the same for all its add-ons): the chart's repository and name come from its upstream
// module, the version is exact, and every release states its namespace and values.
import type * as pulumi from "@pulumi/pulumi";
import type { ReleaseArgs } from "@pulumi/kubernetes/helm/v3";
import { EXACT_VERSION } from "../lib/version";
import { SettingsError, show } from "../lib/errors";

/** A chart as its upstream module pins it (components/upstream/*). */
export interface ChartRef {
  /** Chart name in its repository. */
  readonly chart: string;
  /** Helm repository URL. */
  readonly repo: string;
  /** The version the module's value keys were checked against, when it pins one. */
  readonly version?: string;
}

export interface HelmReleaseSpec {
  readonly chart: ChartRef;
  /** Helm release name. @default the chart name */
  readonly name?: string;
  /** Exact chart version. @default chart.version */
  readonly version?: string;
  readonly namespace: pulumi.Input<string>;
  readonly values: pulumi.Input<Record<string, unknown>>;
  /** Roll a failed upgrade back instead of leaving it half-applied. */
  readonly atomic?: boolean;
  /** Seconds Helm waits for the release's resources. */
  readonly timeout?: number;
}

/** Pure: the helm.v3.Release arguments of a chart. Throws when the version is not exact. */
export function helmRelease(spec: HelmReleaseSpec): ReleaseArgs {
  const version = spec.version ?? spec.chart.version;
  // An unpinned chart upgrades itself on the next `pulumi up` (policy *-chart-pinned).
  if (version === undefined || !EXACT_VERSION.test(version)) {
    throw new SettingsError(`invalid Helm release of ${spec.chart.chart}`, [
      { key: "version", rule: "must be an exact chart version such as 1.2.3 (no ranges, no 'latest')", value: { shown: show(version) } },
    ]);
  }
  return {
    name: spec.name ?? spec.chart.chart,
    chart: spec.chart.chart,
    version,
    repositoryOpts: { repo: spec.chart.repo },
    namespace: spec.namespace,
    values: spec.values,
    ...(spec.atomic !== undefined ? { atomic: spec.atomic } : {}),
    ...(spec.timeout !== undefined ? { timeout: spec.timeout } : {}),
  };
}
