// The Envoy gateway: a Deployment of a pinned Envoy with its bootstrap in a ConfigMap, a
// Service exposing only the HTTP (8000) and gRPC (8001) listeners, and a PDB. Routes each
// serving group to its primary and mirrors a fraction of requests to its canary. Settings and
// defaults: ./schema.ts; manifests: ./builders.ts and ./envoy-config.ts; what its pods need
// from the network: ./network.ts (composed by the Firewall).
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { gatewayConfigMap, gatewayDeployment, gatewayPodDisruptionBudget, gatewayService } from "./builders";
import { resolveEnvoyGatewayArgs, type EnvoyGatewayArgs } from "./schema";

export * from "./builders";
export * from "./envoy-config";
export * from "./network";
export * from "./schema";

export class EnvoyGateway extends pulumi.ComponentResource {
  readonly configMap: k8s.core.v1.ConfigMap;
  readonly deployment: k8s.apps.v1.Deployment;
  readonly service: k8s.core.v1.Service;
  readonly pdb: k8s.policy.v1.PodDisruptionBudget;
  readonly serviceName: pulumi.Output<string>;

  constructor(name: string, args: EnvoyGatewayArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:gateway:EnvoyGateway", name, {}, opts);
    // Defaults and rules once, before anything is created.
    const r = resolveEnvoyGatewayArgs(args, name);
    this.configMap = new k8s.core.v1.ConfigMap(`${name}-config`, gatewayConfigMap(r), { parent: this });
    this.deployment = new k8s.apps.v1.Deployment(name, gatewayDeployment(r), { parent: this, dependsOn: [this.configMap] });
    this.service = new k8s.core.v1.Service(name, gatewayService(r), { parent: this });
    this.pdb = new k8s.policy.v1.PodDisruptionBudget(name, gatewayPodDisruptionBudget(r), { parent: this });
    this.serviceName = this.service.metadata.name;
    this.registerOutputs({ serviceName: this.serviceName });
  }
}
