// Warnings: what the stack accepts but a person should see before `pulumi up` (a canary older
// than its primary, say). Under the Pulumi engine a warning is a `pulumi.log.warn` (the caller
// passes it, so this file needs no SDK); under the offline planner, which collects them, it is
// listed in the plan's report. The collector sits on globalThis: the planner reloads the
// program's modules for every stack, and this module with them.

const COLLECTOR = Symbol.for("triton-platform.warnings");
type Holder = { [COLLECTOR]?: string[] };

/** Report a warning: to the planner when it collects them, else through `log` (pulumi.log.warn). */
export function warn(message: string, log: (message: string) => void): void {
  const collected = (globalThis as Holder)[COLLECTOR];
  if (collected) collected.push(message);
  else log(message);
}

/** Run `fn` with the warnings it raises collected instead of logged (the planner's side). */
export async function collectWarnings<T>(fn: () => Promise<T>): Promise<{ result: T; warnings: string[] }> {
  const holder = globalThis as Holder;
  const outer = holder[COLLECTOR];
  const warnings: string[] = [];
  holder[COLLECTOR] = warnings;
  try {
    return { result: await fn(), warnings };
  } finally {
    holder[COLLECTOR] = outer;
  }
}
