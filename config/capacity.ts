// The capacity plan lives with the GPU capacity facts (components/gpu/capacity.ts); re-exported
// here for the planner and tools that load it by this path.
export * from "../components/gpu/capacity";
