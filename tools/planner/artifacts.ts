// The files a reviewer opens beside resources.json, per stack, taken from the recorded
// resources (so they are what `pulumi up` would apply, not a second rendering):
//   envoy.json                         the gateway's Envoy bootstrap, pretty-printed
//   helm/<release>.values.yaml         each Helm release's values
//   triton/<statefulset>.args.txt      each serving StatefulSet's tritonserver command line
//                                      (<group>.args.txt, <group>-canary.args.txt)
//   models/<group>/<model>/config.pbtxt each contracted model's config (the S3 object the stack writes),
//                                      under every serving group whose StatefulSets load it
//   graph.md                           the dependency graph (Mermaid, which GitHub renders)
// Cheap by design (it runs in every plan): one pass over the resources, a few small files.
import * as fs from "node:fs";
import * as path from "node:path";
import * as yaml from "js-yaml";
import type { RecordedResource } from "./record";
import { shippedBootstrapText } from "../../components/gateway/builders";

const TRITON_COMMAND = "tritonserver";

/** The Envoy bootstrap among the resources (a ConfigMap's `envoy.json`, or its packed `envoy.json.gz`), parsed; undefined without a gateway. */
export function envoyBootstrap(resources: readonly RecordedResource[]): unknown {
  for (const r of resources) {
    if (r.type !== "kubernetes:core/v1:ConfigMap") continue;
    const text = shippedBootstrapText(r.props as Parameters<typeof shippedBootstrapText>[0]);
    if (typeof text === "string") return JSON.parse(text) as unknown;
  }
  return undefined;
}

/** Quote an argument for a POSIX shell only where it needs it. */
function shellWord(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'"'"'`)}'`;
}

/** Each StatefulSet whose container runs tritonserver: its name and the command line, one flag per line. */
export function tritonCommandLines(resources: readonly RecordedResource[]): { name: string; text: string }[] {
  const out: { name: string; text: string }[] = [];
  for (const r of resources) {
    if (r.type !== "kubernetes:apps/v1:StatefulSet") continue;
    const containers = (r.props.spec?.template?.spec?.containers ?? []) as { command?: string[]; args?: string[] }[];
    const c = containers.find((x) => x.command?.[0] === TRITON_COMMAND || x.command?.[0]?.endsWith(`/${TRITON_COMMAND}`));
    if (!c) continue;
    const words = [...(c.command ?? []), ...(c.args ?? [])].map((w) => shellWord(String(w)));
    out.push({ name: String(r.props.metadata?.name ?? r.name), text: words.join(" \\\n  ") + "\n" });
  }
  return out;
}

const CONFIG_FILE = "config.pbtxt";

/**
 * The config.pbtxt objects the stack writes (aws S3 BucketObjectv2 with key …/<model>/config.pbtxt),
 * each under the serving groups (StatefulSet label app.kubernetes.io/instance) whose tritonserver loads the model.
 */
export function modelConfigFiles(resources: readonly RecordedResource[]): { group: string; model: string; text: string }[] {
  const loads = new Map<string, Set<string>>();
  for (const r of resources) {
    if (r.type !== "kubernetes:apps/v1:StatefulSet") continue;
    const group = r.props.metadata?.labels?.["app.kubernetes.io/instance"] as string | undefined;
    const containers = (r.props.spec?.template?.spec?.containers ?? []) as { args?: string[] }[];
    for (const c of containers)
      for (const a of c.args ?? []) {
        const m = /^--load-model=(.+)$/.exec(String(a));
        if (m && group) loads.set(m[1], new Set([...(loads.get(m[1]) ?? []), group]));
      }
  }
  const out: { group: string; model: string; text: string }[] = [];
  for (const r of resources) {
    if (r.type !== "aws:s3/bucketObjectv2:BucketObjectv2" || typeof r.props.content !== "string") continue;
    const parts = String(r.props.key ?? "").split("/");
    if (parts.length < 2 || parts[parts.length - 1] !== CONFIG_FILE) continue;
    const model = parts[parts.length - 2];
    for (const group of loads.get(model) ?? []) out.push({ group, model, text: r.props.content });
  }
  return out;
}

