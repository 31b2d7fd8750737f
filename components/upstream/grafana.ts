// Grafana dashboard JSON model (the subset this stack writes): field names as Grafana's
// dashboard JSON model documents them, spelled once.

export const GRAFANA_DASHBOARD_SCHEMA_VERSION = 39;

/** Grafana unit ids used by the dashboards. "mbytes" is MiB (DCGM framebuffer is in MiB). */
export type GrafanaUnit = "reqps" | "ops" | "short" | "µs" | "percent" | "percentunit" | "mbytes" | "celsius" | "watt" | "none";

export interface PanelTarget {
  readonly refId: string;
  readonly expr: string;
  readonly legendFormat: string;
}

export interface Panel {
  readonly id: number;
  readonly type: "timeseries" | "stat";
  readonly title: string;
  readonly description?: string;
  readonly gridPos: { x: number; y: number; w: number; h: number };
  readonly datasource: { type: "prometheus"; uid: string };
  readonly fieldConfig: { defaults: { unit: GrafanaUnit }; overrides: unknown[] };
  readonly targets: PanelTarget[];
}

export interface TemplateVariable {
  readonly name: string;
  readonly label: string;
  readonly type: "datasource" | "query";
  readonly query: string | { query: string; refId: string };
  readonly datasource?: { type: "prometheus"; uid: string };
  readonly includeAll?: boolean;
  readonly multi?: boolean;
  readonly allValue?: string;
  readonly refresh?: 1 | 2;
  readonly current?: Record<string, unknown>;
}

export interface Dashboard {
  readonly uid: string;
  readonly title: string;
  readonly tags: string[];
  readonly timezone: "utc" | "browser";
  readonly editable: boolean;
  readonly schemaVersion: number;
  readonly refresh: string;
  readonly time: { from: string; to: string };
  readonly templating: { list: TemplateVariable[] };
  readonly panels: Panel[];
}

/** The datasource variable every panel refers to (the chart provisions a Prometheus datasource). */
export const DATASOURCE_VARIABLE = "datasource";
export const PANEL_DATASOURCE = { type: "prometheus", uid: `\${${DATASOURCE_VARIABLE}}` } as const;
/** Grafana's interval macro for rate() windows (at least four scrape intervals). */
export const RATE_INTERVAL = "$__rate_interval";
