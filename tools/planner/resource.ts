// What the planner records of one registration: a module of types only, so the report, the
// project tie and the recorder can all name it without importing one another (no import cycle).
import type { RecordedOptions } from "./options";

export interface RecordedResource {
  urn: string;
  type: string;
  name: string;
  custom: boolean;
  parent: string | null;
  provider: string | null;
  dependencies: string[];
  props: Record<string, any>;
  /** The resource options the engine receives that change what `pulumi up` does; absent when none is set. */
  options?: RecordedOptions;
}
