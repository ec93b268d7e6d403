import { Injectable, inject } from '@angular/core';

import { I18n, interpolate, type MessageParams } from '../core/i18n/i18n';

/** The Memory view's strings (English and Simplified Chinese), kept with the feature. */
export const MEMORY_EN = {
  'memory.title': 'Memory',
  'memory.subtitle': 'What the agent remembers across conversations, its persona, and the history of Dream runs.',
  'memory.loadFailed': 'Could not load memory: {detail}',
  'memory.tab.memory': 'Long-term memory',
  'memory.tab.soul': 'Persona',
  'memory.tab.dreams': 'Dream history',
  'memory.memoryHint':
    'MEMORY.md is shared by all chats and added to every system prompt. The agent (save_memory) and Dream update it too.',
  'memory.memoryEmpty': 'Nothing remembered yet.',
  'memory.soulHint': 'SOUL.md opens every system prompt. Leave it empty to use the built-in persona.',
  'memory.soulEmpty': 'Empty: the built-in persona is used.',
  'memory.save': 'Save',
  'memory.saving': 'Saving…',
  'memory.saved': 'Saved',
  'memory.unsaved': 'Unsaved changes',
  'memory.discard': 'Discard changes',
  'memory.saveFailed': 'Could not save: {detail}',
  'memory.conflict':
    'This file was changed elsewhere (by the agent, a Dream run or another window) after you opened it. Your edit was not saved.',
  'memory.conflictReload': 'Load the new version',
  'memory.conflictOverwrite': 'Overwrite with my version',
  'dream.hint': 'Dream distils new conversations into long-term memory on a schedule. Every run is recorded and can be reverted.',
  'dream.runNow': 'Run now',
  'dream.running': 'Running…',
  'dream.runFailed': 'Could not run Dream: {detail}',
  'dream.noRecords': 'Nothing new to distil since the last run.',
  'dream.noModel': 'No model to use: choose a background model below, or chat once first.',
  'dream.finished': 'Dream finished: {outcome}.',
  'dream.empty': 'No Dream runs yet.',
  'dream.outcome.updated': 'Updated',
  'dream.outcome.unchanged': 'No change',
  'dream.outcome.rejected': 'Rejected',
  'dream.outcome.failed': 'Failed',
  'dream.outcome.reverted': 'Reverted',
  'dream.trigger.schedule': 'Scheduled run',
  'dream.trigger.manual': 'Manual run',
  'dream.trigger.revert': 'Revert',
  'dream.model': 'Model: {model}',
  'dream.records': '{n} records read',
  'dream.entries': 'Entries: {before} → {after}',
  'dream.showDiff': 'Show changes',
  'dream.showProposed': 'Show the refused change',
  'dream.hideDiff': 'Hide changes',
  'dream.revert': 'Revert',
  'dream.revertTitle': 'Revert this run?',
  'dream.revertBody':
    'MEMORY.md will be restored to how it was before this run. The revert is recorded too and can itself be reverted.',
  'dream.reverted': 'MEMORY.md was restored.',
  'dream.revertFailed': 'Could not revert: {detail}',
  'dream.background': 'Background model',
  'dream.backgroundHint': 'The model Dream uses. Without one, Dream uses the last model a chat used.',
  'dream.backgroundNone': 'Last model used in a chat',
  'dream.backgroundSaved': 'Background model saved.',
  'dream.backgroundFailed': 'Could not save the background model: {detail}',
} as const;

export type MemoryTextKey = keyof typeof MEMORY_EN;

export const MEMORY_ZH_CN: Record<MemoryTextKey, string> = {
  'memory.title': '记忆',
  'memory.subtitle': '智能体跨会话记住的内容、它的人设，以及 Dream 的运行记录。',
  'memory.loadFailed': '无法加载记忆：{detail}',
  'memory.tab.memory': '长期记忆',
  'memory.tab.soul': '人设',
  'memory.tab.dreams': 'Dream 记录',
  'memory.memoryHint': 'MEMORY.md 由所有会话共享，并加入每次的系统提示词。智能体（save_memory）和 Dream 也会更新它。',
  'memory.memoryEmpty': '还没有任何记忆。',
  'memory.soulHint': 'SOUL.md 位于每次系统提示词的开头。留空则使用内置人设。',
  'memory.soulEmpty': '为空：正在使用内置人设。',
  'memory.save': '保存',
  'memory.saving': '正在保存…',
  'memory.saved': '已保存',
  'memory.unsaved': '有未保存的修改',
  'memory.discard': '放弃修改',
  'memory.saveFailed': '保存失败：{detail}',
  'memory.conflict': '打开后该文件已在别处被修改（智能体、Dream 或其他窗口），你的修改尚未保存。',
  'memory.conflictReload': '加载新版本',
  'memory.conflictOverwrite': '用我的版本覆盖',
  'dream.hint': 'Dream 会定期把新的对话提炼进长期记忆。每次运行都会被记录，并且可以撤销。',
  'dream.runNow': '立即运行',
  'dream.running': '正在运行…',
  'dream.runFailed': '无法运行 Dream：{detail}',
  'dream.noRecords': '自上次运行以来没有新的内容需要提炼。',
  'dream.noModel': '没有可用的模型：请在下方选择后台模型，或先进行一次对话。',
  'dream.finished': 'Dream 已完成：{outcome}。',
  'dream.empty': '还没有 Dream 运行记录。',
  'dream.outcome.updated': '已更新',
  'dream.outcome.unchanged': '无变化',
  'dream.outcome.rejected': '已拒绝',
  'dream.outcome.failed': '失败',
  'dream.outcome.reverted': '已撤销',
  'dream.trigger.schedule': '定时运行',
  'dream.trigger.manual': '手动运行',
  'dream.trigger.revert': '撤销',
  'dream.model': '模型：{model}',
  'dream.records': '读取了 {n} 条记录',
  'dream.entries': '条目：{before} → {after}',
  'dream.showDiff': '查看改动',
  'dream.showProposed': '查看被拒绝的改动',
  'dream.hideDiff': '收起改动',
  'dream.revert': '撤销',
  'dream.revertTitle': '撤销这次运行？',
  'dream.revertBody': 'MEMORY.md 将恢复到这次运行之前的内容。撤销本身也会被记录，并且可以再次撤销。',
  'dream.reverted': 'MEMORY.md 已恢复。',
  'dream.revertFailed': '撤销失败：{detail}',
  'dream.background': '后台模型',
  'dream.backgroundHint': 'Dream 使用的模型。未设置时，Dream 使用最近一次对话所用的模型。',
  'dream.backgroundNone': '最近一次对话使用的模型',
  'dream.backgroundSaved': '后台模型已保存。',
  'dream.backgroundFailed': '无法保存后台模型：{detail}',
};

/** `t(key, params)` in the console's current language. */
@Injectable({ providedIn: 'root' })
export class MemoryText {
  private readonly i18n = inject(I18n);

  t(key: MemoryTextKey, params?: MessageParams): string {
    const dictionary: Record<MemoryTextKey, string> = this.i18n.lang() === 'zh-CN' ? MEMORY_ZH_CN : MEMORY_EN;
    return interpolate(dictionary[key], params);
  }
}
