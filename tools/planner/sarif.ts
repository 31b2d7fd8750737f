// SARIF 2.1.0 for GitHub code scanning (`npm run plan -- --sarif FILE`): one run, the pack's
// rules as the tool's rules, each violation a result. A violation whose rule names the stack
// setting it is fixed in (the rule's `configKeyFor`: the planner holds no map of the project's
// rules or settings) is located at that key in Pulumi.<stack>.yaml (its line
// and column, read with the `yaml` package's source positions; the deepest key that exists
// when the key itself is unset, since that is where it would be set); any other at the stack
// file's `config:` line, where the stack as a whole is configured.
// Spec: https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html; GitHub's subset:
// https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning
// (results need a location; `partialFingerprints` keep an alert across runs). Validated in
// test/plan-machine-output.test.ts against the OASIS schema (test/schemas/).
import * as fs from "node:fs";
import * as path from "node:path";
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from "yaml";
import type { Rule } from "../../policies/rules/rule";
import type { RecordedResource } from "./record";
import type { StackReport } from "./report";
import type { Violation } from "./policy";

export const SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/** A position in a text file (1-based, as SARIF counts). */
export interface Position {
  line: number;
  column: number;
}

/** `triton.groups[name=vision].image.tag` as steps: keys, and list items by identity. */
function steps(key: string): ({ key: string } | { id: string; value: string })[] {
  const out: ({ key: string } | { id: string; value: string })[] = [];
  const re = /\.?([A-Za-z0-9_:-]+)|\[([A-Za-z]+)=([^\]]+)\]/y;
  let m: RegExpExecArray | null;
  while (re.lastIndex < key.length && (m = re.exec(key))) out.push(m[1] !== undefined ? { key: m[1] } : { id: m[2], value: m[3] });
  return out;
}

/**
 * Where a config key is in a stack file's text: the position of the deepest key of the path
 * that exists (the key itself when set), and how much of the path was found.
 */
export function locateConfigKey(text: string, key: string, projectName: string): { position: Position; found: string; exact: boolean } | undefined {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, keepSourceTokens: false });
  const config = doc.get("config", true) as Node | undefined;
  if (!isMap(config)) return undefined;
  const pos = (offset: number): Position => {
    const p = lc.linePos(offset);
    return { line: p.line, column: p.col };
  };
  const configPair = (doc.contents as any)?.items?.find((p: any) => isScalar(p.key) && p.key.value === "config");
  let best: { position: Position; found: string } = { position: pos(configPair?.key?.range?.[0] ?? 0), found: "config" };
  const path = steps(key);
  if (path.length === 0) return { ...best, exact: false };
  const first = path[0] as { key: string };
  let node: Node | undefined;
  const topKeys = [key.includes(":") ? first.key : `${projectName}:${first.key}`, first.key];
  for (const k of topKeys) {
    const pair = config.items.find((p) => isScalar(p.key) && p.key.value === k);
    if (pair) {
      node = pair.value as Node;
      best = { position: pos((pair.key as Node).range![0]), found: first.key };
      break;
    }
  }
  if (!node) return { ...best, exact: false };
  let done = 1;
  for (const s of path.slice(1)) {
    if ("key" in s && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === s.key);
      if (!pair) break;
      best = { position: pos((pair.key as Node).range![0]), found: `${best.found}.${s.key}` };
      node = pair.value as Node;
    } else if ("id" in s && isSeq(node)) {
      const item = node.items.find((i) => isMap(i) && String(i.get(s.id)) === s.value) as Node | undefined;
      if (!item) break;
      best = { position: pos(item.range![0]), found: `${best.found}[${s.id}=${s.value}]` };
      node = item;
    } else break;
    done++;
  }
  return { ...best, exact: done === path.length };
}

/** The config key a violation is about: its rule's, resolved from the offending resource and its ancestors (nearest first). */
export function violationConfigKey(v: Violation, resources: readonly RecordedResource[], rule: Pick<Rule, "configKeyFor"> | undefined): string | undefined {
  if (!rule) return undefined;
  const byUrn = new Map(resources.map((r) => [r.urn, r]));
  const ancestry: RecordedResource[] = [];
  for (let r = byUrn.get(v.urn); r && !ancestry.includes(r); r = r.parent ? byUrn.get(r.parent) : undefined) ancestry.push(r);
  return rule.configKeyFor(ancestry);
}

