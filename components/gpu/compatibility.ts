// Plan-time check that the Triton images the serving groups run can use the NVIDIA driver the
// GPU nodes' image ships. A mismatch otherwise shows up only at run time, as
// "CUDA driver version is insufficient for CUDA runtime version" in every Triton pod.
import { GPU_AMI_TYPES, type GpuAmiTypeName } from "../upstream/eks";
import { TRITON_DRIVER_REQUIREMENTS, type TritonDriverRequirement } from "../upstream/triton-releases";

const RELEASE = /^\d{2}\.\d{2}$/;

/** Releases of the table, oldest first. */
const KNOWN = Object.keys(TRITON_DRIVER_REQUIREMENTS).sort();

/**
 * The Triton release of an image reference, or undefined when it is not a tritonserver image
 * whose tag names a release (custom images built on top of Triton, a digest alone): those are
 * not checked. A tag pinned by digest keeps its release, so the pin keeps the check.
 * "nvcr.io/nvidia/tritonserver:25.01-py3" and "…:25.01-py3@sha256:…" → "25.01".
 */
export function tritonReleaseOf(image: string): string | undefined {
  const m = /^(?:(.+)\/)?tritonserver:(\d{2}\.\d{2})(?:-[A-Za-z0-9_.-]+)?(?:@sha256:[a-f0-9]{64})?$/.exec(image.trim());
  return m ? m[2] : undefined;
}

/**
 * The driver requirement of a release. A release missing from the table but inside its range
 * takes the requirement of the next listed release (requirements only grow), which may be
 * stricter than needed but never lets a mismatch through; outside the range there is no answer.
 */
export function driverRequirement(release: string): { requirement: TritonDriverRequirement; basis: string } | undefined {
  const exact = TRITON_DRIVER_REQUIREMENTS[release];
  if (exact) return { requirement: exact, basis: release };
  if (!RELEASE.test(release) || release < KNOWN[0]) return undefined;
  const next = KNOWN.find((k) => k > release);
  return next ? { requirement: TRITON_DRIVER_REQUIREMENTS[next], basis: next } : undefined;
}

/** True when a node driver branch runs a release: natively, or through forward compatibility. */
export function branchSatisfies(branch: number, req: TritonDriverRequirement): boolean {
  return branch >= req.minDriverBranch || req.forwardCompatibleBranches.includes(branch);
}

/**
 * Check one Triton release against the driver branch an AMI type ships. Returns undefined when
 * compatible, else an error that names both versions.
 */
export function checkTritonDriver(release: string, amiType: GpuAmiTypeName): string | undefined {
  const ami = GPU_AMI_TYPES[amiType];
  const found = driverRequirement(release);
  if (!found) {
    return (
      `Triton release ${release} is not in the driver compatibility table (${KNOWN[0]} to ${KNOWN[KNOWN.length - 1]}), ` +
      `so it cannot be checked against R${ami.driverBranch} of ${amiType}: add its "Driver Requirements" row from NVIDIA's ` +
      `release notes to components/upstream/triton-releases.ts`
    );
  }
  const { requirement: req, basis } = found;
  if (branchSatisfies(ami.driverBranch, req)) return undefined;
  const bounded = basis === release ? "" : ` (bounded by ${basis}, the next release in the table)`;
  return (
    `Triton ${release} (CUDA ${req.cuda}) needs NVIDIA driver R${req.minDriverBranch} or later${bounded}, ` +
    `but ${amiType} nodes ship R${ami.driverBranch}, which is not one of its forward-compatible branches ` +
    `(${req.forwardCompatibleBranches.map((b) => "R" + b).join(", ")})`
  );
}

/**
 * The config-level hook: check every image that names a Triton release. Returns one problem
 * per incompatible image, with the image's index so the caller can name the key.
 */
export function checkTritonImages(images: readonly (string | undefined)[], amiType: GpuAmiTypeName): { index: number; message: string }[] {
  const problems: { index: number; message: string }[] = [];
  images.forEach((image, index) => {
    if (image === undefined) return;
    const release = tritonReleaseOf(image);
    if (release === undefined) return;
    const message = checkTritonDriver(release, amiType);
    if (message) problems.push({ index, message });
  });
  return problems;
}
