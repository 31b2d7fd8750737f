// The GPU cost lives with the GPU capacity facts (components/gpu/cost.ts); re-exported here
// for the planner and tools that load it by this path.
export * from "../components/gpu/cost";
