// URNs as the Pulumi engine forms them (what `pulumi up` writes to state), not as the SDK's
// mock monitor does: the mock qualifies a type by its parent's last type only and keeps the
// root Stack's type (`pulumi:pulumi:Stack$triton-platform:gpu:GpuNodeGroup`); the engine puts the
// parent's whole qualified type in front and leaves out the root Stack's. No SDK import: the
// diff, `npm run policy` and the fake engine (test/support/fake-engine.ts) use it without the runtime.
//
// Sources, pulumi/pulumi at tag v3.248.0:
// - sdk/go/common/resource/urn/urn.go: New (the URN of a type under a parent type, the root
//   Stack's type skipped), QualifiedType/Type/Name (getComponentN: the name is everything after
//   the third "::", so a name may itself contain "::").
// - pkg/resource/deploy/deployment.go generateURN: the parent type is the parent URN's
//   QualifiedType, unless the parent is the root Stack.
// - sdk/go/common/resource/alias.go CreateURN and pkg/resource/deploy/step_generator.go
//   collapseAliasToUrn: an alias spec's URN (unset fields taken from the resource; a root-Stack
//   parent or noParent means no parent; under a parent, the parent URN up to its last "::").

/** `tokens.RootStackType`: the type of the root Stack resource the language host registers. */
export const ROOT_STACK_TYPE = "pulumi:pulumi:Stack";

const PREFIX = "urn:pulumi:";
const DELIMITER = "::";

/** The n-th "::"-delimited part after the prefix; the last (the name) runs to the end (urn.go getComponentN). */
function part(urn: string, index: number): string {
  if (!urn.startsWith(PREFIX)) throw new Error(`not a URN (it must start with ${PREFIX}): ${JSON.stringify(urn)}`);
  const parts = urn.slice(PREFIX.length).split(DELIMITER);
  return index === 3 ? parts.slice(3).join(DELIMITER) : (parts[index] ?? "");
}

export const urnStack = (urn: string): string => part(urn, 0);
export const urnProject = (urn: string): string => part(urn, 1);
/** The type with its parents' types (`a$b$c`). */
export const urnQualifiedType = (urn: string): string => part(urn, 2);
/** The resource's own type: the qualified type after its last `$`. */
export const urnType = (urn: string): string => urnQualifiedType(urn).split("$").pop() ?? "";
export const urnName = (urn: string): string => part(urn, 3);

/** urn.go New: the URN of `type`/`name` under `parentType` (empty or the root Stack's: none). */
export function newUrn(stack: string, project: string, parentType: string, type: string, name: string): string {
  const qualified = parentType !== "" && parentType !== ROOT_STACK_TYPE ? `${parentType}$${type}` : type;
  return `${PREFIX}${stack}${DELIMITER}${project}${DELIMITER}${qualified}${DELIMITER}${name}`;
}

/** deployment.go generateURN: the URN the engine gives a registration of `type`/`name` under `parent` (a URN or none). */
export function engineUrn(stack: string, project: string, parent: string | null | undefined, type: string, name: string): string {
  const parentType = parent && urnQualifiedType(parent) !== ROOT_STACK_TYPE ? urnQualifiedType(parent) : "";
  return newUrn(stack, project, parentType, type, name);
}

/** alias.go CreateURN: under a parent, its URN up to the last "::" and `$`; else the stack and project's prefix. */
export function createUrn(name: string, type: string, parent: string | null | undefined, project: string, stack: string): string {
  if (!parent) return `${PREFIX}${stack}${DELIMITER}${project}${DELIMITER}${type}${DELIMITER}${name}`;
  const ix = parent.lastIndexOf(DELIMITER);
  if (ix === -1) throw new Error(`expected parent ${JSON.stringify(parent)} to contain '::'`);
  return `${parent.slice(0, ix)}$${type}${DELIMITER}${name}`;
}
