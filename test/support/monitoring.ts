// References a direct caller of the Monitoring component passes beside its settings, for tests
// that build the component's data without a stack file.
import type { ServingGroupAlertRef } from "../../components/contracts";

/** A serving group as the alerts see it: its start-up budget and each track's listed models. */
export function alertGroup(name: string, canary: boolean, opts: { models?: string[]; modelLoadBudgetSeconds?: number } = {}): ServingGroupAlertRef {
  const models = opts.models ?? ["resnet"];
  return {
    name,
    canary,
    modelLoadBudgetSeconds: opts.modelLoadBudgetSeconds ?? 600,
    tracks: [{ track: "primary", models }, ...(canary ? [{ track: "canary" as const, models }] : [])],
  };
}

/** Every reference of MonitoringArgs, with plausible values (one group with a canary, three zones). */
export const MONITORING_REFS = {
  labels: {},
  servingNamespace: "triton",
  servingGroups: [alertGroup("vision", true)],
  storageClassName: "ebs-gp3-encrypted",
  gpuOperatorVersion: "v25.10.1",
  gpuOperatorNamespace: "gpu-operator",
  zoneCount: 3,
};