const sarifLevel = (level: string) => (level === "mandatory" ? "error" : "warning");

export interface SarifStack {
  report: StackReport;
  resources: readonly RecordedResource[];
  /** The stack file, relative to the repository root (the SARIF uri), and its text. */
  stackFile?: { uri: string; text: string };
}

/** The SARIF log of planned stacks. */
export function sarifLog(stacks: readonly SarifStack[], rules: readonly Rule[], opts: { projectName: string; version?: string }) {
  const ruleIndex = new Map(rules.map((r, i) => [r.name, i]));
  const byName = new Map(rules.map((r) => [r.name, r]));
  const results = stacks.flatMap(({ report, resources, stackFile }) =>
    report.violations.map((v) => {
      const key = violationConfigKey(v, resources, byName.get(v.policy));
      const at = stackFile && key ? locateConfigKey(stackFile.text, key, opts.projectName) : undefined;
      const fallback = stackFile ? locateConfigKey(stackFile.text, "", opts.projectName) : undefined;
      const position = at?.position ?? fallback?.position ?? { line: 1, column: 1 };
      const where = key ? (at?.exact ? ` (stack setting ${key})` : ` (stack setting ${key}, unset: its default applies)`) : "";
      return {
        ruleId: v.policy,
        ...(ruleIndex.has(v.policy) ? { ruleIndex: ruleIndex.get(v.policy)! } : {}),
        level: sarifLevel(v.level),
        message: { text: `stack ${report.stack}: ${v.resource}${v.path ? ` at ${v.path}` : ""}: ${v.message}${where}` },
        locations: [
          {
            physicalLocation: {
              artifactLocation: { uri: stackFile?.uri ?? `Pulumi.${report.stack}.yaml`, uriBaseId: "%SRCROOT%" },
              region: { startLine: position.line, startColumn: position.column },
            },
            ...(v.urn ? { logicalLocations: [{ fullyQualifiedName: v.urn, kind: "resource" }] } : {}),
          },
        ],
        // Stable across runs (no line numbers): the same violation stays the same alert.
        partialFingerprints: { "planViolation/v1": [report.stack, v.policy, v.urn, v.path ?? ""].join("|") },
        properties: { stack: report.stack, enforcementLevel: v.level, ...(key ? { configKey: key } : {}) },
      };
    }),
  );
  return {
    $schema: SARIF_SCHEMA,
    version: "2.1.0" as const,
    runs: [
      {
        tool: {
          driver: {
            name: "triton-platform-plan",
            ...(opts.version ? { version: opts.version } : {}),
            rules: rules.map((r) => ({
              id: r.name,
              shortDescription: { text: r.description },
              fullDescription: { text: `${r.description} Prevents: ${r.prevents}` },
              help: { text: r.remediationSteps },
              properties: { domain: r.domain },
            })),
          },
        },
        originalUriBaseIds: { "%SRCROOT%": { description: { text: "The repository root (where Pulumi.<stack>.yaml files are)." } } },
        results,
        invocations: [{ executionSuccessful: stacks.every((s) => !s.report.error), toolExecutionNotifications: errorsOf(stacks) }],
      },
    ],
  };
}

function errorsOf(stacks: readonly SarifStack[]) {
  return stacks.filter((s) => s.report.error).map((s) => ({ level: "error" as const, message: { text: `stack ${s.report.stack}: ${s.report.error}` } }));
}

/** The stack file of a stack in `root`, as a SARIF location wants it (its path relative to `repoRoot`). */
export function stackFileOf(root: string, stack: string, repoRoot: string = root): { uri: string; text: string } | undefined {
  const file = ["yaml", "yml"].map((e) => path.join(root, `Pulumi.${stack}.${e}`)).find((f) => fs.existsSync(f));
  if (!file) return undefined;
  return { uri: path.relative(repoRoot, file).split(path.sep).join("/"), text: fs.readFileSync(file, "utf8") };
}
