// An exact release version (1.2.3 or v1.2.3): no ranges, no `latest`. Shared by the config
// schema, the components that check their chart versions and the policy pack, without the
// schema library (the pack loads none).
export const EXACT_VERSION = /^v?\d+\.\d+\.\d+$/;
