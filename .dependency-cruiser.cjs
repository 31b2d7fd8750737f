// The map of imports (dependency-cruiser, run by test/import-map.test.ts): data flows one way,
// stack file → config → components → resources → plan and policies, and no folder is a knot.
// Type-only imports count (tsPreCompilationDeps): a type is knowledge of another module too, and
// a cycle through types still means neither side can be read, moved or changed alone.

/** Cycles that exist and are being fixed elsewhere: listed by folder so that a new one anywhere else fails. */
const KNOWN_CYCLES_TO_FIX = ["^tools/planner/"];

module.exports = {
  forbidden: [
    {
      name: "no-cycle",
      comment: "No import cycle (the folders of KNOWN_CYCLES_TO_FIX excepted until they are fixed).",
      severity: "error",
      from: { pathNot: KNOWN_CYCLES_TO_FIX },
      to: { circular: true },
    },
    {
      name: "known-cycles-to-fix",
      comment: "The cycles of KNOWN_CYCLES_TO_FIX: reported, so the test can tell when they are gone.",
      severity: "info",
      from: { path: KNOWN_CYCLES_TO_FIX },
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
