/** The explicit Skill selection of a chat message (before the turn runs). */

/** A legacy leading `@name` selection. */
const LEGACY_MENTION = /^@([a-z0-9][a-z0-9._-]{0,63})(?:\s+|$)/;

/**
 * The explicit Skill selection of a message: `mentioned_skills` names plus a legacy leading `@name`, de-duplicated
 * in order; with a leading `@name` the task text is the rest of the message (left-trimmed).
 */
export function explicitSkillSelection(
  content: string,
  mentioned: readonly { name: string }[] | undefined,
): { names: string[]; taskText: string; legacyName: string | null } {
  const names = (mentioned ?? []).map((row) => row.name.trim());
  let taskText = content;
  let legacyName: string | null = null;
  const match = LEGACY_MENTION.exec(content);
  if (match) {
    legacyName = match[1] as string;
    names.push(legacyName);
    taskText = content.slice(match[0].length).trimStart();
  }
  return { names: [...new Set(names)], taskText, legacyName };
}
