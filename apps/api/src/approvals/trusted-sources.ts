/**
 * The owner's per-source relax policy (openspec memory "Requirement: Trusted sources"): content from a source the owner
 * trusts — their own MCP server, a web domain, a Skill's resource files — no longer counts as untrusted for the asks of
 * memory, Skill and automation writes. Pure: matching and validation. The sources are still recorded in the provenance
 * log and still framed for the model; only the ask is relaxed.
 */
import {
  isRecord,
  MCP_SERVER_NAME_PATTERN,
  TRUSTED_SOURCE_KINDS,
  type TrustedSource,
  type TrustedSourceKind,
  type UntrustedSource,
} from '@cashcode/contracts';

export const MAX_TRUSTED_SOURCES = 200;
/** a host name (lowercase labels) or an IPv4 address */
export const DOMAIN_PATTERN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
export const SKILL_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;

const NAME_PATTERNS: Readonly<Record<TrustedSourceKind, RegExp>> = {
  mcp_server: MCP_SERVER_NAME_PATTERN,
  domain: DOMAIN_PATTERN,
  skill: SKILL_NAME_PATTERN,
};

/** A valid trusted source (kind known, name of the kind's form), or null. */
export function parseTrustedSource(value: unknown): TrustedSource | null {
  if (!isRecord(value)) return null;
  const kind = value['kind'];
  const name = value['name'];
  if (!(TRUSTED_SOURCE_KINDS as readonly unknown[]).includes(kind) || typeof name !== 'string') return null;
  return NAME_PATTERNS[kind as TrustedSourceKind].test(name) ? { kind: kind as TrustedSourceKind, name } : null;
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/** Whether one of the owner's trusted sources covers the untrusted source. */
export function isTrustedBy(source: UntrustedSource, trusted: readonly TrustedSource[]): boolean {
  return trusted.some((rule) => {
    switch (rule.kind) {
      case 'mcp_server':
        return (
          (source.kind === 'mcp_tool' && source.name.startsWith(`${rule.name}/`)) ||
          (source.kind === 'mcp_resource' && source.name.startsWith(`${rule.name} `))
        );
      case 'domain': {
        if (source.kind !== 'web_fetch') return false;
        const host = hostOf(source.name);
        return host !== null && (host === rule.name || host.endsWith(`.${rule.name}`));
      }
      case 'skill':
        return source.kind === 'skill_resource' && source.name.startsWith(`${rule.name}/`);
    }
  });
}

/**
 * The reusable check of every owner-gated write (memory, Skills, automations): of the untrusted sources in a turn's
 * context, those that still count — the ones no trusted source covers. Empty: the write needs no ask.
 */
export function untrustedSourcesThatCount(
  sources: readonly UntrustedSource[] | undefined,
  trusted: readonly TrustedSource[],
): UntrustedSource[] {
  return (sources ?? []).filter((source) => !isTrustedBy(source, trusted)).map((source) => ({ ...source }));
}
