// Triton's client-facing API surface as the gateway needs it: which HTTP paths and gRPC
// methods are inference, metadata or health (allowed through), and which are control APIs
// (answered by the gateway). Read from the sources, same at r25.01 and r25.07 (read 2026-12-01):
//   triton-inference-server/server src/http_server.cc, HTTPAPIServer::Handle and the regexes
//     server_regex_       /v2(?:/health/(live|ready))?
//     model_regex_        /v2/models/([^/]+)(?:/versions/([0-9]+))?(?:/(infer|generate|generate_stream|ready|config|stats|trace/setting))?
//     modelcontrol_regex_ /v2/repository(?:/([^/]+))?/(index|models/([^/]+)/(load|unload))
//     systemsharedmemory_regex_, cudasharedmemory_regex_, trace_regex_ /v2/trace/setting,
//     and the exact paths /v2/models/stats and /v2/logging (matched before the model regex).
//   HandleInfer refuses any method but POST (405); HandleModelReady/HandleModelMetadata any but GET.
//   triton-inference-server/common protobuf/grpc_service.proto, service inference.GRPCInferenceService.

/** The gRPC service every Triton method is under (`/<service>/<method>` as the HTTP/2 :path). */
export const TRITON_GRPC_SERVICE = "inference.GRPCInferenceService";

/** gRPC methods clients may call through the gateway: inference, metadata and readiness. */
export const TRITON_GRPC_ALLOWED = {
  inference: ["ModelInfer"],
  /** Bidirectional stream: no overall timeout, never mirrored. */
  stream: ["ModelStreamInfer"],
  read: ["ServerLive", "ServerReady", "ModelReady", "ServerMetadata", "ModelMetadata"],
} as const;

/** Every other method of the service (grpc_service.proto at r25.01): control, statistics, trace, logging, shared memory. */
export const TRITON_GRPC_CONTROL = [
  "ModelConfig",
  "ModelStatistics",
  "RepositoryIndex",
  "RepositoryModelLoad",
  "RepositoryModelUnload",
  "SystemSharedMemoryStatus",
  "SystemSharedMemoryRegister",
  "SystemSharedMemoryUnregister",
  "CudaSharedMemoryStatus",
  "CudaSharedMemoryRegister",
  "CudaSharedMemoryUnregister",
  "TraceSetting",
  "LogSettings",
] as const;

export function grpcPath(method: string): string {
  return `/${TRITON_GRPC_SERVICE}/${method}`;
}

/** Server-level GETs: server metadata and health. */
export const TRITON_HTTP_SERVER_READS = ["/v2", "/v2/health/live", "/v2/health/ready"] as const;
export const TRITON_READY_PATH = "/v2/health/ready";

/** Path prefixes (segment-bounded) of Triton's control APIs: the gateway answers them 403. */
export const TRITON_HTTP_CONTROL_PREFIXES = ["/v2/repository", "/v2/logging", "/v2/trace", "/v2/systemsharedmemory", "/v2/cudasharedmemory"] as const;
/** Exact path of the all-models statistics (matched by Triton before the per-model regex). */
export const TRITON_HTTP_STATS = "/v2/models/stats";
/**
 * The last segments of the per-model paths that are not inference, metadata or readiness
 * (`/v2/models/<m>[/versions/<v>]/<kind>`): a versioned GET route excludes them by suffix.
 */
export const TRITON_HTTP_MODEL_CONTROL_SUFFIXES = ["/config", "/stats", "/setting"] as const;

export const modelPath = (model: string) => `/v2/models/${model}`;
