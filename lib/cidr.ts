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
