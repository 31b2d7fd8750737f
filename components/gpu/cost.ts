// The monthly on-demand cost of a stack's GPU capacity at its minimum and its maximum: the GPU
// node group's node counts (gpu.scaling.min / max) × the on-demand price of its instance type in
// the stack's region (components/upstream/ec2-prices.ts) × 730 hours. Pure: plain data in, plain
// data out; the planner prints it in each stack's summary and as a delta against the base.
//
// Which instance type is priced: an EKS managed node group fills On-Demand capacity in the order
// of its instance types ("Managed node groups use the order of instance types passed in the API
// to determine which instance type to use first when fulfilling On-Demand capacity", EKS user
// guide, managed-node-groups, as quoted in cloudposse/terraform-aws-eks-node-group#135; the ASG's
// `prioritized` On-Demand allocation strategy). So the cost is the FIRST of gpu.instanceTypes;
// with several, the range from the cheapest to the dearest type is given beside it (what the bill
// is when the first is short of capacity and the group launches the others).
//
// Only what is asked: the GPU nodes' instance-hours. What it leaves out is COST_EXCLUDES, printed
// with every cost.
import { EC2_PRICES_SOURCE, HOURS_PER_MONTH, onDemandHourlyUsd } from "../upstream/ec2-prices";

/** What the estimate reads of a stack: its region and the GPU node group's types and node counts. */
export interface CostInput {
  readonly region: string;
  readonly gpu: {
    readonly instanceTypes: readonly string[];
    readonly scaling: { readonly min: number; readonly max: number };
  };
}

export interface Range {
  readonly min: number;
  readonly max: number;
}

/** One instance type's price in the region; both undefined when the table has none ("price unknown"). */
export interface InstancePrice {
  readonly type: string;
  readonly hourlyUsd?: number;
  readonly monthlyUsd?: number;
}

export interface NodeGroupCost {
  readonly name: string;
  readonly nodes: Range;
  /** Every instance type in gpu.instanceTypes order, with its price. */
  readonly prices: readonly InstancePrice[];
  /** The type priced: the first of gpu.instanceTypes (the group launches it first). */
  readonly priced: InstancePrice;
  /** USD per month at the minimum and maximum node count with the priced type; absent when its price is unknown. */
  readonly monthlyUsd?: Range;
  /**
   * With more than one instance type: USD per month at min and max nodes if every node were the cheapest or the
   * dearest priced type (types without a price are left out of it; see unpriced).
   */
  readonly spread?: { readonly cheapest: string; readonly dearest: string; readonly low: Range; readonly high: Range };
  /** Instance types without a price in the region. */
  readonly unpriced: readonly string[];
}

export interface StackCost {
  readonly region: string;
  readonly hoursPerMonth: number;
  readonly nodeGroups: readonly NodeGroupCost[];
  /** The stack's total at minimum and maximum; absent when a node group's priced type has no price. */
  readonly monthlyUsd?: Range;
  readonly source: typeof EC2_PRICES_SOURCE;
}

/** What the cost is not: said beside every cost the planner prints. */
export const COST_EXCLUDES = [
  "EBS volumes",
  "data transfer",
  "the load balancer",
  "S3/EFS",
  "the EKS control plane and other nodes",
  "Savings Plans, RIs, Spot",
  "tax",
] as const;

/** The one GPU node group of the `gpu` section (the capacity plan's name for it). */
const NODE_GROUP = "gpu";

const price = (type: string, region: string): InstancePrice => {
  const hourlyUsd = onDemandHourlyUsd(type, region);
  return hourlyUsd === undefined ? { type } : { type, hourlyUsd, monthlyUsd: hourlyUsd * HOURS_PER_MONTH };
};

const times = (nodes: Range, monthly: number): Range => ({ min: nodes.min * monthly, max: nodes.max * monthly });

function nodeGroupCost(cfg: CostInput): NodeGroupCost {
  const nodes = { min: cfg.gpu.scaling.min, max: cfg.gpu.scaling.max };
  const prices = cfg.gpu.instanceTypes.map((t) => price(t, cfg.region));
  const priced = prices[0] ?? { type: "(none)" };
  const known = prices.filter((p): p is Required<InstancePrice> => p.monthlyUsd !== undefined);
  let spread: NodeGroupCost["spread"];
  if (prices.length > 1 && known.length > 0) {
    const cheapest = known.reduce((a, p) => (p.monthlyUsd < a.monthlyUsd ? p : a));
    const dearest = known.reduce((a, p) => (p.monthlyUsd > a.monthlyUsd ? p : a));
    spread = { cheapest: cheapest.type, dearest: dearest.type, low: times(nodes, cheapest.monthlyUsd), high: times(nodes, dearest.monthlyUsd) };
  }
  return {
    name: NODE_GROUP,
    nodes,
    prices,
    priced,
    ...(priced.monthlyUsd !== undefined ? { monthlyUsd: times(nodes, priced.monthlyUsd) } : {}),
    ...(spread ? { spread } : {}),
    unpriced: prices.filter((p) => p.monthlyUsd === undefined).map((p) => p.type),
  };
}

