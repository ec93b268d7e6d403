/**
 * SKILL.md parsing and validation (the rules of openspec skills "SKILL.md validation", in that order, with the original server's messages), plus the Agent Skills
 * specification fields this project also accepts: `license`, `compatibility`, `metadata` (a map of
 * values kept as text) and `allowed-tools`; `version` may be any version text.
 *
 * Framework-free and synchronous: the API validates packages with it and the console editor validates drafts live.
 * The limits and messages are in `skill-md-rules.ts`, the YAML parse in `frontmatter-yaml.ts`, the checks of the
 * fields with a shape of their own in `manifest-fields.ts`; this file applies the rules in order.
 */
import { parseYaml } from './frontmatter-yaml';
import { allowedTools, isPlainMapping, metadataMap, optionalText, requirements, scalarText, stringList } from './manifest-fields';
import {
  COMPATIBILITY_MAX_CHARS,
  DISPLAY_NAME_MAX_CHARS,
  LICENSE_MAX_CHARS,
  SKILL_MD_MAX_BYTES,
  SKILL_MD_MESSAGES,
  VERSION_MAX_CHARS,
  isValidSkillName,
  type ParseSkillMarkdownOptions,
  type SkillMarkdownResult,
} from './skill-md-rules';
import { codePointCount, utf8ByteLength } from './text-length';

/** `---`, optional spaces, newline, YAML, newline, `---`, optional spaces, newline or end (CRLF accepted). */
const FRONTMATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;
const CONTROL_OR_FORMAT = /\p{C}/u;

/**
 * Validates a SKILL.md text (rules 1–15 in order, then the Agent Skills fields) and returns the
 * manifest and the body (the text after the closing delimiter, trimmed).
 */
export function parseSkillMarkdown(content: string, options: ParseSkillMarkdownOptions = {}): SkillMarkdownResult {
  const fail = (error: string): SkillMarkdownResult => ({ ok: false, error });
  if (content.trim() === '') return fail(SKILL_MD_MESSAGES.empty);
  if (utf8ByteLength(content) > SKILL_MD_MAX_BYTES) return fail(SKILL_MD_MESSAGES.tooLarge);
  const match = FRONTMATTER.exec(content);
  if (!match) return fail(SKILL_MD_MESSAGES.noFrontmatter);
  const parsed = parseYaml(match[1] ?? '');
  if (!parsed.ok) return fail(parsed.error);
  const data = parsed.value;
  if (!isPlainMapping(data)) return fail(SKILL_MD_MESSAGES.notMapping);
  const rawName = data['name'];
  const rawDescription = data['description'];
  if (typeof rawName !== 'string' || typeof rawDescription !== 'string') {
    return fail(SKILL_MD_MESSAGES.nameDescriptionStrings);
  }
  const name = rawName.trim();
  if (!isValidSkillName(name)) return fail(SKILL_MD_MESSAGES.invalidName);
  if (options.expectedName !== undefined && name !== options.expectedName) return fail(SKILL_MD_MESSAGES.nameMismatch);
  const description = rawDescription.trim();
  if (description === '') return fail(SKILL_MD_MESSAGES.emptyDescription);
  const body = content.slice(match[0].length).trim();
  if (body === '') return fail(SKILL_MD_MESSAGES.emptyBody);

  const rawVersion = data['version'];
  let version = 1;
  let versionLabel: string | null = null;
  if (rawVersion !== undefined && rawVersion !== null) {
    // integers parse as bigint (intAsBigInt); any other version (1.0.2, 2024-06, 1.5) is kept as its text
    if (typeof rawVersion === 'bigint' && rawVersion >= 1n && rawVersion <= BigInt(Number.MAX_SAFE_INTEGER)) {
      version = Number(rawVersion);
      versionLabel = String(rawVersion);
    } else {
      const text = typeof rawVersion === 'boolean' ? undefined : scalarText(rawVersion)?.trim();
      if (text === undefined || text === '' || codePointCount(text) > VERSION_MAX_CHARS || CONTROL_OR_FORMAT.test(text)) {
        return fail(SKILL_MD_MESSAGES.version);
      }
      versionLabel = text;
    }
  }
  const rawAlways = data['always'];
  if (rawAlways !== undefined && typeof rawAlways !== 'boolean') return fail(SKILL_MD_MESSAGES.always);
  const always = rawAlways === true;

  let displayName: string | null = null;
  const rawDisplayName = data['display_name'];
  if (rawDisplayName !== undefined && rawDisplayName !== null) {
    const raw = rawDisplayName;
    if (typeof raw !== 'string') return fail(SKILL_MD_MESSAGES.displayNameString);
    const text = raw.trim();
    if (text === '') return fail(SKILL_MD_MESSAGES.displayNameEmpty);
    if (codePointCount(text) > DISPLAY_NAME_MAX_CHARS) return fail(SKILL_MD_MESSAGES.displayNameLength);
    if (CONTROL_OR_FORMAT.test(text)) return fail(SKILL_MD_MESSAGES.displayNameControl);
    displayName = text;
  }

  const tags = stringList(data['tags']);
  if (tags === null) return fail(SKILL_MD_MESSAGES.stringList('tags'));
  const triggers = stringList(data['triggers']);
  if (triggers === null) return fail(SKILL_MD_MESSAGES.stringList('triggers'));
  const requires = requirements('requires', data['requires']);
  if (typeof requires === 'string') return fail(requires);
  const optional = requirements('optional', data['optional']);
  if (typeof optional === 'string') return fail(optional);

  const license = optionalText(data['license'], LICENSE_MAX_CHARS);
  if (license === false) return fail(SKILL_MD_MESSAGES.license);
  const compatibility = optionalText(data['compatibility'], COMPATIBILITY_MAX_CHARS);
  if (compatibility === false) return fail(SKILL_MD_MESSAGES.compatibility);
  const metadata = metadataMap(data['metadata']);
  if (metadata === false) return fail(SKILL_MD_MESSAGES.metadata);
  const allowed = allowedTools(data['allowed-tools']);
  if (allowed === false) return fail(SKILL_MD_MESSAGES.allowedTools);

  return {
    ok: true,
    manifest: {
      name,
      description,
      version,
      version_label: versionLabel,
      always,
      display_name: displayName,
      tags,
      triggers,
      requires,
      optional,
      license,
      compatibility,
      metadata,
      allowed_tools: allowed,
    },
    body,
  };
}
