import type { McpImportResponse } from '@cashcode/contracts';

/**
 * The pasted or uploaded client configuration (openspec mcp "Requirement: Import of client configurations"): the
 * parsed object, or null when the text is not a JSON object.
 */
export function parseImportText(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** One line per outcome: the created names, then each skipped server with its reason. */
export function importSummary(
  result: McpImportResponse,
  t: (key: 'mcp.import.created' | 'mcp.import.skipped' | 'mcp.import.nothing', params?: Record<string, string>) => string,
): string[] {
  const lines: string[] = [];
  if (result.created.length > 0) lines.push(t('mcp.import.created', { names: result.created.map((s) => s.name).join(', ') }));
  else lines.push(t('mcp.import.nothing'));
  for (const skipped of result.skipped) lines.push(t('mcp.import.skipped', { name: skipped.name, detail: skipped.detail }));
  return lines;
}
