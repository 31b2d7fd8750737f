// Contracts between components: the names, labels, ports and shapes one component
// produces and another consumes. Change them here, once; never spell them elsewhere.
import type * as pulumi from "@pulumi/pulumi";

// ---- GPU nodes (components/gpu) -----------------------------------------------------
/** Taint on every GPU node: only pods that tolerate it (Triton, GPU Operator operands) land there. */
export const GPU_TAINT = { key: "nvidia.com/gpu", value: "true", effect: "NoSchedule" } as const;
/** The same taint's effect as the EKS API spells it. */
export const GPU_TAINT_EKS_EFFECT = "NO_SCHEDULE";
/** Toleration for GPU_TAINT. */
export const GPU_TOLERATION = { key: GPU_TAINT.key, operator: "Exists", effect: GPU_TAINT.effect } as const;
/** Node label: the node's role in the platform. */
export const NODE_LABEL_ROLE = "triton-platform/node-role";
export const NODE_ROLE_GPU = "gpu";
/** Node label: the accelerator type (e.g. nvidia-l4, nvidia-a10g); Triton groups select on it. */
export const NODE_LABEL_GPU_TYPE = "triton-platform/gpu-type";

// ---- Triton serving groups (components/triton) -------------------------------------
export const TRITON_PORTS = { http: 8000, grpc: 8001, metrics: 8002 } as const;
export type Track = "primary" | "canary";

/** Name of a group's workload for a track: `<group>` or `<group>-canary`. */
export function tritonName(group: string, track: Track): string {
  return track === "primary" ? group : `${group}-canary`;
}
/** ClusterIP Service (http 8000, grpc 8001) of a group's track. */
export const tritonServiceName = tritonName;
/** Headless Service of a group's StatefulSet. */
export const tritonHeadlessServiceName = (group: string, track: Track) => `${tritonName(group, track)}-headless`;
/** Metrics Service (8002, port name "metrics") of a group's track. */
export const tritonMetricsServiceName = (group: string, track: Track) => `${tritonName(group, track)}-metrics`;
export const TRITON_METRICS_PORT_NAME = "metrics";

/** Pod labels (and Service selectors) of a group's track. */
export function tritonSelector(group: string, track: Track): Record<string, string> {
  return { "app.kubernetes.io/name": "triton", "app.kubernetes.io/instance": group, track };
}
/** Selects every Triton pod of the stack (all groups, both tracks). */
export const TRITON_ALL_PODS = { "app.kubernetes.io/name": "triton" } as const;
/** Label on the metrics Services, which ServiceMonitors select. */
export const TRITON_METRICS_SERVICE_LABEL = { "app.kubernetes.io/component": "metrics" } as const;

/** What the stack knows of a serving group without the serving component: enough to route and scrape. */
export interface ServingGroupRef {
  readonly name: string;
  readonly canary: boolean;
  /** Models the primary loads (explicit model control): the gateway routes them by name. Absent or empty: by the group header only. */
  readonly models?: readonly string[];
  /** Models the canary loads (its own list, else the primary's). */
  readonly canaryModels?: readonly string[];
  /** Share (0–100) of the group's real inference traffic the canary serves, after shadowing (canary.trafficPercent). */
  readonly canaryTrafficPercent?: number;
  /** Most pods of each track (the primary's HPA max, the canary's replicas): the gateway sizes its circuit breakers from them. */
  readonly maxPods?: { readonly primary: number; readonly canary: number };
}

// ---- Model repository (components/model-repository) --------------------------------
/** What the model repository hands to the serving groups. */
export interface ModelRepositoryBinding {
  /** The --model-repository value: s3://bucket/prefix or a mount path. */
  readonly uri: pulumi.Input<string>;
  /** Kubernetes ServiceAccount (IRSA for S3) the Triton pods run as. */
  readonly serviceAccountName: pulumi.Input<string>;
  /** Extra environment for tritonserver (e.g. AWS_DEFAULT_REGION). */
  readonly env: { name: string; value: pulumi.Input<string> }[];
  /** For EFS: the ReadOnlyMany claim to mount read-only at mountPath. */
  readonly volume?: { readonly claimName: pulumi.Input<string>; readonly mountPath: string };
  /** Egress the pods need to reach it: HTTPS 443 (S3) or NFS 2049 (EFS). */
  readonly egressPort: 443 | 2049;
}

