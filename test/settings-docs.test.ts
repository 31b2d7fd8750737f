// The documentation of every stack key is generated from the schemas that enforce it: the
// walker reads back what a schema states (type, default, rule, description), and the files
// in the repository are what `npm run docs` writes.
import * as assert from "node:assert/strict";
import * as v from "valibot";
import { doc, integer, list, oneOf, pattern, section, uniqueList } from "../lib/schema";
import { documentKeys } from "../lib/schema-doc";
import { generatedFiles } from "../tools/docs";
import * as fs from "node:fs";
import * as path from "node:path";
import { ROOT } from "./helpers";
import { sections } from "../config/schema";

describe("settings documentation", () => {
  const schema = section({
    count: doc(v.optional(integer({ min: 1, max: 8 }), 1), "GPUs per pod."),
    mode: doc(v.optional(oneOf(["a", "b"]), "a"), "The mode."),
    name: doc(pattern(/^[a-z]+$/, "must be lower-case letters"), "Its name."),
    derived: doc(v.optional(pattern(/^x$/, "must be x")), "Derived when absent.", { default: "the first group's" }),
    zones: doc(uniqueList(pattern(/^z$/, "must be z"), { min: 1, what: "zone" }, "must not repeat a zone"), "Zones."),
    items: doc(list(section({ id: doc(integer(), "Item id.") })), "Items."),
    nested: doc(v.optional(section({ deep: doc(v.optional(integer(), 5), "Deep key.") }), {}), "A nested mapping."),
  });
  const rows = Object.fromEntries(documentKeys(schema).map((r) => [r.key, r]));

  it("reads each key's type, default, rule and description back from the schema", () => {
    assert.deepEqual(rows.count, { key: "count", type: "integer", default: "`1`", rule: "must be an integer from 1 to 8", description: "GPUs per pod." });
    assert.equal(rows.mode.type, '"a" \\| "b"');
    assert.equal(rows.name.default, "required");
    assert.equal(rows.name.rule, "must be lower-case letters");
    assert.equal(rows.derived.default, "the first group's");
    assert.equal(rows.zones.type, "list of string");
    assert.equal(rows.zones.rule, "must be a list of at least 1 zone(s); must not repeat a zone; each must be z");
  });

  it("walks nested mappings and the mappings inside lists", () => {
    assert.deepEqual(Object.keys(rows), ["count", "mode", "name", "derived", "zones", "items", "items[].id", "nested", "nested.deep"]);
    assert.equal(rows.items.type, "list of mappings");
    assert.equal(rows["items[].id"].description, "Item id.");
    assert.equal(rows["nested.deep"].default, "`5`");
    assert.equal(rows.nested.default, "`{}`");
  });

  it("every key of the stack configuration is documented in its schema", () => {
    const missing = Object.entries(sections).flatMap(([name, s]) =>
      [{ key: "", description: documentKeys(v.object({ [name]: s }))[0].description }, ...documentKeys(s as v.GenericSchema)]
        .filter((r) => r.description === "")
        .map((r) => (r.key ? `${name}.${r.key}` : name)),
    );
    assert.deepEqual(missing, [], "keys without doc(): give each its description where its rule is written");
  });

  it("the docs pages, the README key table and Pulumi.yaml are what npm run docs writes", () => {
    for (const [rel, text] of Object.entries(generatedFiles())) {
      assert.equal(fs.readFileSync(path.join(ROOT, rel), "utf8"), text, `${rel} is stale: run npm run docs`);
    }
  });
});
