// The option table (components/upstream/tritonserver.ts) against the shared per-release option
// tables, ../shared/reference/tritonserver-options/r<yy.mm>.tsv (read from each release's
// src/command_line_parser.cc, see its README): same option names per release, same argument
// kind or value format, same deprecations. A release file the table does not cover fails too.
// Without shared/ beside the clone the comparison is pending, as the chart-values test is.
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { FLAGS, TRITON_OPTION_RELEASES, flagSince, releaseFlags, type FlagSpec } from "../components/upstream/tritonserver";
import { ROOT } from "./helpers";

const OPTIONS_DIR = ((): string | undefined => {
  const common = spawnSync("git", ["rev-parse", "--path-format=absolute", "--git-common-dir"], { cwd: ROOT, encoding: "utf8" });
  const beside = [ROOT, ...(common.status === 0 ? [path.dirname(common.stdout.trim())] : [])];
  return beside.map((d) => path.join(d, "..", "shared", "reference", "tritonserver-options")).find((d) => fs.existsSync(d));
})();

interface Row {
  readonly name: string;
  readonly arg: string;
  readonly deprecated: boolean;
}

/** The rows of one shared table: name<TAB>kind or `format <…>`<TAB>deprecated. */
function readTable(file: string): Row[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#"))
    .map((l) => {
      const [name, kind, dep] = l.split("\t");
      return { name, arg: kind.replace(/^format /, ""), deprecated: (dep ?? "").trim() === "deprecated" };
    });
}

/** Every way the table's options of `release` differ from the shared rows of that release. */
function disagreements(table: readonly FlagSpec[], release: string, rows: readonly Row[]): string[] {
  const ours = new Map(table.filter((f) => flagSince(f) <= release).map((f) => [f.name.replace(/^--/, ""), f]));
  const theirs = new Map(rows.map((r) => [r.name, r]));
  const out: string[] = [];
  for (const [name, r] of theirs) {
    const f = ours.get(name);
    if (!f) {
      const later = table.find((x) => x.name === `--${name}`);
      out.push(`${release}: --${name} is an option of the release but ${later ? `the table has it only from ${flagSince(later)}` : "not in the table"}`);
      continue;
    }
    if (f.arg !== r.arg) out.push(`${release}: --${name} is declared ${r.arg}, the table says ${f.arg}`);
    if (Boolean(f.deprecated) !== r.deprecated) out.push(`${release}: --${name} is ${r.deprecated ? "" : "not "}deprecated upstream, the table says otherwise`);
  }
  for (const name of ours.keys()) if (!theirs.has(name)) out.push(`${release}: --${name} is in the table for ${release} but not an option of that release`);
  return out;
}

const releaseFiles = (): { release: string; file: string }[] =>
  fs
    .readdirSync(OPTIONS_DIR!)
    .flatMap((f) => {
      const m = /^r(\d{2}\.\d{2})\.tsv$/.exec(f);
      return m ? [{ release: m[1], file: path.join(OPTIONS_DIR!, f) }] : [];
    })
    .sort((a, b) => a.release.localeCompare(b.release));

describe("tritonserver option table matches the shared per-release option tables", function () {
  before(function () {
    if (OPTIONS_DIR === undefined) this.skip(); // no shared/ beside the clone: reported as pending
  });

  it("covers every release the shared folder has a table for", () => {
    const missing = releaseFiles()
      .map((r) => r.release)
      .filter((r) => !(TRITON_OPTION_RELEASES as readonly string[]).includes(r));
    assert.deepEqual(missing, [], "add the release to TRITON_OPTION_RELEASES (CONTRIBUTING.md, 'Adding a Triton release')");
    assert.ok(releaseFiles().length >= 9);
  });

  it("has, for each release, exactly its options, with their argument kinds and deprecations", () => {
    const problems = releaseFiles().flatMap(({ release, file }) => disagreements(FLAGS, release, readTable(file)));
    assert.deepEqual(problems, []);
  });

  it("fails on a table that disagrees: an option dropped, one dated too late, a wrong kind, a lost deprecation, an extra option", () => {
    const { release, file } = releaseFiles().find((r) => r.release === "25.07")!;
    const rows = readTable(file);
    assert.deepEqual(disagreements(FLAGS, release, rows), []);
    const mutate = (name: string, change: (f: FlagSpec) => FlagSpec | undefined) =>
      FLAGS.flatMap((f) => {
        if (f.name !== name) return [f];
        const g = change(f);
        return g ? [g] : [];
      });
    const cases: [readonly FlagSpec[], RegExp][] = [
      [mutate("--http-restricted-api", () => undefined), /--http-restricted-api is an option of the release but not in the table/],
      [mutate("--grpc-infer-thread-count", (f) => ({ ...f, since: "25.10" })), /--grpc-infer-thread-count .* only from 25\.10/],
      [mutate("--http-thread-count", (f) => ({ ...f, arg: "ArgStr" })), /--http-thread-count is declared ArgInt, the table says ArgStr/],
      [mutate("--trace-rate", ({ deprecated: _, ...f }) => f), /--trace-rate is deprecated upstream/],
      [mutate("--allow-client-shm", (f) => ({ ...f, since: undefined })), /--allow-client-shm is in the table for 25\.07 but not an option/],
      [
        [...FLAGS, { name: "--memory-percentage", arg: "ArgInt", value: { kind: "int", min: 0, max: 100n }, default: "—" }],
        /--memory-percentage is in the table/,
      ],
    ];
    for (const [table, re] of cases) {
      const found = disagreements(table, release, rows);
      assert.equal(found.length, 1, found.join("\n"));
      assert.match(found[0], re);
    }
  });
});

describe("tritonserver option table shape", () => {
  it("lists each option once, dates each within the table's releases, and states kinds that match its value checks", () => {
    assert.equal(new Set(FLAGS.map((f) => f.name)).size, FLAGS.length);
    for (const f of FLAGS) {
      assert.ok((TRITON_OPTION_RELEASES as readonly string[]).includes(flagSince(f)), `${f.name} since ${flagSince(f)}`);
      const kinds: Record<string, readonly string[]> = {
        ArgNone: ["none"],
        ArgBool: ["bool"],
        ArgInt: ["int", "parsed"],
        ArgFloat: ["number", "int"],
        ArgStr: ["string", "enum", "format", "parsed"],
      };
      const allowed = kinds[f.arg] ?? ["format", "parsed"];
      assert.ok(allowed.includes(f.value.kind), `${f.name}: ${f.arg} checked as ${f.value.kind}`);
      if (f.deprecated) assert.match(f.deprecated.replacement, /^--/, `${f.name} names its replacement flag`);
    }
  });

  it("releases only gain options (none is removed), and the newest release has all of them", () => {
    const releases = [...TRITON_OPTION_RELEASES];
    for (let i = 1; i < releases.length; i++) {
      const before = new Set(releaseFlags(releases[i - 1]).map((f) => f.name));
      const now = new Set(releaseFlags(releases[i]).map((f) => f.name));
      for (const n of before) assert.ok(now.has(n), `${n} in ${releases[i - 1]} but not ${releases[i]}`);
    }
    assert.equal(releaseFlags(releases[releases.length - 1]).length, FLAGS.length);
    assert.equal(releaseFlags("25.01").length, 87, "87 options in r25.01 (upstream-facts.md)");
  });
});
