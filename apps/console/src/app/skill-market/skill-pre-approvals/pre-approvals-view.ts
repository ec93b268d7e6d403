import type { SkillPreApprovalItem, SkillPreApprovals, SkillRecord } from '@cashcode/contracts';
import type { MessageKey } from '../../core/i18n/i18n';

/** The message key and parameters that say what one allowed-tools entry would pre-approve (openspec console). */
export function preApprovalItemText(item: SkillPreApprovalItem): { key: MessageKey; params: Record<string, string> } {
  const params = { value: item.value, server: item.server ?? '', entry: item.entry };
  switch (item.kind) {
    case 'any_command':
      return { key: 'skills.pre.item.any_command', params };
    case 'command_prefix':
      return { key: item.broad ? 'skills.pre.item.command_prefix_broad' : 'skills.pre.item.command_prefix', params };
    case 'exact_command':
      return { key: 'skills.pre.item.exact_command', params };
    case 'tool':
      return { key: 'skills.pre.item.tool', params };
    case 'mcp_server':
      return { key: 'skills.pre.item.mcp_server', params };
    case 'mcp_tool':
      return { key: 'skills.pre.item.mcp_tool', params };
    default:
      return { key: 'skills.pre.item.ignored', params };
  }
}

/** Whether a Skill asks for pre-approvals the owner has not granted (agent-written, changed or imported before). */
export function awaitingApproval(pre: SkillPreApprovals | null | undefined): boolean {
  return !!pre && pre.requested.length > 0 && !pre.granted;
}

/** The imported Skills whose pre-approvals the import dialog asks about. */
export function importedAwaitingApproval(records: readonly SkillRecord[]): SkillRecord[] {
  return records.filter((record) => awaitingApproval(record.pre_approvals));
}
