// The registry (components/registry.ts) is the one list of components: each owns its sections
// once, names policy domains the pack has, and a component that needs what no earlier one
// produces is an error naming both (a registry out of order), not an undefined at deploy time.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { REGISTRY } from "../components/registry";
import { buildStack, type ComponentDescriptor } from "../components/component";
import { SECTION_PAGES, sections } from "../config/schema";
import { rules } from "../policies/rules";
import { ROOT } from "./helpers";

describe("the component registry", () => {
  it("names each component once, and each names only policy domains the pack has", () => {
    const names = REGISTRY.map((d) => d.name);
    assert.equal(new Set(names).size, names.length, names.join(", "));
    const domains = new Set(rules.map((r) => r.domain));
    for (const d of REGISTRY) for (const p of d.policyDomains ?? []) assert.ok(domains.has(p), `${d.name}: no rule of domain ${p}`);
  });

  it("composes every component's sections, each with its docs page on disk", () => {
    const owned = REGISTRY.flatMap((d) => Object.keys(d.sections ?? {}));
    assert.deepEqual(Object.keys(sections), owned);
    for (const [key, page] of Object.entries(SECTION_PAGES)) if (page) assert.ok(fs.existsSync(path.join(ROOT, page)), `${key}: ${page}`);
  });

  it("a component that needs what no earlier one produced is an error naming it", () => {
    const needsCluster: ComponentDescriptor = { name: "late", build: (ctx) => void ctx.need("cluster") };
    assert.throws(() => buildStack([needsCluster], {} as never, "s", "us-east-1"), /component late needs "cluster", which no component before it/);
    const twice: ComponentDescriptor = { name: "b", build: () => ({ labels: {} }) };
    assert.throws(() => buildStack([{ ...twice, name: "a" }, twice], {} as never, "s", "us-east-1"), /component b produces "labels", which a produces already/);
  });
});
