import { Injectable, inject } from '@angular/core';

import { I18n, interpolate, type MessageParams } from '../core/i18n/i18n';

/** The Evolution view's strings (English and Simplified Chinese), kept with the feature. */
export const EVOLUTION_EN = {
  title: 'Skill evolution',
  subtitle: 'Skills the agent proposes from work you repeat. Nothing changes until you approve.',
  refresh: 'Refresh',
  disabled:
    'Evidence collection is off. Start the server with SKILL_EVOLUTION_ENABLED=true to get proposals; existing proposals can still be reviewed.',
  loadFailed: 'Could not load the proposals: {detail}',
  empty: 'No proposals yet',
  emptyHint: 'When the same tool workflow succeeds a few times, a proposed Skill appears here for review.',
  'action.create': 'New Skill',
  'action.update': 'Update',
  'status.pending': 'Pending',
  'status.applied': 'Applied',
  'status.rejected': 'Rejected',
  review: 'Review',
  hide: 'Hide',
  loadingDetail: 'Loading the proposal…',
  detailFailed: 'Could not load the proposal: {detail}',
  valid: 'Valid SKILL.md',
  invalid: 'Invalid SKILL.md',
  candidate: 'Proposed SKILL.md',
  diff: 'Changes against the current Skill',
  noChanges: 'The candidate is identical to the current Skill.',
  evidence: 'Evidence ({n})',
  evidenceGone: 'The evidence records were deleted since (only the newest are kept).',
  request: 'Request',
  answer: 'Answer',
  tools: 'Tools',
  stale: 'The Skill changed since this proposal was made, so approving it will be refused.',
  approve: 'Approve',
  reject: 'Reject',
  working: 'Working…',
  appliedCreate: 'Created as version {version}',
  appliedUpdate: 'Applied; the previous version is kept as snapshot {version}',
  model: 'Proposed by {model}',
  approved: 'Skill {name} saved as an agent Skill',
  rejected: 'Proposal rejected',
};

export type EvolutionTextKey = keyof typeof EVOLUTION_EN;

export const EVOLUTION_ZH_CN: Record<EvolutionTextKey, string> = {
  title: '技能进化',
  subtitle: '智能体根据你反复进行的工作提出的技能。在你批准之前不会有任何改动。',
  refresh: '刷新',
  disabled: '证据收集未开启。使用 SKILL_EVOLUTION_ENABLED=true 启动服务即可获得提案；已有提案仍可审阅。',
  loadFailed: '无法加载提案：{detail}',
  empty: '还没有提案',
  emptyHint: '当同一工具流程多次成功后，这里会出现一个待审阅的技能提案。',
  'action.create': '新技能',
  'action.update': '更新',
  'status.pending': '待审阅',
  'status.applied': '已应用',
  'status.rejected': '已拒绝',
  review: '审阅',
  hide: '收起',
  loadingDetail: '正在加载提案…',
  detailFailed: '无法加载提案：{detail}',
  valid: 'SKILL.md 有效',
  invalid: 'SKILL.md 无效',
  candidate: '提议的 SKILL.md',
  diff: '与当前技能的差异',
  noChanges: '候选内容与当前技能完全相同。',
  evidence: '证据（{n}）',
  evidenceGone: '这些证据记录已被删除（只保留最新的记录）。',
  request: '请求',
  answer: '回答',
  tools: '工具',
  stale: '自该提案生成以来技能已被修改，批准将被拒绝。',
  approve: '批准',
  reject: '拒绝',
  working: '处理中…',
  appliedCreate: '已创建为版本 {version}',
  appliedUpdate: '已应用；旧版本保存为快照 {version}',
  model: '由 {model} 提出',
  approved: '技能 {name} 已保存为智能体技能',
  rejected: '提案已拒绝',
};

/** `t(key, params)` in the console's current language. */
@Injectable({ providedIn: 'root' })
export class EvolutionText {
  private readonly i18n = inject(I18n);

  t(key: EvolutionTextKey, params?: MessageParams): string {
    const dictionary: Record<EvolutionTextKey, string> = this.i18n.lang() === 'zh-CN' ? EVOLUTION_ZH_CN : EVOLUTION_EN;
    return interpolate(dictionary[key], params);
  }
}
