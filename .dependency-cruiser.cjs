// The map of imports (dependency-cruiser, run by test/import-map.test.ts): data flows one way,
// stack file → config → components → resources → plan and policies, and no folder is a knot.
// Type-only imports count (tsPreCompilationDeps): a type is knowledge of another module too, and
// a cycle through types still means neither side can be read, moved or changed alone.

module.exports = {
  forbidden: [
    {
      name: "no-cycle",
      comment: "No import cycle anywhere (policies/rules and tools/planner had theirs removed; tools/planner/resource.ts holds the recorded type).",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "lib-imports-nothing-of-the-project",
      comment: "lib/ is shared by config, components and policies: it knows none of them.",
      severity: "error",
      from: { path: "^lib/" },
      to: { path: "^(index\\.ts|config|components|policies|tools)/?" },
    },
    {
      name: "components-never-import-config-tools-or-policies",
      comment: "Components take typed args; the policy pack imports components, never the other way.",
      severity: "error",
      from: { path: "^components/" },
      to: { path: "^(index\\.ts|config|tools|policies)/?" },
    },
    {
      name: "upstream-knows-no-platform",
      comment: "components/upstream/ states upstream facts: it imports only other upstream modules and lib/.",
      severity: "error",
      from: { path: "^components/upstream/" },
      to: { path: "^components/", pathNot: "^components/upstream/" },
    },
    {
      name: "naming-knows-no-component",
      comment: "components/naming.ts is the platform's own conventions: no component's schema or code.",
      severity: "error",
      from: { path: "^components/naming\\.ts$" },
      to: { path: "^components/[^/]+/" },
    },
    {
      name: "config-never-imports-tools",
      severity: "error",
      from: { path: "^config/" },
      to: { path: "^tools/" },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)node_modules/|^out/|^bin/" },
  },
};
