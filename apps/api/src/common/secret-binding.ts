/**
 * Where a stored secret may be sent. A secret the user entered (an LLM API key, an MCP header value) is bound to the
 * place it was entered for; a later edit that keeps the secret without re-entering it may only keep it while the
 * binding is unchanged. For network secrets the binding is the origin of the URL (scheme, host, port); stdio `env`
 * values can use the same rule with the command as their binding.
 *
 * A binding is a plain string compared for equality; `null` means "bound to nothing" and never matches, so a secret
 * stored without a place cannot be moved anywhere without being entered again. When two spellings cannot be proven
 * to be the same place they count as different: the cost is entering a secret again, never sending it elsewhere.
 */

/** An opaque binding key: equal keys mean the secret may follow. */
export type SecretBinding = string;

/**
 * The normalised origin of an http(s) URL as a binding, or null when the text is not an absolute http(s) URL with a
 * host. The URL is parsed exactly as the HTTP clients parse it (WHATWG URL), so scheme and host case, default ports,
 * IPv4 spellings (`127.1`, `0x7f.0.0.1`, a trailing dot) and IPv6 forms (`[0:0::1]` → `[::1]`) collapse to one
 * origin; userinfo, path, query and fragment are not part of it. A single trailing dot of a domain name is dropped
 * (`localhost.` and `localhost` name the same host).
 */
export function urlSecretBinding(raw: string): SecretBinding | null {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  let host = url.hostname;
  if (host === '') return null;
  if (!host.startsWith('[') && host.endsWith('.') && host.length > 1) host = host.slice(0, -1);
  return `${url.protocol}//${host}${url.port === '' ? '' : `:${url.port}`}`;
}

/**
 * The binding of a stdio server's `env` secrets: the exact command and arguments (any change, even of spelling, means
 * another program may receive them). Null for an empty command.
 */
export function commandSecretBinding(command: string, args: readonly string[]): SecretBinding | null {
  const trimmed = command.trim();
  if (trimmed === '') return null;
  return `stdio:${JSON.stringify([trimmed, ...args])}`;
}

/** Whether a stored secret bound to `stored` may be used for `target` without being entered again. */
export function secretMayFollow(stored: SecretBinding | null, target: SecretBinding | null): boolean {
  return stored !== null && target !== null && stored === target;
}

/** Whether two URLs have the same secret binding (both must be http(s) URLs). */
export function sameSecretOrigin(a: string, b: string): boolean {
  return secretMayFollow(urlSecretBinding(a), urlSecretBinding(b));
}
