import { isCredentialName } from "./environment-policy.ts";

/**
 * What a child printed is shown to agents only after secrets are taken out, by the same rules that
 * keep credentials out of the child environment and its record: the values of variables whose
 * names look like credentials (in flameox's own environment and the child's) are replaced wherever
 * they occur, and so is the value of any `NAME=value` or `NAME: value` whose name looks like one.
 */

export const redactionMarker = "[redacted]";

/** Values shorter than this are too likely to occur by chance (a "1", a "true") to be replaced everywhere. */
const minimumSecretLength = 6;

/** `password=…`, `API_KEY: …`, `"token": "…"`: a credential-like name, then its value up to whitespace or a quote. */
const assignmentPattern = /\b([A-Za-z_][A-Za-z0-9_.-]*)(["']?\s*[=:]\s*["']?)([^\s"',;]+)/g;
const authorizationPattern = /\b(Authorization\s*:\s*(?:Bearer|Basic|Token)\s+)[A-Za-z0-9._~+/=-]+/gi;
const privateKeyPattern = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g;

/** The values to hide: every credential-like variable of the given environments, longest first. */
export function secretValues(...environments: Record<string, string | undefined>[]): string[] {
  const values = new Set<string>();
  for (const environment of environments) {
    for (const [name, value] of Object.entries(environment)) {
      if (value !== undefined && value.length >= minimumSecretLength && isCredentialName(name)) values.add(value);
    }
  }
  return [...values].sort((left, right) => right.length - left.length);
}

/** The text with every known secret value and every credential-like assignment replaced by the marker. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let redacted = text;
  for (const secret of secrets) if (redacted.includes(secret)) redacted = redacted.replaceAll(secret, redactionMarker);
  redacted = redacted.replace(privateKeyPattern, redactionMarker);
  redacted = redacted.replace(authorizationPattern, (_match, prefix: string) => `${prefix}${redactionMarker}`);
  return redacted.replace(assignmentPattern, (match, name: string, separator: string, value: string) =>
    value !== redactionMarker && isCredentialName(name) ? `${name}${separator}${redactionMarker}` : match,
  );
}
