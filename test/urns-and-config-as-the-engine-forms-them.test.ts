// The planner's URNs and config strings are the engine's and the CLI's: checked against the
// cases of Pulumi's own tests and rules at tag v3.248.0 (cited per case), and on a plan.
import { strict as assert } from "node:assert";
import { aliasUrn } from "../tools/planner/options";
import { goJson, stackConfigOf } from "../tools/planner/stackfile";
import { createUrn, engineUrn, newUrn, urnName, urnProject, urnQualifiedType, urnStack, urnType } from "../tools/planner/urn";
import { plan } from "./helpers";

describe("URNs as the engine forms them (pulumi/pulumi v3.248.0)", () => {
  // sdk/go/common/resource/urn/urn_test.go TestURNRoundTripping, 2 and 3.
  it("New puts a parent type in front; the parts read back (TestURNRoundTripping*)", () => {
    const typ = "bang:boom/fizzle:MajorResource";
    for (const [parentType, name, qualified] of [
      ["", "a-swell-resource", typ],
      ["parent$type", "a-swell-resource", `parent$type$${typ}`],
      ["parent$type", "a-swell-resource::with_awkward$names", `parent$type$${typ}`],
    ]) {
      const urn = newUrn("stck", "foo/bar/baz", parentType, typ, name);
      assert.equal(urnStack(urn), "stck");
      assert.equal(urnProject(urn), "foo/bar/baz");
      assert.equal(urnQualifiedType(urn), qualified);
      assert.equal(urnType(urn), typ);
      assert.equal(urnName(urn), name);
    }
  });

  // urn_test.go TestComponentAccess: Type and Name components.
  it("reads type and name as urn.go does (TestComponentAccess)", () => {
    for (const [urn, type] of [
      ["urn:pulumi:stack::proj::very$qualified$type::test-test", "type"],
      ["urn:pulumi:stack::proj::qualified$type::test-test", "type"],
      ["urn:pulumi:stack::proj::qualified-type::test-test", "qualified-type"],
      ["urn:pulumi:stack::proj::::test-test", ""],
    ])
      assert.equal(urnType(urn), type, urn);
    for (const [urn, name] of [
      ["urn:pulumi:stack::proj::qualified$type::name", "name"],
      ["urn:pulumi:stack::proj::qualified$type::", ""],
      ["urn:pulumi::stack::proj::type::a-name-with::many::name::separators", "a-name-with::many::name::separators"],
    ])
      assert.equal(urnName(urn), name, urn);
  });

  // urn.go New and deployment.go generateURN: tokens.RootStackType is never put in a type chain.
  it("leaves the root Stack's type out and keeps a parent's whole chain (generateURN)", () => {
    const stack = "urn:pulumi:s::p::pulumi:pulumi:Stack::p-s";
    const component = engineUrn("s", "p", stack, "my:mod:Component", "c");
    assert.equal(component, "urn:pulumi:s::p::my:mod:Component::c");
    const child = engineUrn("s", "p", component, "my:mod:Inner", "c-inner");
    assert.equal(child, "urn:pulumi:s::p::my:mod:Component$my:mod:Inner::c-inner");
    // The mock monitor writes "my:mod:Inner$aws:s3/bucket:Bucket" here (its parent's last type only).
    assert.equal(engineUrn("s", "p", child, "aws:s3/bucket:Bucket", "b"), "urn:pulumi:s::p::my:mod:Component$my:mod:Inner$aws:s3/bucket:Bucket::b");
    assert.equal(engineUrn("s", "p", null, "pulumi:pulumi:Stack", "p-s"), stack);
    assert.equal(newUrn("s", "p", "pulumi:pulumi:Stack", "t:m:T", "n"), "urn:pulumi:s::p::t:m:T::n");
  });

  // pkg/resource/deploy/step_generator_test.go TestGenerateAliases, the cases without a parent alias:
  // the child "myres-child" of type test:resource:child under CreateURN("myres", "test:resource:type").
  it("collapses alias specs as collapseAliasToUrn does (TestGenerateAliases)", () => {
    const parent = createUrn("myres", "test:resource:type", "", "project", "stack");
    assert.equal(parent, "urn:pulumi:stack::project::test:resource:type::myres");
    const child = {
      urn: engineUrn("stack", "project", parent, "test:resource:child", "myres-child"),
      type: "test:resource:child",
      name: "myres-child",
      parent,
    };
    for (const [alias, expected] of [
      [{ type: "test:resource:child2" }, "urn:pulumi:stack::project::test:resource:type$test:resource:child2::myres-child"],
      [{ name: "child2" }, "urn:pulumi:stack::project::test:resource:type$test:resource:child::child2"],
      [{ type: "test:resource:child2", noParent: true as const }, "urn:pulumi:stack::project::test:resource:child2::myres-child"],
      [
        { type: "test:resource:child2", parentUrn: createUrn("originalparent", "test:resource:original", "", "project", "stack") },
        "urn:pulumi:stack::project::test:resource:original$test:resource:child2::myres-child",
      ],
    ] as const)
      assert.equal(aliasUrn(child, alias), expected, JSON.stringify(alias));
    // A parent that is the root Stack counts as none (collapseAliasToUrn's parentIsRootStack).
    const top = {
      urn: "urn:pulumi:stack::project::t:m:T::x",
      type: "t:m:T",
      name: "x",
      parent: "urn:pulumi:stack::project::pulumi:pulumi:Stack::project-stack",
    };
    assert.equal(aliasUrn(top, { name: "old" }), "urn:pulumi:stack::project::t:m:T::old");
  });

  it("is what a plan records: no type chain holds the root Stack's type; each child's chain is its parent's", async () => {
    const { resources } = await plan("prod");
    const byUrn = new Map(resources.map((r) => [r.urn, r]));
    for (const r of resources) {
      if (r.type === "pulumi:pulumi:Stack") continue;
      assert.ok(!urnQualifiedType(r.urn).includes("pulumi:pulumi:Stack"), r.urn);
      const parent = r.parent ? byUrn.get(r.parent) : undefined;
      assert.ok(parent, `${r.urn}: parent ${r.parent} not recorded`);
      const expected = parent.type === "pulumi:pulumi:Stack" ? r.type : `${urnQualifiedType(parent.urn)}$${r.type}`;
      assert.equal(urnQualifiedType(r.urn), expected, r.urn);
    }
  });
});

describe("structured config as the CLI passes it (Go encoding/json, config/plaintext.go marshalText)", () => {
  it("sorts object keys at every depth and escapes <, >, & as json.Marshal does", () => {
    assert.equal(goJson({ b: 1, a: { d: [{ z: true, y: null }], c: "x" } }), '{"a":{"c":"x","d":[{"y":null,"z":true}]},"b":1}');
    assert.equal(goJson({ q: "a<b>&c\u2028" }), '{"q":"a\\u003cb\\u003e\\u0026c\\u2028"}');
    assert.deepEqual(JSON.parse(goJson({ q: "a<b>&c" })), { q: "a<b>&c" });
  });

  it("is what the planner hands the program; strings and scalars stay as they are", () => {
    const { config } = stackConfigOf("proj", "s", { tags: { team: "t", "cost-center": "c" }, "aws:region": "us-east-1", n: 3 });
    assert.equal(config["proj:tags"], '{"cost-center":"c","team":"t"}');
    assert.equal(config["aws:region"], "us-east-1");
    assert.equal(config["proj:n"], "3");
  });
});
