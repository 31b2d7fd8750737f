// A small evaluator of a rendered Envoy route table, for the matches the gateway uses, with
// Envoy's semantics as documented in route_components.proto (RouteMatch, HeaderMatcher):
//   - the first route (in order) whose match holds wins; none: Envoy answers 404 (NR);
//   - prefix / path / path_separated_prefix compare the path without its query string;
//     path_separated_prefix needs the next character to be the end or '/';
//   - headers: all must match; `:path` is the full path with its query; string_match
//     exact/prefix/suffix/contains; present_match; invert_match inverts a present header's
//     result (an absent header never matches a string_match, inverted or not);
//   - grpc: {} needs content-type application/grpc[...];
//   - runtime_fraction: the route takes the request when its draw (0–100) is below the share;
//   - safe_regex is not evaluated (the gateway uses none): it throws, so a regex route fails the test.
// Paths are normalised first as the HCM does with normalize_path + merge_slashes (dot segments,
// duplicate slashes); an escaped slash (%2F, %5C) is refused (path_with_escaped_slashes_action).
import { percentOf } from "../../components/upstream/envoy";

export interface TestRequest {
  readonly method: string;
  /** Path with an optional query string. */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly grpc?: boolean;
  /** 0–100: the request's draw for runtime_fraction matches (default: above any share). */
  readonly draw?: number;
}

export interface RouteOutcome {
  /** Name of the route that took the request, or undefined when none matched (Envoy's 404). */
  readonly route?: string;
  /** Cluster the request is forwarded to, when it is. */
  readonly cluster?: string;
  /** Clusters it is mirrored to (with a non-zero share). */
  readonly mirrors: string[];
  /** The status the gateway answers itself (direct_response, no route, or a refused path). */
  readonly status?: number;
  /** Request headers as forwarded upstream (after request_headers_to_remove). */
  readonly forwarded: Record<string, string>;
}

function normalise(path: string): string | undefined {
  if (/%2f|%5c/i.test(path)) return undefined;
  const merged = path.replace(/\/{2,}/g, "/");
  const out: string[] = [];
  for (const seg of merged.split("/").slice(1)) {
    if (seg === ".") continue;
    if (seg === "..") out.pop();
    else out.push(seg);
  }
  return "/" + out.join("/");
}

function headerMatches(m: Record<string, any>, headers: Record<string, string>): boolean {
  const value = headers[String(m.name).toLowerCase()];
  if (m.present_match !== undefined) return (value !== undefined) === m.present_match;
  if (value === undefined) return false;
  const sm = m.string_match ?? {};
  let ok: boolean;
  if (sm.exact !== undefined) ok = value === sm.exact;
  else if (sm.prefix !== undefined) ok = value.startsWith(sm.prefix);
  else if (sm.suffix !== undefined) ok = value.endsWith(sm.suffix);
  else if (sm.contains !== undefined) ok = value.includes(sm.contains);
  else if (sm.safe_regex !== undefined) throw new Error(`regex header matcher on ${m.name}: not evaluated here`);
  else throw new Error(`unsupported header matcher ${JSON.stringify(m)}`);
  return m.invert_match ? !ok : ok;
}

function routeMatches(match: Record<string, any>, path: string, headers: Record<string, string>, req: TestRequest): boolean {
  if (match.safe_regex !== undefined) throw new Error("regex route match: not evaluated here (the gateway must use none)");
  if (match.path !== undefined && path !== match.path) return false;
  if (match.prefix !== undefined && !path.startsWith(match.prefix)) return false;
  if (match.path_separated_prefix !== undefined) {
    const p: string = match.path_separated_prefix;
    if (!(path === p || path.startsWith(p + "/"))) return false;
  }
  if (match.grpc !== undefined && !(headers["content-type"] ?? "").startsWith("application/grpc")) return false;
  for (const h of match.headers ?? []) if (!headerMatches(h, headers)) return false;
  if (match.runtime_fraction !== undefined && !((req.draw ?? 100) < percentOf(match.runtime_fraction.default_value))) return false;
  return true;
}

/** Where a request to this HTTP connection manager (its typed_config) goes. */
export function routeRequest(hcm: Record<string, any>, req: TestRequest): RouteOutcome {
  const [rawPath, query] = req.path.split(/\?(.*)/s, 2);
  const path = normalise(rawPath);
  const fullPath = path === undefined ? req.path : query !== undefined ? `${path}?${query}` : path;
  const headers: Record<string, string> = {
    ...Object.fromEntries(Object.entries(req.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
    ":method": req.method,
    ":path": fullPath,
    ...(req.grpc ? { "content-type": "application/grpc" } : {}),
  };
  const rc = hcm.route_config;
  const removed = new Set<string>((rc.request_headers_to_remove ?? []).map((h: string) => h.toLowerCase()));
  const forwarded = Object.fromEntries(Object.entries(headers).filter(([k]) => !removed.has(k)));
  if (path === undefined) return { status: 400, mirrors: [], forwarded };
  const vh = rc.virtual_hosts[0];
  for (const r of vh.routes ?? []) {
    if (!routeMatches(r.match ?? {}, path, headers, req)) continue;
    if (r.direct_response) return { route: r.name, status: r.direct_response.status, mirrors: [], forwarded };
    const action = r.route ?? {};
    const mirrors = (action.request_mirror_policies ?? vh.request_mirror_policies ?? [])
      .filter((m: Record<string, any>) => !m.runtime_fraction || percentOf(m.runtime_fraction.default_value) > 0)
      .map((m: Record<string, any>) => m.cluster as string);
    return { route: r.name, cluster: action.cluster, mirrors, forwarded };
  }
  return { status: 404, mirrors: [], forwarded };
}

/** The serving listener's HTTP connection manager of a parsed bootstrap. */
export function listenerHcm(bootstrap: Record<string, any>, listener: string): Record<string, any> {
  const l = bootstrap.static_resources.listeners.find((x: { name: string }) => x.name === listener);
  if (!l) throw new Error(`no listener ${listener}`);
  return l.filter_chains[0].filters[0].typed_config;
}
