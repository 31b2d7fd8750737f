// CIDR parsing shared by the config rules, the firewall builders and the policy pack:
// one definition of "a CIDR" and of "world-open", so they cannot disagree.
import { isIPv4, isIPv6 } from "node:net";

export interface Cidr {
  readonly family: 4 | 6;
  /** The address as a big integer (32 or 128 bits). */
  readonly network: bigint;
  readonly prefix: number;
  /** Canonical text as given (lower-cased). */
  readonly text: string;
}

function ipv4ToBigInt(a: string): bigint {
  return a.split(".").reduce((acc, o) => (acc << 8n) + BigInt(Number(o)), 0n);
}

function ipv6ToBigInt(a: string): bigint {
  let s = a.toLowerCase();
  // Embedded IPv4 tail (::ffff:10.0.0.1): turn it into two hextets.
  const v4 = s.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (v4) {
    const n = ipv4ToBigInt(v4[1]);
    s = s.slice(0, -v4[1].length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = s.includes("::") ? s.split("::") : [s, undefined];
  const h = head ? head.split(":") : [];
  const t = tail === undefined ? [] : tail ? tail.split(":") : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill("0"), ...t];
  return groups.reduce((acc, g) => (acc << 16n) + BigInt(parseInt(g, 16)), 0n);
}

/** Parse "a.b.c.d/n" or "x:y::/n"; undefined when it is not a CIDR. */
export function parseCidr(text: string): Cidr | undefined {
  if (typeof text !== "string") return undefined;
  const m = text.trim().match(/^([^/]+)\/(\d{1,3})$/);
  if (!m) return undefined;
  const [, addr, p] = m;
  const prefix = Number(p);
  if (isIPv4(addr)) {
    if (prefix > 32) return undefined;
    return { family: 4, network: ipv4ToBigInt(addr), prefix, text: text.trim() };
  }
  if (isIPv6(addr) && !addr.includes("%")) {
    if (prefix > 128) return undefined;
    return { family: 6, network: ipv6ToBigInt(addr), prefix, text: text.trim().toLowerCase() };
  }
  return undefined;
}

/** True when the address has bits set beyond the prefix (10.0.0.1/8): a typo more often than intent. */
export function hasHostBits(c: Cidr): boolean {
  const bits = c.family === 4 ? 32n : 128n;
  const hostBits = bits - BigInt(c.prefix);
  return hostBits > 0n && (c.network & ((1n << hostBits) - 1n)) !== 0n;
}

/** A range that admits every address of its family: any /0 (0.0.0.0/0, ::/0, and spellings like 10.0.0.0/0). */
export function isWorldOpen(text: string): boolean {
  const c = parseCidr(text);
  return c !== undefined && c.prefix === 0;
}

// ---- sets of ranges: judged by their union, not by a literal /0 ---------------------------

/** An inclusive address interval of one family. */
interface Interval {
  lo: bigint;
  hi: bigint;
}

function toInterval(c: Cidr): Interval {
  const bits = BigInt(c.family === 4 ? 32 : 128);
  const size = 1n << (bits - BigInt(c.prefix));
  const lo = (c.network >> (bits - BigInt(c.prefix))) << (bits - BigInt(c.prefix)); // host bits cleared, as AWS and Kubernetes read it
  return { lo: c.prefix === 0 ? 0n : lo, hi: (c.prefix === 0 ? 0n : lo) + size - 1n };
}

/** Merge overlapping or adjacent intervals. */
function union(xs: Interval[]): Interval[] {
  const sorted = [...xs].sort((a, b) => (a.lo < b.lo ? -1 : a.lo > b.lo ? 1 : 0));
  const out: Interval[] = [];
  for (const x of sorted) {
    const last = out[out.length - 1];
    if (last && x.lo <= last.hi + 1n) last.hi = x.hi > last.hi ? x.hi : last.hi;
    else out.push({ ...x });
  }
  return out;
}

/** `xs` minus `ys` (both merged). */
function subtract(xs: Interval[], ys: Interval[]): Interval[] {
  let cur = xs;
  for (const y of ys) {
    cur = cur.flatMap((x) => {
      if (y.hi < x.lo || y.lo > x.hi) return [x];
      const parts: Interval[] = [];
      if (y.lo > x.lo) parts.push({ lo: x.lo, hi: y.lo - 1n });
      if (y.hi < x.hi) parts.push({ lo: y.hi + 1n, hi: x.hi });
      return parts;
    });
  }
  return cur;
}

function intervalsOf(texts: readonly string[], family: 4 | 6): Interval[] {
  return union(
    texts
      .map(parseCidr)
      .filter((c): c is Cidr => c?.family === family)
      .map(toInterval),
  );
}

const size = (xs: Interval[]): bigint => xs.reduce((n, x) => n + (x.hi - x.lo + 1n), 0n);

/**
 * Addresses that are not the internet: RFC 6890 special-purpose IPv4 blocks (this network,
 * private, shared CGN, loopback, link-local, documentation, benchmarking, multicast, reserved)
 * and, for IPv6, everything outside global unicast 2000::/3.
 */
const NON_PUBLIC_V4 = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.0.2.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "198.51.100.0/24",
  "203.0.113.0/24",
  "224.0.0.0/3",
];
const PUBLIC_V4 = subtract(intervalsOf(["0.0.0.0/0"], 4), intervalsOf(NON_PUBLIC_V4, 4));
const PUBLIC_V6 = intervalsOf(["2000::/3"], 6);

/** The public (internet) addresses a set of CIDRs admits, minus `except` ranges (a NetworkPolicy ipBlock's except), per family. */
export function publicAddresses(cidrs: readonly string[], except: readonly string[] = []): { v4: bigint; v6: bigint } {
  const admitted = (family: 4 | 6, pub: Interval[]) => {
    const inPublic = subtract(pub, subtract(pub, intervalsOf(cidrs, family))); // intersection
    return size(subtract(inPublic, intervalsOf(except, family)));
  };
  return { v4: admitted(4, PUBLIC_V4), v6: admitted(6, PUBLIC_V6) };
}

/** Largest public share a set may admit before it counts as "the internet": a /8 of IPv4 (16.7 M addresses), a /16 of IPv6. */
export const INTERNET_WIDE = { v4: 1n << 24n, v6: 1n << 112n } as const;

/**
 * True when the union of `cidrs` (minus `except`) admits the internet: at least a /8's worth
 * of public IPv4 addresses or a /16's worth of global IPv6, however it is split
 * (0.0.0.0/0, 0.0.0.0/1 + 128.0.0.0/1, a list of /9s, ::/0 ...). Private ranges never count.
 */
export function coversInternet(cidrs: readonly string[], except: readonly string[] = []): boolean {
  const p = publicAddresses(cidrs, except);
  return p.v4 >= INTERNET_WIDE.v4 || p.v6 >= INTERNET_WIDE.v6;
}
