// Every component of the platform, once, in dependency order: the order they are built (and
// their resources registered), their settings sections composed (config/schema.ts), their
// network needs handed to the Firewall and their summary lines read. A new component is one
// line here; nothing else outside its folder names it.
import type { ComponentDescriptor } from "./component";
import { clusterComponent } from "./cluster";
import { namespaceComponent } from "./namespace";
import { gpuComponent } from "./gpu";
import { autoscalerComponent } from "./autoscaler";
import { modelRepositoryComponent } from "./model-repository";
import { tritonComponent } from "./triton";
import { storageComponent } from "./storage";
import { monitoringComponent } from "./monitoring";
import { firewallComponent } from "./firewall";
import { gatewayComponent } from "./gateway";

export const REGISTRY: readonly ComponentDescriptor[] = [
  clusterComponent,
  namespaceComponent,
  gpuComponent,
  autoscalerComponent,
  modelRepositoryComponent,
  tritonComponent,
  storageComponent,
  monitoringComponent,
  // Before the gateway: its load balancer needs the security group the Firewall creates.
  firewallComponent,
  gatewayComponent,
];
