// SARIF 2.1.0 for GitHub code scanning (`npm run plan -- --sarif FILE`): one run, the pack's
// rules as the tool's rules, each violation a result. A violation whose rule names the stack
// setting it is fixed in (the rule's `configKeyFor`: the planner holds no map of the project's
// rules or settings) is located at that key in Pulumi.<stack>.yaml (its line
// and column, read with the `yaml` package's source positions; the deepest key that exists
// when the key itself is unset, since that is where it would be set); any other at the stack
// file's `config:` line, where the stack as a whole is configured.
// A stack whose configuration is invalid (exit 2) gives one result per problem of its error,
// located at the key the problem names (STACK_CONFIG_RULE).
// Spec: https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html; GitHub's subset:
// https://docs.github.com/en/code-security/reference/code-scanning/sarif-files/sarif-support-for-code-scanning
// (what code scanning reads: rule name ≤ 255 characters, descriptions ≤ 1024, help.text,
// a region with start and end, at most 10 locations, and `partialFingerprints`, of which code
// scanning "only uses the primaryLocationLineHash"). That hash is the one
// github/codeql-action's upload-sarif computes from the source (src/fingerprints.ts, v4.36.2),
// computed here from the stack file: the upload runs on the workflow_run side, which never
// checks out the pull request, so the action could not compute it. Validated in
// test/sarif-code-scanning.test.ts against the OASIS schema (test/schemas/) and that subset.
import * as fs from "node:fs";
import * as path from "node:path";
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from "yaml";
import type { Rule } from "../../policies/rules/rule";
import type { RecordedResource } from "./record";
import type { StackReport } from "./report";
import type { Violation } from "./policy";

export const SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/** The rule of a stack's configuration error (exit 2): not a policy of the pack, the planner's own. */
export const STACK_CONFIG_RULE = "stack-configuration-valid";

/** A position in a text file (1-based, as SARIF counts). */
export interface Position {
  line: number;
  column: number;
}

type Step = { key: string } | { id: string; value: string } | { index: number };

/** `triton.groups[name=vision].image.tag` (or `groups[0]`) as steps: keys, and list items by identity or index. */
function steps(key: string): Step[] {
  const out: Step[] = [];
  const re = /\.?([A-Za-z0-9_:-]+)|\[([A-Za-z]+)=([^\]]+)\]|\[(\d+)\]/y;
  let m: RegExpExecArray | null;
  while (re.lastIndex < key.length && (m = re.exec(key)))
    out.push(m[1] !== undefined ? { key: m[1] } : m[4] !== undefined ? { index: Number(m[4]) } : { id: m[2], value: m[3] });
  return out;
}

/**
 * Where a config key is in a stack file's text: the position of the deepest key of the path
 * that exists (the key itself when set), where that key's name ends, and how much of the path was found.
 */
export function locateConfigKey(
  text: string,
  key: string,
  projectName: string,
): { position: Position; end: Position; found: string; exact: boolean } | undefined {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, keepSourceTokens: false });
  const config = doc.get("config", true) as Node | undefined;
  if (!isMap(config)) return undefined;
  const pos = (offset: number): Position => {
    const p = lc.linePos(offset);
    return { line: p.line, column: p.col };
  };
  const at = (n: Node | undefined, found: string) => ({ position: pos(n?.range?.[0] ?? 0), end: pos(n?.range?.[1] ?? 0), found });
  const configPair = (doc.contents as any)?.items?.find((p: any) => isScalar(p.key) && p.key.value === "config");
  let best = at(configPair?.key, "config");
  const path = steps(key);
  if (path.length === 0) return { ...best, exact: false };
  const first = path[0] as { key: string };
  let node: Node | undefined;
  const topKeys = [key.includes(":") ? first.key : `${projectName}:${first.key}`, first.key];
  for (const k of topKeys) {
    const pair = config.items.find((p) => isScalar(p.key) && p.key.value === k);
    if (pair) {
      node = pair.value as Node;
      best = at(pair.key as Node, first.key);
      break;
    }
  }
  if (!node) return { ...best, exact: false };
  let done = 1;
  for (const s of path.slice(1)) {
    if ("key" in s && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === s.key);
      if (!pair) break;
      best = at(pair.key as Node, `${best.found}.${s.key}`);
      node = pair.value as Node;
    } else if ("id" in s && isSeq(node)) {
      const item = node.items.find((i) => isMap(i) && String(i.get(s.id)) === s.value) as Node | undefined;
      if (!item) break;
      // The item's identity key (`name: vision`) is where the item reads as itself.
      const idKey = isMap(item) ? (item.items.find((p) => isScalar(p.key) && p.key.value === s.id)?.key as Node | undefined) : undefined;
      best = at(idKey ?? item, `${best.found}[${s.id}=${s.value}]`);
      node = item;
    } else if ("index" in s && isSeq(node)) {
      const item = node.items[s.index] as Node | undefined;
      if (!item) break;
      const firstKey = isMap(item) ? (item.items[0]?.key as Node | undefined) : undefined;
      best = at(firstKey ?? item, `${best.found}[${s.index}]`);
      node = item;
    } else break;
    done++;
  }
  if (best.end.line !== best.position.line) best.end = { line: best.position.line, column: best.position.column + 1 };
  return { ...best, exact: done === path.length };
}

