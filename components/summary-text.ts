// How the components' summary rows write lists, ranges, shares and counts (one wording for all).
export const list = (xs: readonly string[]) => (xs.length ? xs.join(", ") : "none");
export const range = (min: number, max: number) => (min === max ? `${min}` : `${min}..${max}`);
export const pct = (p: number) => `${p} %`;
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