// ---- Monitoring (components/monitoring) --------------------------------------------
export const MONITORING_NAMESPACE = "monitoring";
/** Labels of the Prometheus pods that kube-prometheus-stack's operator creates. */
export const PROMETHEUS_POD_LABELS = { "app.kubernetes.io/name": "prometheus" } as const;
/** Per-pod custom metric published by prometheus-adapter, consumed by the HPAs. */
export const HPA_QUEUE_METRIC = "triton_queue_duration_us_per_request";

// ---- Gateway (components/gateway) -------------------------------------------------
/** The Envoy gateway runs in the Triton namespace with these pod labels. */
export const GATEWAY_POD_LABELS = { "app.kubernetes.io/name": "triton-gateway" } as const;
export const GATEWAY_PORTS = { http: 8000, grpc: 8001 } as const;
/** Envoy's Prometheus endpoint on every gateway pod (a listener that serves only this path; the admin port stays on loopback). */
export const GATEWAY_METRICS = { port: 9902, portName: "envoy-metrics" } as const;
/** Request header (HTTP) / metadata key (gRPC) that selects the serving group; without it the stack's default group serves. */
export const GATEWAY_GROUP_HEADER = "x-triton-group";

// ---- GPU nodes, produced by components/gpu (GpuNodeGroup.ref) -----------------------
/** What the GPU node group hands to the components that schedule on or talk to GPU nodes. */
export interface GpuNodesRef {
  /** Dedicated security group of the GPU nodes: EFS (NFS 2049) and the firewall (Triton ports) add ingress rules to it. */
  readonly securityGroupId: pulumi.Input<string>;
  /** IAM role of the GPU nodes. */
  readonly nodeRoleArn: pulumi.Input<string>;
  /** Node labels of the GPU nodes (NODE_LABEL_ROLE, NODE_LABEL_GPU_TYPE): a Triton pod's nodeSelector. */
  readonly nodeSelector: Readonly<Record<string, string>>;
  /** The taint on every GPU node, and the toleration pods need for it. */
  readonly taint: typeof GPU_TAINT;
  readonly toleration: typeof GPU_TOLERATION;
}

// ---- Triton's user (image nvcr.io/nvidia/tritonserver ships user triton-server) -----
/** uid/gid of the tritonserver image's user: pods run as it, and the EFS access point writes as it. */
export const TRITON_UID = 1000;
export const TRITON_GID = 1000;
/** The extended resource the NVIDIA device plugin advertises (requests = limits per container). */
export const GPU_RESOURCE = "nvidia.com/gpu";

// ---- Monitoring ↔ GPU nodes ----------------------------------------------------------
/**
 * The monitoring component scrapes the DCGM exporter itself (job "dcgm-exporter",
 * additionalScrapeConfigs), so the GPU Operator's own ServiceMonitor must stay off
 * (dcgmExporter.serviceMonitor.enabled = !DCGM_SCRAPED_BY_MONITORING): two scrapes would
 * double every GPU series and every GPU alert.
 */
export const DCGM_SCRAPED_BY_MONITORING = true;

// ---- GPU nodes ↔ policies ------------------------------------------------------------
/**
 * Tag on a GPU node group naming the availability zones of its subnets (sorted, space
 * separated). The EKS node group API carries only subnet ids; the zones they are in are
 * what policy gpu-nodes-span-zones checks, so the node group records them where the policy
 * (and a person in the console) can read them.
 */
export const NODE_GROUP_ZONES_TAG = "triton-platform:zones";

