// ESLint flat config. `npm run lint` runs it beside `prettier --check`: Prettier owns the
// layout, and no rule enabled here is a formatting rule, so the two never disagree.
// @ts-check
import js from "@eslint/js";
import pulumi from "@pulumi/eslint-plugin";
import { defineConfig, globalIgnores } from "eslint/config";
import globals from "globals";
import tseslint from "typescript-eslint";

export default defineConfig(
  globalIgnores(["node_modules/", "policies/node_modules/", "out/", "bin/"]),
  // A disable comment that no longer silences anything is an error: every one left is needed.
  { linterOptions: { reportUnusedDisableDirectives: "error" } },
  {
    // Type-aware: a floating promise, a promise passed where a callback is expected, or an
    // Output in a plain template string is a bug only the types show. One program for every
    // file (the root tsconfig includes them all, policies/ too): a second one per folder
    // would double the lint time.
    files: ["**/*.ts"],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { project: "./tsconfig.json", tsconfigRootDir: import.meta.dirname } },
    plugins: { "@pulumi": pulumi },
    rules: {
      // `${output}` renders "Calling [toString] on an [Output<T>] is not supported" into the
      // resource instead of the value: pulumi.interpolate or .apply.
      "@pulumi/no-output-in-template-literal": "error",
      "@pulumi/no-output-instance-in-template-literal": "error",
      // The tsc convention (noUnusedParameters): a leading underscore marks an unused name on purpose;
      // `const { a, ...rest } = x` is how a key is left out of a copy.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true }],
    },
  },
  {
    // Code whose input is untyped by nature: the engine's property bags (@pulumi/policy's
    // `props` is Record<string, any>, the planner's recorded inputs), parsed YAML/JSON and
    // Envoy bootstraps in tests and in the upstream parsers. `any` there is the data's type,
    // not a shortcut; the program (index.ts, config/, components/, lib/) keeps these rules.
    files: ["test/**/*.ts", "tools/**/*.ts", "policies/**/*.ts", "components/upstream/**/*.ts"],
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-return": "off",
    },
  },
  {
    files: ["**/*.cjs"],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: "commonjs", globals: globals.node },
  },
  {
    files: ["**/*.mjs"],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.node },
  },
);
