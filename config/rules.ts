// Small schema builders whose messages read as rules ("must be an integer >= 1"), so a
// config error names the key, the rule and the value without post-processing.
import { z } from "zod";

export function integer(opts: { min?: number; max?: number } = {}) {
  const rule =
    opts.min !== undefined && opts.max !== undefined
      ? `must be an integer from ${opts.min} to ${opts.max}`
      : opts.min !== undefined
        ? `must be an integer >= ${opts.min}`
        : opts.max !== undefined
          ? `must be an integer <= ${opts.max}`
          : "must be an integer";
  let s = z.number({ error: rule }).int({ error: rule });
  if (opts.min !== undefined) s = s.min(opts.min, { error: rule });
  if (opts.max !== undefined) s = s.max(opts.max, { error: rule });
  return s;
}

export function number(opts: { min?: number; max?: number } = {}) {
  const rule =
    opts.min !== undefined && opts.max !== undefined
      ? `must be a number from ${opts.min} to ${opts.max}`
      : opts.min !== undefined
        ? `must be a number >= ${opts.min}`
        : "must be a number";
  let s = z.number({ error: rule });
  if (opts.min !== undefined) s = s.min(opts.min, { error: rule });
  if (opts.max !== undefined) s = s.max(opts.max, { error: rule });
  return s;
}

export function str(rule = "must be a non-empty string") {
  return z.string({ error: rule }).min(1, { error: rule });
}

export function pattern(re: RegExp, rule: string) {
  return z.string({ error: rule }).regex(re, { error: rule });
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  const rule = `must be one of ${values.map((v) => JSON.stringify(v)).join(", ")}`;
  return z.enum(values, { error: rule });
}

export function bool() {
  return z.boolean({ error: "must be true or false" });
}

export function list<T extends z.ZodType>(item: T, opts: { min?: number; what?: string } = {}) {
  const rule = opts.min ? `must be a list of at least ${opts.min} ${opts.what ?? "item"}(s)` : "must be a list";
  let s = z.array(item, { error: rule });
  if (opts.min) s = s.min(opts.min, { error: rule });
  return s;
}

/** An object whose unknown keys are errors: a typo must not fall back to a default. */
export function section<T extends z.ZodRawShape>(shape: T) {
  return z.strictObject(shape, { error: "must be an object (a YAML mapping)" });
}

/** Kubernetes resource names (RFC 1123 labels). */
export const dnsLabel = pattern(
  /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/,
  "must be a DNS-1123 label (lower-case letters, digits and '-', at most 63 characters)",
);

/** Kubernetes quantities such as 16Gi, 500m, 2. */
export const quantity = pattern(
  /^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$/,
  "must be a Kubernetes quantity such as 16Gi, 500m or 4",
);

/** Exact semantic version, no ranges: what is deployed must be reproducible. */
export const pinnedVersion = pattern(/^v?\d+\.\d+\.\d+$/, "must be an exact version such as 1.2.3 (no ranges, no 'latest')");
