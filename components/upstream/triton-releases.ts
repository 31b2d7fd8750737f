// NVIDIA driver requirements of Triton Inference Server container releases
// (nvcr.io/nvidia/tritonserver:<yy.mm>-py3), copied from the "Driver Requirements" section
// of NVIDIA's release notes, one page per release:
//   https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-<yy>-<mm>.html
// e.g. rel-25-04: "Release 25.04 is based on CUDA 12.9.0 which requires NVIDIA Driver release
// 575 or later. However, if you are running on a data center GPU (for example, T4 or any other
// data center GPU), you can use NVIDIA driver release 470.57 (or later R470), 525.85 (or later
// R525), 535.86 (or later R535), or 545.23 (or later R545)."
// Only releases whose page states a number are listed (from 26.06 on the pages say "requires
// the NVIDIA Driver release" without one). Add a row when the serving groups move to a release.

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
}

const FC_23 = [450, 470, 510, 525, 535] as const;
const FC_24 = [470, 525, 535, 545] as const;

export const TRITON_DRIVER_REQUIREMENTS: Readonly<Record<string, TritonDriverRequirement>> = {
  "23.05": { cuda: "12.1.1", minDriverBranch: 530, forwardCompatibleBranches: [450, 470, 510, 515, 525, 530] },
  "23.06": { cuda: "12.1.1", minDriverBranch: 530, forwardCompatibleBranches: [450, 470, 510, 515, 525, 530] },
  "23.07": { cuda: "12.1.1", minDriverBranch: 530, forwardCompatibleBranches: [450, 470, 510, 515, 525, 530] },
  "23.08": { cuda: "12.2.1", minDriverBranch: 535, forwardCompatibleBranches: FC_23 },
  "23.09": { cuda: "12.2.1", minDriverBranch: 535, forwardCompatibleBranches: FC_23 },
  "24.01": { cuda: "12.3.2", minDriverBranch: 545, forwardCompatibleBranches: FC_24 },
  "24.03": { cuda: "12.4", minDriverBranch: 545, forwardCompatibleBranches: FC_24 },
  "24.04": { cuda: "12.4", minDriverBranch: 545, forwardCompatibleBranches: FC_24 },
  "24.05": { cuda: "12.4", minDriverBranch: 545, forwardCompatibleBranches: FC_24 },
  "24.07": { cuda: "12.5.1", minDriverBranch: 555, forwardCompatibleBranches: FC_24 },
  "24.08": { cuda: "12.6", minDriverBranch: 560, forwardCompatibleBranches: FC_24 },
  "24.10": { cuda: "12.6.2", minDriverBranch: 560, forwardCompatibleBranches: FC_24 },
  "25.01": { cuda: "12.8.0", minDriverBranch: 560, forwardCompatibleBranches: FC_24 },
  "25.03": { cuda: "12.8.1", minDriverBranch: 560, forwardCompatibleBranches: FC_24 },
  "25.04": { cuda: "12.9.0", minDriverBranch: 575, forwardCompatibleBranches: FC_24 },
  "25.06": { cuda: "12.9.1", minDriverBranch: 575, forwardCompatibleBranches: FC_24 },
  "25.08": { cuda: "13.0.0", minDriverBranch: 575, forwardCompatibleBranches: FC_24 },
  "25.10": { cuda: "13.0.2", minDriverBranch: 575, forwardCompatibleBranches: FC_24 },
  "26.02": { cuda: "13.1.1", minDriverBranch: 575, forwardCompatibleBranches: FC_24 },
};

/** The Triton server image repository; its tags start with the release (`25.01-py3`, `25.01-py3-min`, …). */
export const TRITON_IMAGE_REPOSITORY = "nvcr.io/nvidia/tritonserver";