/** The monthly on-demand cost of the stack's GPU nodes at its minimum and maximum. */
export function stackCost(cfg: CostInput): StackCost {
  const nodeGroups = [nodeGroupCost(cfg)];
  const all = nodeGroups.every((n) => n.monthlyUsd !== undefined);
  const sum = (k: "min" | "max") => nodeGroups.reduce((a, n) => a + (n.monthlyUsd?.[k] ?? 0), 0);
  return {
    region: cfg.region,
    hoursPerMonth: HOURS_PER_MONTH,
    nodeGroups,
    ...(all ? { monthlyUsd: { min: sum("min"), max: sum("max") } } : {}),
    source: EC2_PRICES_SOURCE,
  };
}

/**
 * The cost input of a stack file's `config:` values as written (`aws:region`, `<project>:gpu`), or
 * undefined when they do not have that shape. For the base revision of a diff: its cost comes from
 * its stack file with the current price table, whatever the base's own modules are (none of the
 * keys read has a default).
 */
export function costInputOfValues(values: Readonly<Record<string, unknown>>, project: string): CostInput | undefined {
  const region = values["aws:region"];
  const gpu = values[`${project}:gpu`] as { instanceTypes?: unknown; scaling?: { min?: unknown; max?: unknown } } | undefined;
  const types = gpu?.instanceTypes;
  const min = gpu?.scaling?.min;
  const max = gpu?.scaling?.max;
  if (typeof region !== "string" || !Array.isArray(types) || !types.every((t) => typeof t === "string")) return undefined;
  if (typeof min !== "number" || typeof max !== "number") return undefined;
  return { region, gpu: { instanceTypes: types, scaling: { min, max } } };
}

// ---- wording -----------------------------------------------------------------------------
/** Whole dollars with thousands separators: $1,234. */
export function usd(n: number): string {
  // By hand rather than toLocaleString: the first Intl call of a process costs ~15 ms, on every plan.
  const whole = Math.round(Math.abs(n))
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${n < 0 && Math.round(n) !== 0 ? "-" : ""}$${whole}`;
}

/** A range of dollars: $3,864 when both ends round alike, else $3,864..$9,659. */
export function usdRange(r: Range): string {
  return usd(r.min) === usd(r.max) ? usd(r.min) : `${usd(r.min)}..${usd(r.max)}`;
}

/** A signed dollar amount for a delta: +$1,234, -$300, $0. */
export function signedUsd(n: number): string {
  const r = Math.round(n);
  if (r === 0) return "$0";
  return `${r > 0 ? "+" : "-"}${usd(Math.abs(r))}`;
}

/** The change of a stack's GPU cost against its base, at minimum and maximum (undefined where a side has no price). */
export interface CostDelta {
  readonly base?: Range;
  readonly head?: Range;
  readonly min?: number;
  readonly max?: number;
}

export function costDelta(base: StackCost | undefined, head: StackCost | undefined): CostDelta {
  const b = base?.monthlyUsd;
  const h = head?.monthlyUsd;
  return {
    ...(b ? { base: b } : {}),
    ...(h ? { head: h } : {}),
    ...(b && h ? { min: h.min - b.min, max: h.max - b.max } : {}),
  };
}

/**
 * One line for the pull-request diff: "+$1,234/month at minimum, +$3,702/month at maximum
 * ($2,630 → $3,864 .. $5,791 → $9,659)"; "no change" when both ends round to $0; what is unknown otherwise.
 */
export function formatCostDelta(d: CostDelta, opts: { newStack?: boolean } = {}): string {
  if (opts.newStack)
    return d.head ? `${signedUsd(d.head.min)}/month at minimum, ${signedUsd(d.head.max)}/month at maximum (new stack)` : "new stack, price unknown";
  if (d.min === undefined || d.max === undefined || !d.base || !d.head) {
    const side = !d.base && !d.head ? "base and head" : !d.base ? "base" : "head";
    return `price unknown on the ${side}${d.head ? ` (now ${usdRange(d.head)}/month)` : ""}`;
  }
  if (Math.round(d.min) === 0 && Math.round(d.max) === 0) return `no change (${usdRange(d.head)}/month)`;
  return (
    `${signedUsd(d.min)}/month at minimum, ${signedUsd(d.max)}/month at maximum ` +
    `(${usd(d.base.min)} → ${usd(d.head.min)} at minimum, ${usd(d.base.max)} → ${usd(d.head.max)} at maximum)`
  );
}
