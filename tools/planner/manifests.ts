// Renders the recorded Kubernetes resources as manifests: one YAML file per object.
import * as fs from "node:fs";
import * as path from "node:path";
import * as yaml from "js-yaml";
import type { RecordedResource } from "./record";

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; [k: string]: unknown };
  [k: string]: unknown;
}

/** Kubernetes objects among the recorded resources (not providers, Helm releases or components). */
export function kubernetesManifests(resources: RecordedResource[]): { resource: RecordedResource; manifest: Manifest }[] {
  return resources
    .filter((r) => r.custom && r.type.startsWith("kubernetes:") && typeof r.props.apiVersion === "string" && typeof r.props.kind === "string")
    .map((r) => {
      const { apiVersion, kind, metadata, ...rest } = r.props;
      const meta = { ...(metadata ?? {}) };
      // The provider names objects without metadata.name after the resource; show that.
      if (!meta.name) meta.name = r.name;
      return { resource: r, manifest: { apiVersion, kind, metadata: meta, ...rest } };
    });
}

export function manifestFileName(m: Manifest): string {
  const parts = [m.kind, m.metadata.namespace, m.metadata.name].filter(Boolean).map((p) =>
    String(p)
      .toLowerCase()
      .replace(/[^a-z0-9.-]+/g, "_"),
  );
  return parts.join("-") + ".yaml";
}

/** Write the manifests to `dir` (emptied first) and return the file names. */
export function writeManifests(dir: string, manifests: readonly Manifest[]): string[] {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const names: string[] = [];
  for (const manifest of manifests) {
    let name = manifestFileName(manifest);
    if (names.includes(name)) name = name.replace(/\.yaml$/, `-${names.length}.yaml`);
    fs.writeFileSync(path.join(dir, name), yaml.dump(manifest, { noRefs: true, lineWidth: -1, sortKeys: false }));
    names.push(name);
  }
  return names;
}
