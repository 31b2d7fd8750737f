// triton-platform: wiring only. The stack file is validated first (nothing is created on
// bad input), then components are created in dependency order and outputs exported.
import { loadStackConfig } from "./config";
import { Cluster } from "./components/cluster";
import { ServingNamespace } from "./components/namespace";
import { standardLabels } from "./components/naming";
import type { ServingGroupRef } from "./components/contracts";

const config = loadStackConfig();

const cluster = new Cluster("cluster", { config });
const k8sOpts = { provider: cluster.k8s };

// What routing and scraping need to know of each serving group.
const servingGroups: ServingGroupRef[] = config.triton.groups.map((g) => ({ name: g.name, canary: g.canary !== undefined }));

const servingNs = new ServingNamespace("triton", { name: config.triton.namespace, labels: standardLabels(config) }, k8sOpts);

export const environment = config.environment;
export const clusterName = cluster.name;
export const clusterEndpoint = cluster.endpoint;
export const tritonNamespace = servingNs.name;
export const servingGroupNames = servingGroups.map((g) => g.name);
