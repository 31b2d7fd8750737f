// Which backends the nvcr.io/nvidia/tritonserver:<yy.mm>-py3 image ships, per release, and the
// platforms a model config may name instead of a backend. A contract's backend must be one its
// group's release ships (and its canary's): a backend the image lacks fails the model's load,
// which under explicit model control fails the pod's start-up (the startupProbe never passes).
//
// Sources, per row:
// - tensorrt, onnxruntime, pytorch, python, openvino: the backends the -py3 image ships in every
//   release 25.01-26.08 ("Contents of the Triton Inference Server container" and the Frameworks
//   Support Matrix referenced from each release's notes page,
//   https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-<yy>-<mm>.html);
//   the backends repository's README lists them as the backends "tested and updated with each
//   Triton release" (https://github.com/triton-inference-server/backend, README "Where can I find
//   all the backends that are available for Triton?").
// - tensorflow: deprecated as of 25.03 and no longer generated in Triton's QA models from then
//   (https://github.com/triton-inference-server/server/pull/8068, "As of 25.03 TensorFlow backend
//   is deprecated"; TensorFlow references removed after 25.04: server pull request 8354). The table
//   claims it for 25.01 and 25.02 only: the stricter reading (a contract naming it on a later
//   release is refused rather than crash-looping).
// Not re-read per release page in this change (the pages were not reachable from the search index):
// a row a release notes page contradicts is to be fixed here with that page as its source.
import { TRITON_OPTION_RELEASES } from "./tritonserver";

/** Platforms (ModelConfig.platform) Triton maps to a backend, and the backend each needs. */
export const MODEL_PLATFORM_BACKEND = {
  tensorrt_plan: "tensorrt",
  onnxruntime_onnx: "onnxruntime",
  pytorch_libtorch: "pytorch",
  tensorflow_savedmodel: "tensorflow",
  tensorflow_graphdef: "tensorflow",
  ensemble: undefined,
} as const;
export const MODEL_PLATFORMS = Object.keys(MODEL_PLATFORM_BACKEND) as [keyof typeof MODEL_PLATFORM_BACKEND, ...(keyof typeof MODEL_PLATFORM_BACKEND)[]];

const EVERY_RELEASE = ["tensorrt", "onnxruntime", "pytorch", "python", "openvino"] as const;
const TENSORFLOW_UNTIL = "25.02";

/** Backends the -py3 image of each release ships. */
export const TRITON_BACKENDS_OF_RELEASE: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  TRITON_OPTION_RELEASES.map((r) => [r, [...EVERY_RELEASE, ...(r <= TENSORFLOW_UNTIL ? ["tensorflow"] : [])]]),
);

/** The backend a contract needs: its backend, or the one its platform maps to (none for an ensemble). */
export function backendNeeded(m: { readonly backend?: string; readonly platform?: string }): string | undefined {
  if (m.backend !== undefined) return m.backend;
  return m.platform === undefined ? undefined : MODEL_PLATFORM_BACKEND[m.platform as keyof typeof MODEL_PLATFORM_BACKEND];
}
