// The resource options the planner records beside each registration's inputs (what
// `pulumi up` honours: protect, ignoreChanges, deleteBeforeReplace, replaceOnChanges,
// aliases, retainOnDelete), read from the RegisterResourceRequest the SDK sends the (mock)
// monitor. No Pulumi SDK import: `npm run policy` and the diff use it without the runtime.
import { createUrn, ROOT_STACK_TYPE, urnProject, urnQualifiedType, urnStack } from "./urn";

/**
 * An alias as the engine receives it (RegisterResourceRequest.aliases): an old URN, or a spec
 * whose unset fields mean "as the resource is now" (its name, type, stack, project, parent).
 */
export type RecordedAlias = { urn: string } | { name?: string; type?: string; stack?: string; project?: string; parentUrn?: string; noParent?: true };

/** The resource options of a registration that decide what `pulumi up` does (only those set). */
export interface RecordedOptions {
  protect?: boolean;
  ignoreChanges?: string[];
  deleteBeforeReplace?: boolean;
  replaceOnChanges?: string[];
  aliases?: RecordedAlias[];
  retainOnDelete?: boolean;
}

/**
 * The options of a RegisterResourceRequest (the SDK sets them in runtime/resource.js
 * registerResource: protect and retainOnDelete only when given, deleteBeforeReplace with a
 * "defined" flag, ignoreChanges/replaceOnChanges as lists, aliases as Alias messages, since the
 * mock monitor supports alias specs). Undefined when none is set: most resources have none.
 */
export function requestOptions(req: any): RecordedOptions | undefined {
  const o: RecordedOptions = {};
  if (req.hasProtect?.()) o.protect = req.getProtect() as boolean;
  if (req.getDeletebeforereplacedefined?.()) o.deleteBeforeReplace = req.getDeletebeforereplace() as boolean;
  const ignore = req.getIgnorechangesList() as string[];
  if (ignore.length) o.ignoreChanges = [...ignore];
  const roc = req.getReplaceonchangesList() as string[];
  if (roc.length) o.replaceOnChanges = [...roc];
  if (req.hasRetainondelete?.()) o.retainOnDelete = req.getRetainondelete() as boolean;
  const aliases = (req.getAliasesList() as any[]).map((a): RecordedAlias => {
    if (!a.hasSpec()) return { urn: a.getUrn() as string };
    const s = a.getSpec();
    const spec: Exclude<RecordedAlias, { urn: string }> = {};
    for (const [k, v] of [
      ["name", s.getName()],
      ["type", s.getType()],
      ["stack", s.getStack()],
      ["project", s.getProject()],
      ["parentUrn", s.getParenturn()],
    ] as const)
      if (v) spec[k] = v as string;
    if (s.getNoparent()) spec.noParent = true;
    return spec;
  });
  const urns = req.getAliasurnsList() as string[];
  for (const urn of urns) aliases.push({ urn });
  if (aliases.length) o.aliases = aliases;
  return Object.keys(o).length ? o : undefined;
}

/** What aliasUrn reads of a recorded resource (a RecordedResource has it; stated here so this module imports nothing of the recorder, which imports it). */
export interface AliasedResource {
  readonly urn: string;
  readonly type: string;
  readonly name: string;
  readonly parent: string | null;
}

/**
 * The URN an alias names for resource `r`, as the engine collapses an alias spec
 * (pkg/resource/deploy/step_generator.go collapseAliasToUrn at v3.248.0, see urn.ts): unset
 * fields are the resource's own; a parent that is the root Stack, or `noParent`, means none.
 */
export function aliasUrn(r: AliasedResource, alias: RecordedAlias): string {
  if ("urn" in alias) return alias.urn;
  const parent = alias.noParent ? null : (alias.parentUrn ?? r.parent);
  const underStack = parent !== null && urnQualifiedType(parent) === ROOT_STACK_TYPE;
  return createUrn(alias.name ?? r.name, alias.type ?? r.type, underStack ? null : parent, alias.project ?? urnProject(r.urn), alias.stack ?? urnStack(r.urn));
}