const short = (type: string) => (type.startsWith("pulumi:providers:") ? `provider ${type.slice("pulumi:providers:".length)}` : (type.split(":").pop() ?? type));

/** Mermaid text inside a quoted label. */
function label(s: string): string {
  return s.replace(/"/g, "#quot;").replace(/</g, "#lt;").replace(/>/g, "#gt;");
}

/**
 * The dependency graph as a Mermaid flowchart: each component a subgraph of its children,
 * an edge from each resource to what it depends on having been created first (explicit
 * dependsOn and the references in its inputs, as the engine records them).
 */
export function dependencyGraph(stack: string, resources: readonly RecordedResource[]): string {
  const ids = new Map<string, string>();
  resources.forEach((r, i) => ids.set(r.urn, `r${i}`));
  const children = new Map<string | null, RecordedResource[]>();
  const root = resources.find((r) => r.type === "pulumi:pulumi:Stack");
  for (const r of resources) {
    if (r === root) continue;
    const p = r.parent && r.parent !== root?.urn && ids.has(r.parent) ? r.parent : null;
    children.set(p, [...(children.get(p) ?? []), r]);
  }
  const lines = ["flowchart LR"];
  const emit = (parent: string | null, indent: string) => {
    for (const r of children.get(parent) ?? []) {
      const id = ids.get(r.urn)!;
      if (!r.custom && children.has(r.urn)) {
        lines.push(`${indent}subgraph ${id}["${label(`${short(r.type)} ${r.name}`)}"]`);
        emit(r.urn, indent + "  ");
        lines.push(`${indent}end`);
      } else {
        lines.push(`${indent}${id}["${label(`${short(r.type)} ${r.name}`)}"]`);
      }
    }
  };
  emit(null, "  ");
  for (const r of resources) {
    for (const d of r.dependencies) {
      const from = ids.get(d);
      if (from && d !== root?.urn) lines.push(`  ${ids.get(r.urn)} --> ${from}`);
    }
  }
  return [
    `# Dependency graph of stack ${stack}`,
    "",
    "Each component is a box of its children; an arrow points from a resource to one it depends on (which `pulumi up` creates first).",
    "Generated by `npm run plan` from resources.json.",
    "",
    "```mermaid",
    ...lines,
    "```",
    "",
  ].join("\n");
}

const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, "_");

/** Write the artifacts of a stack into `outDir`; returns their paths relative to it. */
export function writeArtifacts(outDir: string, resources: readonly RecordedResource[]): string[] {
  const written: string[] = [];
  const put = (rel: string, text: string) => {
    fs.writeFileSync(path.join(outDir, rel), text);
    written.push(rel);
  };
  fs.rmSync(path.join(outDir, "models"), { recursive: true, force: true });
  for (const f of modelConfigFiles(resources)) {
    const dir = path.join("models", safe(f.group), safe(f.model));
    fs.mkdirSync(path.join(outDir, dir), { recursive: true });
    put(path.join(dir, CONFIG_FILE), f.text);
  }
  for (const d of ["helm", "triton"]) {
    fs.rmSync(path.join(outDir, d), { recursive: true, force: true });
    fs.mkdirSync(path.join(outDir, d), { recursive: true });
  }
  fs.rmSync(path.join(outDir, "envoy.json"), { force: true });
  const envoy = envoyBootstrap(resources);
  if (envoy !== undefined) put("envoy.json", JSON.stringify(envoy, null, 2) + "\n");
  for (const r of resources) {
    if (!r.type.startsWith("kubernetes:helm.sh/") || !r.custom) continue;
    const release = String(r.props.name ?? r.name).replace(/[^A-Za-z0-9._-]+/g, "_");
    put(path.join("helm", `${release}.values.yaml`), yaml.dump(r.props.values ?? {}, { noRefs: true, lineWidth: -1, sortKeys: false }));
  }
  for (const t of tritonCommandLines(resources)) put(path.join("triton", `${t.name.replace(/[^A-Za-z0-9._-]+/g, "_")}.args.txt`), t.text);
  put("graph.md", dependencyGraph(path.basename(outDir), resources));
  return written;
}
