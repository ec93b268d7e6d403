/**
 * Chat export (openspec sessions "Requirement: Export"): the public message projection as Markdown or as a JSON
 * document. Pure functions; the service reads the records.
 */
import type { PublicMessage, SessionExportJson } from '@cashcode/contracts';

/** A title on one line: every run of whitespace (newlines included) becomes one space. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export function sessionExportJson(
  chatId: string,
  title: string,
  messages: PublicMessage[],
  now: Date,
): SessionExportJson {
  return { format: 'cashcode.session-export', version: 1, chat_id: chatId, title, exported_at: now.toISOString(), messages };
}

/**
 * `# <title>`, a line naming the chat and the export time, then one `## User` / `## Assistant` section per message
 * with its content as written (it is Markdown already); a stopped answer ends with `_(stopped)_`.
 */
export function sessionExportMarkdown(chatId: string, title: string, messages: PublicMessage[], now: Date): string {
  const parts = [`# ${oneLine(title)}`, `_Chat \`${chatId}\`, exported from CashCode on ${now.toISOString()}._`];
  for (const message of messages) {
    parts.push(message.role === 'user' ? '## User' : '## Assistant');
    const skills = [...(message.mentioned_skills ?? []), ...(message.loaded_skills ?? [])].map((skill) => skill.name);
    if (skills.length > 0) parts.push(`_Skills: ${[...new Set(skills)].join(', ')}_`);
    const connectors = (message.selected_mcp_connectors ?? []).map((connector) => connector.server);
    if (connectors.length > 0) parts.push(`_Connectors: ${connectors.join(', ')}_`);
    parts.push(message.content.trimEnd() === '' ? '_(empty)_' : message.content.trimEnd());
    if (message.cancelled === true) parts.push('_(stopped)_');
  }
  return `${parts.join('\n\n')}\n`;
}

/** `attachment; filename="<chat_id>.<ext>"`: chat ids are `[A-Za-z0-9_:-]`, so the name needs no escaping. */
export function exportContentDisposition(chatId: string, extension: 'md' | 'json'): string {
  return `attachment; filename="cashcode-${chatId.replace(/:/g, '_')}.${extension}"`;
}
