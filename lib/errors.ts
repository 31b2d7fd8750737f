// The one error type of the codebase for bad settings: stack configuration and the arguments
// of a component used directly alike. Like pulumi-eks' InputPropertiesError it collects every
// problem before anything is created, each with its key path, its rule and the value found,
// and prints them all in one wording: `<key> <rule>, got <value>`.

/** One broken rule: where, which rule, what was found there. */
export interface SettingProblem {
  /** Full key path as the person wrote it, e.g. `triton-platform:triton.groups[0].shmSize` or `shmSize`. */
  readonly key: string;
  /** The rule, worded as a requirement ("must be an integer >= 1"). */
  readonly rule: string;
  /** The value found at the key; absent when the value is beside the point (an unknown key). */
  readonly value?: { readonly shown: string };
}

/** A value as problems show it: JSON, except that nothing and Infinity keep their names. */
export function show(value: unknown): string {
  if (value === undefined) return "nothing";
  // JSON would print Infinity (a 400-digit config value) as null.
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  return JSON.stringify(value);
}

/** The line a problem prints as. */
export function problemLine(p: SettingProblem): string {
  return p.value === undefined ? `${p.key} ${p.rule}` : `${p.key} ${p.rule}, got ${p.value.shown}`;
}

/** A key path from its segments: `a.b[2].c`, after an optional root such as `triton-platform:`. */
export function keyPath(path: readonly PropertyKey[], root = ""): string {
  let out = root;
  path.forEach((p, i) => {
    if (typeof p === "number") out += `[${p}]`;
    else out += (i === 0 ? "" : ".") + String(p);
  });
  return out;
}

export class SettingsError extends Error {
  /** Each problem as a line, in the order found (what `plan` prints). */
  readonly problems: string[];

  constructor(
    /** What was being read: "invalid stack configuration", `invalid arguments of TritonServer "main"`. */
    readonly subject: string,
    readonly details: readonly SettingProblem[],
  ) {
    const problems = details.map(problemLine);
    super(`${subject}:\n  - ${problems.join("\n  - ")}`);
    // Matched by name, not instanceof: the planner loads the program's modules afresh per stack.
    this.name = "SettingsError";
    this.problems = problems;
  }
}

/** Is `e` a SettingsError of any module instance (the planner reloads the program per stack)? */
export function isSettingsError(e: unknown): e is SettingsError {
  return e instanceof Error && e.name === "SettingsError" && Array.isArray((e as SettingsError).problems);
}
