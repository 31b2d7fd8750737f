// Kubernetes quantities as numbers, for cross-field rules (e.g. /dev/shm vs the memory limit).
const SUFFIX: Record<string, number> = {
  "": 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A Kubernetes quantity as this project accepts it: a decimal number and an optional suffix. */
export const QUANTITY = /^([0-9]+(?:\.[0-9]+)?)(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$/;

/** The value of a quantity such as 16Gi, 500m or 4 (bytes for memory, cores for CPU); NaN if malformed. */
export function quantityValue(q: string): number {
  const m = QUANTITY.exec(q);
  if (!m) return NaN;
  return Number(m[1]) * SUFFIX[m[2] ?? ""];
}