/**
 * The keys a configuration error names, one per problem line (`  - <key> <rule>`, lib/errors.ts
 * SettingsError's wording), with the stack file's project prefix kept as written.
 */
export function errorKeys(error: string): { key: string; line: string }[] {
  return error
    .split("\n")
    .map((l) => /^ {2}- (\S+) (.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ key: m[1], line: `${m[1]} ${m[2]}` }));
}

/**
 * A configuration error with each problem's place in the stack file (`Pulumi.prod.yaml:14:5`)
 * after it: the line and column of the key it names, or of the deepest part of that key that
 * is written there (where the missing rest would go).
 */
export function withStackFilePositions(error: string, stackFile: { uri: string; text: string } | undefined, projectName: string): string {
  if (!stackFile) return error;
  return error
    .split("\n")
    .map((l) => {
      const m = /^ {2}- (\S+) /.exec(l);
      if (!m || / \(\S+:\d+:\d+\)$/.test(l)) return l;
      const at = locateConfigKey(stackFile.text, m[1], projectName);
      return at && at.found !== "config" ? `${l} (${stackFile.uri}:${at.position.line}:${at.position.column})` : l;
    })
    .join("\n");
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

/**
 * github/codeql-action's line hashes (src/fingerprints.ts `hash`, v4.36.2): for each line, a
 * rolling hash (base 37, 64-bit) of the 100 characters from its first non-blank one, spaces
 * and tabs skipped and line ends normalised to \n, as `<hex>:<n>` (n counts equal hashes so
 * far). What code scanning matches alerts across runs by (`primaryLocationLineHash`).
 */
export function lineHashes(text: string): string[] {
  const BLOCK = 100;
  const MOD = 37n;
  const mask = (x: bigint) => BigInt.asUintN(64, x);
  let firstMod = 1n;
  for (let i = 0; i < BLOCK; i++) firstMod = mask(firstMod * MOD);
  const window = Array<number>(BLOCK).fill(0);
  const lineNumbers = Array<number>(BLOCK).fill(-1);
  const out: string[] = [];
  const counts = new Map<string, number>();
  let hash = 0n;
  let index = 0;
  let lineNumber = 0;
  let lineStart = true;
  let prevCR = false;
  const emit = () => {
    const hex = hash.toString(16);
    const n = (counts.get(hex) ?? 0) + 1;
    counts.set(hex, n);
    out[lineNumbers[index] - 1] = `${hex}:${n}`;
    lineNumbers[index] = -1;
  };
  const update = (c: number) => {
    const begin = window[index];
    window[index] = c;
    hash = mask(MOD * hash + BigInt(c) - firstMod * BigInt(begin));
    index = (index + 1) % BLOCK;
  };
  const char = (c: number) => {
    if (c === 32 || c === 9 || (prevCR && c === 10)) {
      prevCR = false;
      return;
    }
    if (c === 13) {
      c = 10;
      prevCR = true;
    } else prevCR = false;
    if (lineNumbers[index] !== -1) emit();
    if (lineStart) {
      lineStart = false;
      lineNumber++;
      lineNumbers[index] = lineNumber;
    }
    if (c === 10) lineStart = true;
    update(c);
  };
  for (let i = 0; i < text.length; i++) char(text.charCodeAt(i));
  char(65535);
  for (let i = 0; i < BLOCK; i++) {
    if (lineNumbers[index] !== -1) emit();
    update(0);
  }
  return out;
}

export interface SarifStack {
  report: StackReport;
  resources: readonly RecordedResource[];
  /** The stack file, relative to the repository root (the SARIF uri), and its text. */
  stackFile?: { uri: string; text: string };
}

/** Domains whose rules guard security (GitHub shows their results as security alerts), with the severity score of a violation. */
const SECURITY_SEVERITY: Readonly<Record<string, string>> = { secrets: "8.0", iam: "7.5", exposure: "7.5", firewall: "7.0", rbac: "7.0" };

const cut = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 1)}…`);
/** `gpu-capacity-holds-serving-pods` → `GpuCapacityHoldsServingPods` (SARIF §3.49.7: a rule's name is an identifier, not its id). */
const ruleName = (id: string) => id.replace(/(^|[-_/])([a-z0-9])/g, (_, _s, c: string) => c.toUpperCase());

/** A rule as code scanning shows it: name, descriptions, help (text and Markdown), tags, precision, severity. */
function descriptor(
  r: Pick<Rule, "name" | "domain" | "description" | "prevents" | "remediationSteps"> & { configKey?: string },
  defaultLevel: "error" | "warning",
) {
  const security = SECURITY_SEVERITY[r.domain];
  const markdown = [
    r.description,
    "",
    `**Prevents:** ${r.prevents}`,
    "",
    `**Fix:** ${r.remediationSteps}`,
    ...(r.configKey ? ["", `The result is located at the stack setting \`${r.configKey}\` in \`Pulumi.<stack>.yaml\`.`] : []),
  ].join("\n");
  return {
    id: r.name,
    name: cut(ruleName(r.name), 255),
    shortDescription: { text: cut(r.description, 1024) },
    fullDescription: { text: cut(`${r.description} Prevents: ${r.prevents}`, 1024) },
    help: { text: `${r.description}\n\nPrevents: ${r.prevents}\n\nFix: ${r.remediationSteps}`, markdown },
    defaultConfiguration: { level: defaultLevel },
    properties: {
      tags: [...(security ? ["security"] : []), r.domain, "triton-platform"],
      // Deterministic checks of the planned resources: a result is the rule's condition, not a guess.
      precision: "very-high",
      "problem.severity": defaultLevel,
      ...(security ? { "security-severity": security } : {}),
      domain: r.domain,
    },
  };
}

