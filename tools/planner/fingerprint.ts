// Fingerprints of secret values: enough to tell "this secret changed" between two plans,
// never enough to learn the secret.
//
// HMAC-SHA256 under a key drawn at random once per process. Both plans of one
// `npm run plan -- --base …` run share the key, so equal secrets give equal fingerprints;
// the key is never written anywhere, so a fingerprint that leaked (a log, an artifact)
// cannot be used to test guesses of a low-entropy secret offline, and fingerprints from
// two runs cannot be compared. Fingerprints live in memory only: resources.json keeps MASK.
import { createHmac, randomBytes } from "node:crypto";

const KEY = randomBytes(32);

/** A short, per-process fingerprint of any JSON-able value. */
export function fingerprint(value: unknown): string {
  return createHmac("sha256", KEY)
    .update(JSON.stringify(value) ?? "undefined")
    .digest("hex")
    .slice(0, 16);
}
