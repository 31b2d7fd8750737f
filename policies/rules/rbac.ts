// Rules about what the serving workloads' ServiceAccounts may do in the Kubernetes API: nothing
// broad (cluster-admin, admin, edit, wildcard rules) and no Secret reads.
import type { PolicyResource } from "@pulumi/policy";
import { metadataOf } from "./props";
import { stackRule, type Finding, type Rule } from "./rule";
import { isK8sObject, namespaceOf, objectNameOf, privilegedNamespacesSchema, show, type PrivilegedNamespacesConfig } from "./util";

const BROAD_ROLES = ["cluster-admin", "admin", "edit"];
const READ_VERBS = ["get", "list", "watch", "*"];
const kindOf = (r: Pick<PolicyResource, "props">): string | undefined => (r.props as { kind?: string }).kind;
type PolicyRule = { apiGroups?: string[]; resources?: string[]; verbs?: string[]; nonResourceURLs?: string[] };
type Subject = { kind?: string; name?: string; namespace?: string };

/** Why a role's rules are too broad for a serving account, or undefined. */
function broadRule(rules: readonly PolicyRule[] | undefined): { i: number; why: string } | undefined {
  for (const [i, rule] of (rules ?? []).entries()) {
    const verbs = rule.verbs ?? [];
    const resources = rule.resources ?? [];
    const groups = rule.apiGroups ?? [];
    if (verbs.includes("*")) return { i, why: "verbs has *" };
    if (resources.includes("*")) return { i, why: "resources has *" };
    if ((rule.nonResourceURLs ?? []).includes("*")) return { i, why: "nonResourceURLs has *" };
    if (
      (groups.includes("") || groups.includes("*")) &&
      resources.some((r) => r === "secrets" || r.startsWith("secrets/")) &&
      verbs.some((v) => READ_VERBS.includes(v))
    )
      return { i, why: `grants ${verbs.join(", ")} on secrets` };
  }
  return undefined;
}

export const rbacServingAccountsLeastPrivilege = stackRule<PrivilegedNamespacesConfig>({
  name: "rbac-serving-accounts-least-privilege",
  domain: "rbac",
  description:
    "No RoleBinding or ClusterRoleBinding gives a ServiceAccount of a serving namespace (any namespace outside the privileged ones, or all " +
    "ServiceAccounts through the system:serviceaccounts groups) cluster-admin, admin or edit, a role with wildcard verbs/resources, or Secret reads.",
  prevents: "A compromised model server or gateway reading every Secret, or taking over the cluster, through its pod's ServiceAccount.",
  remediationSteps:
    "Bind serving ServiceAccounts to nothing (they need no Kubernetes API access), or to a Role naming exact resources and verbs, never secrets.",
  configSchema: { properties: { ...privilegedNamespacesSchema } },
  check: (resources, { privilegedNamespaces }) => {
    const roles = new Map<string, PolicyRule[] | undefined>();
    for (const r of resources) {
      const kind = kindOf(r);
      if (!isK8sObject(r.type, r.props) || (kind !== "Role" && kind !== "ClusterRole")) continue;
      const key = kind === "Role" ? `Role/${namespaceOf(r)}/${objectNameOf(r)}` : `ClusterRole/${objectNameOf(r)}`;
      roles.set(key, (r.props as { rules?: PolicyRule[] }).rules);
    }
    const serving = (s: Subject, bindingNs: string): boolean => {
      if (s.kind === "ServiceAccount") return !privilegedNamespaces.includes(s.namespace ?? bindingNs);
      if (s.kind === "Group")
        return (
          s.name === "system:serviceaccounts" ||
          (s.name?.startsWith("system:serviceaccounts:") === true && !privilegedNamespaces.includes(s.name.split(":")[2]))
        );
      return false;
    };
    const out: Finding[] = [];
    for (const b of resources) {
      const kind = kindOf(b);
      if (!isK8sObject(b.type, b.props) || (kind !== "RoleBinding" && kind !== "ClusterRoleBinding")) continue;
      const props = b.props as { subjects?: Subject[]; roleRef?: { kind?: string; name?: string } };
      const ns = namespaceOf(b);
      const subjects = (props.subjects ?? []).filter((s) => serving(s, ns));
      if (subjects.length === 0) continue;
      const ref = props.roleRef ?? {};
      const where = `${kind} ${kind === "RoleBinding" ? `${ns}/` : ""}${metadataOf(b).name ?? b.name}`;
      const who = subjects.map((s) => `${s.kind} ${s.namespace ? `${s.namespace}/` : ""}${s.name}`).join(", ");
      if (ref.kind === "ClusterRole" && BROAD_ROLES.includes(ref.name ?? "")) {
        out.push({ path: "roleRef.name", value: ref.name, message: `${where}: roleRef.name is ${show(ref.name)} for ${who}`, urn: b.urn });
        continue;
      }
      const rules = roles.get(ref.kind === "Role" ? `Role/${ns}/${ref.name}` : `ClusterRole/${ref.name}`);
      const broad = broadRule(rules);
      if (broad)
        out.push({
          path: "roleRef",
          value: ref,
          message: `${where}: roleRef ${show(ref)} (rules[${broad.i}] ${broad.why}) is bound to ${who}`,
          urn: b.urn,
        });
    }
    return out;
  },
});

/** The rules of this domain, in the order the pack serves them (every Rule this file exports: test/policy-layout.test.ts). */
export const rules: readonly Rule[] = [rbacServingAccountsLeastPrivilege];