/** The planner's own rule for a stack's configuration error (exit 2): nothing of that stack is planned. */
const STACK_CONFIG_DESCRIPTOR = {
  name: STACK_CONFIG_RULE,
  domain: "configuration",
  description:
    "Every key of a stack's config is known and its value keeps its rule (the component schemas); otherwise nothing of the stack is planned (exit 2).",
  prevents: "A typo'd key silently falling back to its default, or a value `pulumi up` would deploy and the cluster refuse or run wrongly.",
  remediationSteps: "Fix the key the result points at in Pulumi.<stack>.yaml as its message says (a misspelt key: the key it names after 'did you mean').",
};

export interface SarifOptions {
  projectName: string;
  /** The planner's version (package.json). */
  version?: string;
  /** Where a person reads about the tool (the repository's README). */
  informationUri?: string;
}

/** The SARIF log of planned stacks. */
export function sarifLog(stacks: readonly SarifStack[], rules: readonly Rule[], opts: SarifOptions) {
  const all = [...rules, { ...STACK_CONFIG_DESCRIPTOR, configKeyFor: () => undefined } as unknown as Rule];
  const ruleIndex = new Map(all.map((r, i) => [r.name, i]));
  const byName = new Map(rules.map((r) => [r.name, r]));
  const hashes = new Map<string, string[]>();
  const hashAt = (file: { uri: string; text: string } | undefined, line: number) => {
    if (!file) return undefined;
    if (!hashes.has(file.uri)) hashes.set(file.uri, lineHashes(file.text));
    return hashes.get(file.uri)![line - 1];
  };
  const result = (
    report: StackReport,
    stackFile: SarifStack["stackFile"],
    ruleId: string,
    level: "error" | "warning",
    text: string,
    key: string | undefined,
    extra: { urn?: string; properties?: Record<string, unknown> },
  ) => {
    const at = stackFile && key ? locateConfigKey(stackFile.text, key, opts.projectName) : undefined;
    const fallback = stackFile ? locateConfigKey(stackFile.text, "", opts.projectName) : undefined;
    const where = at ?? fallback;
    const start = where?.position ?? { line: 1, column: 1 };
    const end = where?.end ?? { line: 1, column: 2 };
    const lineHash = hashAt(stackFile, start.line);
    return {
      ruleId,
      ruleIndex: ruleIndex.get(ruleId)!,
      level,
      message: { text },
      locations: [
        {
          physicalLocation: {
            artifactLocation: { uri: stackFile?.uri ?? `Pulumi.${report.stack}.yaml`, uriBaseId: "%SRCROOT%" },
            region: { startLine: start.line, startColumn: start.column, endLine: end.line, endColumn: end.column },
          },
          ...(extra.urn ? { logicalLocations: [{ fullyQualifiedName: extra.urn, kind: "resource" }] } : {}),
        },
      ],
      // What code scanning matches alerts by (with the file and the rule): the line's hash, as upload-sarif computes it.
      partialFingerprints: { primaryLocationLineHash: lineHash ?? "0:1" },
      properties: { stack: report.stack, ...extra.properties, ...(key ? { configKey: key } : {}) },
      _where: at,
    };
  };
  const results = stacks.flatMap(({ report, resources, stackFile }) => {
    if (report.error) {
      const keys = errorKeys(report.error);
      const problems = keys.length ? keys : [{ key: "", line: report.error.split("\n")[0] }];
      return problems.map((p) =>
        result(report, stackFile, STACK_CONFIG_RULE, "error", `stack ${report.stack}: configuration error, not planned: ${p.line}`, p.key || undefined, {
          properties: { enforcementLevel: "mandatory" },
        }),
      );
    }
    return report.violations.map((v) => {
      const key = violationConfigKey(v, resources, byName.get(v.policy));
      const r = result(report, stackFile, v.policy, sarifLevel(v.level), "", key, { urn: v.urn, properties: { enforcementLevel: v.level } });
      const where = key ? (r._where?.exact ? ` (stack setting ${key})` : ` (stack setting ${key}, unset: its default applies)`) : "";
      r.message.text = `stack ${report.stack}: ${v.resource}${v.path ? ` at ${v.path}` : ""}: ${v.message}${where}`;
      return r;
    });
  });
  // A rule is an error by default when some planned stack enforces it as mandatory.
  const mandatory = new Set(stacks.flatMap((s) => (s.report.rules ?? []).filter((r) => r.level === "mandatory").map((r) => r.name)));
  return {
    $schema: SARIF_SCHEMA,
    version: "2.1.0" as const,
    runs: [
      {
        tool: {
          driver: {
            name: "triton-platform-plan",
            ...(opts.version ? { version: opts.version, semanticVersion: opts.version } : {}),
            ...(opts.informationUri ? { informationUri: opts.informationUri } : {}),
            rules: [
              ...rules.map((r) => descriptor({ ...r, configKey: r.configKey }, mandatory.has(r.name) ? "error" : "warning")),
              descriptor(STACK_CONFIG_DESCRIPTOR, "error"),
            ],
          },
        },
        originalUriBaseIds: { "%SRCROOT%": { description: { text: "The repository root (where Pulumi.<stack>.yaml files are)." } } },
        results: results.map(({ _where: _, ...r }) => r),
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
