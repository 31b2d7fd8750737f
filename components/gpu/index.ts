// The GPU components: GpuNodeGroup (EKS managed node group on an NVIDIA AMI type) and
// GpuOperator (the NVIDIA GPU Operator). schema.ts states their settings, builders.ts and
// user-data.ts build plain resource arguments, compatibility.ts checks Triton images against
// the AMI's driver; node-group.ts and operator.ts are the thin classes.
export * from "./schema";
export * from "./builders";
export * from "./user-data";
export * from "./compatibility";
export { GpuNodeGroup } from "./node-group";
export { GpuOperator } from "./operator";
