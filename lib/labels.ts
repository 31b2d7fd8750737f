// Label maps, without any project fact (the upstream chart modules and the components use it).

/**
 * The labels of `labels` a chart does not set itself, for its commonLabels/customLabels value.
 * A key the chart's own label helper also writes appears twice in the rendered metadata, and
 * Helm's value wins (managed-by: Helm, part-of: the chart's name): the stack's value would be
 * a setting that does nothing. `chartOwned` comes from the chart's upstream module.
 */
export function labelsChartDoesNotOwn(labels: Readonly<Record<string, string>>, chartOwned: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).filter(([k]) => !chartOwned.includes(k)));
}
