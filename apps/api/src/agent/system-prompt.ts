/**
 * The system prompt of a turn (openspec agent-runner): SOUL.md (MemoryStore.readSoul falls back to the built-in English
 * persona when it is missing or blank), then `## Remembered information` + MEMORY.md when MEMORY.md is non-empty,
 * then any sections other modules register (the skills module adds `## Skill usage`, the `## Installed Skills` index
 * and the recently-activated-skills summary). SOUL and MEMORY are re-read every turn.
 */
import { Injectable } from '@nestjs/common';
import { DEFAULT_SOUL, MemoryStore } from '../memory/memory-store';

export const REMEMBERED_INFORMATION_HEADING = '\n\n## Remembered information\n';

/** A part appended after SOUL and memory; returns null/blank to add nothing this turn. */
export interface SystemPromptSection {
  readonly name: string;
  /** lower first; sections are joined with a blank line */
  readonly order: number;
  render(context: { chatId: string }): Promise<string | null> | string | null;
}

@Injectable()
export class SystemPromptBuilder {
  private readonly sections: SystemPromptSection[] = [];

  constructor(private readonly memory: MemoryStore) {}

  /** Adds (or replaces, by name) a section rendered after the remembered information. */
  registerSection(section: SystemPromptSection): void {
    const existing = this.sections.findIndex((s) => s.name === section.name);
    if (existing >= 0) this.sections.splice(existing, 1);
    this.sections.push(section);
    this.sections.sort((a, b) => a.order - b.order);
  }

  async build(context: { chatId: string }): Promise<string> {
    const [soul, memory] = await Promise.all([this.memory.readSoul(), this.memory.readLongTermMemory()]);
    let prompt = soul.trim() !== '' ? soul.trim() : DEFAULT_SOUL;
    const memoryText = memory.trim();
    if (memoryText !== '') prompt += REMEMBERED_INFORMATION_HEADING + memoryText;
    for (const section of this.sections) {
      const text = await section.render(context);
      if (text && text.trim() !== '') prompt += '\n\n' + text.trim();
    }
    return prompt;
  }
}