// ---- Monitoring ↔ network needs (components/network.ts) ------------------------------
/** The Prometheus pods as a peer of network needs: Triton and the gateway admit their metrics ports to them. */
export const PROMETHEUS_PODS = { name: "prometheus", namespace: MONITORING_NAMESPACE, labels: PROMETHEUS_POD_LABELS } as const;

// ---- Triton control APIs (components/triton restricts them, components/gateway strips the header) ----
/**
 * Request header (HTTP) / metadata key (gRPC) that Triton's restricted APIs demand
 * (`--http-restricted-api=<apis>:<key>=<value>`, `--grpc-restricted-protocol=<protocols>:<key>=<value>`).
 * The gateway removes it from every client request, so only callers inside the cluster that hold the
 * Secret's value can reach the model-repository, logging, trace and shared-memory APIs.
 */
export const TRITON_ADMIN_HEADER = "triton-admin-key";

// ---- Monitoring ↔ Triton serving groups (alerts that know each group's start-up) ----------
/**
 * What the alerts need of a serving group beyond routing: how long its start-up load may take
 * (Triton opens its metrics port only after the start-up models are loaded, so a target is down
 * for that long on every start) and the models each track lists (Triton exports per-model
 * series only for loaded models, so a listed model without them is not loaded).
 */
export interface ServingGroupAlertRef extends ServingGroupRef {
  readonly modelLoadBudgetSeconds: number;
  /** A canary group's current rollout stage: the gates the monitoring rules and `npm run gate` read (components/triton/rollout.ts). */
  readonly canaryStage?: CanaryStageRef;
  readonly tracks: readonly { readonly track: Track; readonly models: readonly string[] }[];
}
/** Annotation on a canary StatefulSet holding its declared rollout (JSON: {stage, stages[]}), which the policy pack reads. */
export const ROLLOUT_ANNOTATION = "triton-platform.io/rollout";
/** A canary's current rollout stage as the gates need it; thresholds left undefined take monitoring.thresholds'. */
export interface CanaryStageRef {
  readonly stage: string;
  /** Position in the declared stages (0-based) and how many there are. */
  readonly index: number;
  readonly count: number;
  /** The stage's minimum duration: the window every gate is read over. */
  readonly windowMinutes: number;
  readonly gates: {
    readonly minRequests: number;
    readonly failureRatioMargin?: number;
    readonly p99SloMs?: number;
    readonly p99VsPrimary: number;
    readonly queueTimeMs?: number;
    readonly gatewayErrorRatio: number;
  };
}
/**
 * Second per-pod custom metric of the HPAs (prometheus-adapter): requests a pod holds that have
 * not completed (nv_inference_pending_request_count). It grows on a wedged pod, whose queue-time
 * metric reads 0 because that only grows when a request succeeds.
 */
export const HPA_PENDING_METRIC = "triton_pending_requests";
/** node-exporter's own namespace (Pod Security privileged), apart from MONITORING_NAMESPACE (baseline). */
export const NODE_EXPORTER_NAMESPACE = "monitoring-node-exporter";
/**
 * The gRPC metadata key Triton matches for TRITON_ADMIN_HEADER: tritonserver prefixes every
 * `--grpc-restricted-protocol` key with `triton-grpc-protocol-` (server src/grpc/grpc_server.h
 * kRestrictedProtocolHeaderTemplate, r25.01 to r26.08), so an admin gRPC call sends this key.
 * The gateway strips it from client requests beside TRITON_ADMIN_HEADER.
 */
export const TRITON_ADMIN_GRPC_METADATA = `triton-grpc-protocol-${TRITON_ADMIN_HEADER}`;

/** The label a Triton target's series carry with their serving group's name (components/monitoring/scrape.ts relabels it). */
export const SERVING_GROUP_LABEL = "serving_group";
/**
 * The alert that a canary fails a gate of its current stage on enough traffic (components/monitoring/rules.ts,
 * labelled with SERVING_GROUP_LABEL): the canary stop (components/gateway/canary-stop.ts) acts on exactly it.
 */
export const CANARY_GATE_FAILED_ALERT = "CanaryGateFailed";
