// The subset of SARIF 2.1.0 GitHub code scanning reads, and its limits, as GitHub documents them
// ("SARIF support for code scanning", docs.github.com/en/code-security/reference/code-scanning/
// sarif-files/sarif-support-for-code-scanning, and its limits table, data/reusables/code-scanning/
// sarif-limits.md in github/docs): required properties present and not empty, the documented
// value sets and lengths, and the upload's maxima. Returns each breach as a line (empty: accepted).
const LIMITS = { runs: 20, resultsPerRun: 25_000, rulesPerRun: 25_000, tagsPerRule: 20, locationsPerResult: 10, name: 255, description: 1024 };
const LEVELS = ["note", "warning", "error"];
const PRECISION = ["very-high", "high", "medium", "low"];
const PROBLEM_SEVERITY = ["error", "warning", "recommendation"];

const nonEmpty = (x: unknown) => typeof x === "string" && x.length > 0;

export function githubSarifProblems(log: any): string[] {
  const out: string[] = [];
  const need = (ok: boolean, what: string) => void (ok || out.push(what));
  need(nonEmpty(log.$schema), "sarifLog.$schema is required");
  need(log.version === "2.1.0", "sarifLog.version must be 2.1.0");
  need(Array.isArray(log.runs) && log.runs.length >= 1 && log.runs.length <= LIMITS.runs, `runs: 1..${LIMITS.runs}`);
  (log.runs ?? []).forEach((run: any, ri: number) => {
    const d = run.tool?.driver;
    need(nonEmpty(d?.name), `runs[${ri}].tool.driver.name is required`);
    need(Array.isArray(d?.rules), `runs[${ri}].tool.driver.rules[] is required`);
    need(Array.isArray(run.results), `runs[${ri}].results[] is required`);
    const rules: any[] = d?.rules ?? [];
    need(rules.length <= LIMITS.rulesPerRun, `runs[${ri}]: at most ${LIMITS.rulesPerRun} rules`);
    need(new Set(rules.map((r) => r.id)).size === rules.length, `runs[${ri}]: rule ids must be unique`);
    rules.forEach((r, i) => {
      const at = `runs[${ri}].tool.driver.rules[${i}] (${r.id})`;
      need(nonEmpty(r.id), `${at}.id is required`);
      need(r.name === undefined || (nonEmpty(r.name) && r.name.length <= LIMITS.name), `${at}.name: at most ${LIMITS.name} characters`);
      for (const k of ["shortDescription", "fullDescription"])
        need(nonEmpty(r[k]?.text) && r[k].text.length <= LIMITS.description, `${at}.${k}.text is required, at most ${LIMITS.description} characters`);
      need(nonEmpty(r.help?.text), `${at}.help.text is required`);
      need(r.help?.markdown === undefined || nonEmpty(r.help.markdown), `${at}.help.markdown must not be empty`);
      const level = r.defaultConfiguration?.level;
      need(level === undefined || LEVELS.includes(level), `${at}.defaultConfiguration.level must be one of ${LEVELS.join(", ")}`);
      const p = r.properties ?? {};
      need(
        p.tags === undefined || (Array.isArray(p.tags) && p.tags.length <= LIMITS.tagsPerRule && p.tags.every(nonEmpty)),
        `${at}.properties.tags: ≤ ${LIMITS.tagsPerRule} strings`,
      );
      need(p.precision === undefined || PRECISION.includes(p.precision), `${at}.properties.precision must be one of ${PRECISION.join(", ")}`);
      need(p["problem.severity"] === undefined || PROBLEM_SEVERITY.includes(p["problem.severity"]), `${at}.properties.problem.severity`);
      const sev = p["security-severity"];
      need(
        sev === undefined || (typeof sev === "string" && /^\d+(\.\d+)?$/.test(sev) && Number(sev) > 0 && Number(sev) <= 10),
        `${at}.properties.security-severity must be a string score in (0.0, 10.0]`,
      );
      need(sev === undefined || (p.tags ?? []).includes("security"), `${at}: a security-severity belongs to a rule tagged security`);
    });
    const results: any[] = run.results ?? [];
    need(results.length <= LIMITS.resultsPerRun, `runs[${ri}]: at most ${LIMITS.resultsPerRun} results`);
    results.forEach((r, i) => {
      const at = `runs[${ri}].results[${i}] (${r.ruleId})`;
      need(nonEmpty(r.message?.text), `${at}.message.text is required`);
      need(r.ruleId === undefined || rules.some((x) => x.id === r.ruleId), `${at}.ruleId names no rule of the driver`);
      need(r.ruleIndex === undefined || rules[r.ruleIndex]?.id === r.ruleId, `${at}.ruleIndex must point at its rule`);
      need(r.level === undefined || [...LEVELS, "none"].includes(r.level), `${at}.level`);
      need(
        Array.isArray(r.locations) && r.locations.length >= 1 && r.locations.length <= LIMITS.locationsPerResult,
        `${at}.locations: 1..${LIMITS.locationsPerResult}`,
      );
      for (const l of r.locations ?? []) {
        const pl = l.physicalLocation;
        need(nonEmpty(pl?.artifactLocation?.uri), `${at}: physicalLocation.artifactLocation.uri is required`);
        need(!/^[a-z]+:\/\//i.test(pl?.artifactLocation?.uri ?? ""), `${at}: the uri should be relative to the repository root`);
        for (const k of ["startLine", "startColumn", "endLine", "endColumn"])
          need(Number.isInteger(pl?.region?.[k]) && pl.region[k] >= 1, `${at}: physicalLocation.region.${k} is required (≥ 1)`);
        if (pl?.region)
          need(
            pl.region.endLine > pl.region.startLine || (pl.region.endLine === pl.region.startLine && pl.region.endColumn > pl.region.startColumn),
            `${at}: the region must end after it starts`,
          );
      }
      // "Code scanning only uses the primaryLocationLineHash" (in the form upload-sarif writes: hex:occurrence).
      need(/^[0-9a-f]{1,16}:\d+$/.test(r.partialFingerprints?.primaryLocationLineHash ?? ""), `${at}.partialFingerprints.primaryLocationLineHash is required`);
    });
  });
  return out;
}
