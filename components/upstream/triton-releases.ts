// NVIDIA driver requirements of Triton Inference Server container releases
// (nvcr.io/nvidia/tritonserver:<yy.mm>-py3), copied from the "Driver Requirements" section
// of NVIDIA's release notes, one page per release (each row's `source`):
//   https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-<yy>-<mm>.html
// e.g. rel-25-04: "Release 25.04 is based on CUDA 12.9.0 which requires NVIDIA Driver release
// 575 or later. However, if you are running on a data center GPU (for example, T4 or any other
// data center GPU), you can use NVIDIA driver release 470.57 (or later R470), 525.85 (or later
// R525), 535.86 (or later R535), or 545.23 (or later R545)."
// From 26.05 on the pages say "requires the NVIDIA Driver release. Please see CUDA
// Compatibility" without a number: those rows take the CUDA release's own requirement, CUDA
// 13.x >= 580 (CUDA_13_MINIMUM), and claim no forward-compatible branch. A row whose page states
// no branches claims none either (the check is then stricter, never looser).
// Pages re-read with the `search` tool on 2026-12-01: 23.05-23.08, 24.01, 24.03, 24.04, 24.07,
// 25.01, 25.03, 25.06, 25.08, 25.10, 25.12, 26.02, 26.04-26.08; the other rows were copied
// earlier from the same pages and not re-read. The table must cover every release of
// ../shared/reference/tritonserver-options (test/gpu-compatibility.test.ts checks it).

export interface TritonDriverRequirement {
  /** CUDA version the release is built on. */
  readonly cuda: string;
  /** Driver branch the release needs natively ("requires NVIDIA Driver release N or later"). */
  readonly minDriverBranch: number;
  /**
   * Older branches that still work on data-center GPUs through the CUDA forward-compatibility
   * package in the container. Every NVIDIA GPU EC2 offers (T4, A10G, L4, L40S, A100, H100/H200)
   * is a data-center GPU.
   */
  readonly forwardCompatibleBranches: readonly number[];
  /** Where the row comes from: the release's notes page, and what else it rests on. */
  readonly source: string;
}

const FC_23 = [450, 470, 510, 525, 535] as const;
const FC_24 = [470, 525, 535, 545] as const;
const NOTES = "https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes";
const page = (release: string) => `${NOTES}/rel-${release.replace(".", "-")}.html`;
/**
 * CUDA 13.x applications run on drivers >= 580 (minor version compatibility):
 * https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html, Table 1.
 */
const CUDA_13_MINIMUM = 580;
const CUDA_13_SOURCE = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html (Table 1: CUDA 13.x >= 580)";
const row = (release: string, cuda: string, minDriverBranch: number, forwardCompatibleBranches: readonly number[], note = ""): TritonDriverRequirement => ({
  cuda,
  minDriverBranch,
  forwardCompatibleBranches,
  source: page(release) + note,
});
/** A release whose page names no driver: CUDA 13's own requirement. */
const cuda13 = (release: string, cuda: string): TritonDriverRequirement => ({
  cuda,
  minDriverBranch: CUDA_13_MINIMUM,
  forwardCompatibleBranches: [],
  source: `${page(release)} (CUDA ${cuda}, no driver number) and ${CUDA_13_SOURCE}`,
});

export const TRITON_DRIVER_REQUIREMENTS: Readonly<Record<string, TritonDriverRequirement>> = {
  "23.05": row("23.05", "12.1.1", 530, [450, 470, 510, 515, 525, 530]),
  "23.06": row("23.06", "12.1.1", 530, [450, 470, 510, 515, 525, 530]),
  "23.07": row("23.07", "12.1.1", 530, [450, 470, 510, 515, 525, 530]),
  "23.08": row("23.08", "12.2.1", 535, FC_23),
  "23.09": row("23.09", "12.2.1", 535, FC_23),
  "24.01": row("24.01", "12.3.2", 545, FC_24),
  "24.03": row("24.03", "12.4", 545, FC_24),
  "24.04": row("24.04", "12.4", 545, FC_24),
  "24.05": row("24.05", "12.4", 545, FC_24),
  "24.07": row("24.07", "12.5.1", 555, FC_24),
  "24.08": row("24.08", "12.6", 560, FC_24),
  "24.10": row("24.10", "12.6.2", 560, FC_24),
  "25.01": row("25.01", "12.8.0.038", 560, FC_24),
  // The rel-25-02 page (listed in the notes' index) could not be read here. CUDA 12.8.0.038:
  // server r25.02 docs/introduction/compatibility.md (its -vllm/-trtllm images); the 25.01 and
  // 25.03 pages give CUDA 12.8.x R560 on either side.
  "25.02": row("25.02", "12.8.0.038", 560, [], " (not read) and triton-inference-server/server r25.02 docs/introduction/compatibility.md"),
  "25.03": row("25.03", "12.8.1.012", 560, FC_24),
  "25.04": row("25.04", "12.9.0", 575, FC_24),
  "25.06": row("25.06", "12.9.1.010", 575, FC_24),
  // 25.07 (Triton 2.59.1, a patch of 25.06's 2.59.0) has no notes page (the index goes from 25.08
  // to 25.06). CUDA 12.9: server r25.07 docs/introduction/compatibility.md (its -vllm/-trtllm
  // images: CUDA 12.9.0, driver 575.51.03); the requirement is CUDA 12.9's, R575, as rel-25-06 states it.
  "25.07": row("25.06", "12.9", 575, [], " (25.07 has no page) and triton-inference-server/server r25.07 docs/introduction/compatibility.md"),
  "25.08": row("25.08", "13.0.0.044", 575, FC_24),
  "25.10": row("25.10", "13.0.2.006", 575, FC_24),
  "25.12": row("25.12", "13.1.0.36", 575, FC_24),
  "26.02": row("26.02", "13.1.1", 575, FC_24),
  "26.04": row("26.04", "13.2.1", 575, FC_24),
  "26.05": cuda13("26.05", "13.2.1"),
  "26.06": cuda13("26.06", "13.3.0"),
  "26.07": cuda13("26.07", "13.3.1"),
  "26.08": cuda13("26.08", "13.4.1"),
};

/** The Triton server image repository; its tags start with the release (`25.01-py3`, `25.01-py3-min`, …). */
export const TRITON_IMAGE_REPOSITORY = "nvcr.io/nvidia/tritonserver";
