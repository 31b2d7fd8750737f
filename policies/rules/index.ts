// All rules of the pack. A rule lives in the file of the domain it protects
// (policies/rules/<domain>.ts, its `domain` field) and is in that file's `rules` list; a domain
// is an open name: a new domain is a new file, listed here with one line. The pack's entry file,
// the offline planner and the docs script all read this list, so all run the same rules, in
// this order (SARIF numbers the rules by it). test/policy-layout.test.ts fails, naming the
// file, on a rule file missing here.
import type { Rule } from "./rule";

export type { Finding, Rule } from "./rule";

/* eslint-disable @typescript-eslint/no-require-imports -- one self-contained line per domain file; `typeof import` keeps each one typed */
const DOMAINS: readonly (readonly Rule[])[] = [
  (require("./foundation") as typeof import("./foundation")).rules,
  (require("./gpu-nodes") as typeof import("./gpu-nodes")).rules,
  (require("./autoscaler") as typeof import("./autoscaler")).rules,
  (require("./model-repository") as typeof import("./model-repository")).rules,
  (require("./monitoring") as typeof import("./monitoring")).rules,
  (require("./triton") as typeof import("./triton")).rules,
  (require("./models") as typeof import("./models")).rules,
  (require("./firewall") as typeof import("./firewall")).rules,
  (require("./gateway") as typeof import("./gateway")).rules,
  (require("./workloads") as typeof import("./workloads")).rules,
  (require("./exposure") as typeof import("./exposure")).rules,
  (require("./rbac") as typeof import("./rbac")).rules,
  (require("./iam") as typeof import("./iam")).rules,
  (require("./secrets") as typeof import("./secrets")).rules,
];
/* eslint-enable @typescript-eslint/no-require-imports */

export const rules: Rule[] = DOMAINS.flat();
