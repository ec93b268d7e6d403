/**
 * The system prompt of a turn (openspec agent-runner): SOUL.md (MemoryDocuments.readSoul falls back to the built-in English
 * persona when it is missing or blank), then `## Remembered information` + MEMORY.md when MEMORY.md is non-empty,
 * then any sections other modules register (the skills module adds `## Skill usage`, the `## Installed Skills` index
 * and the recently-activated-skills summary).
 *
 * A chat turn's prompt (a `boundary` given, openspec agent-runner "Requirement: Cacheable request prefix") uses the
 * chat's snapshot of SOUL + MEMORY, taken at its first turn in this server process and again at each context boundary
 * (context-window.ts: every CONTEXT_BOUNDARY_TURNS turns, after a consolidation), so the request prefix stays the
 * same from turn to turn and a provider's prompt cache keeps matching. A fact saved with save_memory, a Dream rewrite
 * of MEMORY.md, or an edit of the files outside CashCode reaches a chat at its next boundary (a new chat at once; the
 * chat that saved a fact has it in its conversation already, the tool call and its result); a deliberate edit — the
 * REST editor, a Dream revert — bumps MemoryDocuments.documentRevision and reaches every chat at its next turn. The
 * sections are rendered every turn (the `## Installed Skills` index is snapshotted per chat by its own section; the
 * recently-activated-Skills summary changes only when the chat loads a Skill). Without a boundary (the stateless
 * OpenAI-compatible endpoint) SOUL and MEMORY are read fresh.
 */
import { Injectable } from '@nestjs/common';
import { DEFAULT_SOUL, MemoryDocuments } from '../memory/memory-documents';
import { LRUCache } from 'lru-cache';

export const REMEMBERED_INFORMATION_HEADING = '\n\n## Remembered information\n';
/** chats whose SOUL + MEMORY snapshot is kept (the oldest is dropped and taken again at its next turn) */
export const PROMPT_SNAPSHOT_CHATS = 1000;

interface PromptSnapshot {
  boundary: string;
  revision: number;
  base: string;
}

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
  private readonly snapshots = new LRUCache<string, PromptSnapshot>({ max: PROMPT_SNAPSHOT_CHATS });

  constructor(private readonly memory: MemoryDocuments) {}

  /** Adds (or replaces, by name) a section rendered after the remembered information. */
  registerSection(section: SystemPromptSection): void {
    const existing = this.sections.findIndex((s) => s.name === section.name);
    if (existing >= 0) this.sections.splice(existing, 1);
    this.sections.push(section);
    this.sections.sort((a, b) => a.order - b.order);
  }

  /** The system prompt; with `boundary` (a chat turn's context epoch) SOUL + MEMORY come from the chat's snapshot. */
  async build(context: { chatId: string; boundary?: string }): Promise<string> {
    let prompt = context.boundary === undefined ? await this.base() : await this.snapshot(context.chatId, context.boundary);
    for (const section of this.sections) {
      const text = await section.render(context);
      if (text && text.trim() !== '') prompt += '\n\n' + text.trim();
    }
    return prompt;
  }

  /** SOUL, then the remembered information, as the files are now. */
  private async base(): Promise<string> {
    const [soul, memory] = await Promise.all([this.memory.readSoul(), this.memory.readLongTermMemory()]);
    let prompt = soul.trim() !== '' ? soul.trim() : DEFAULT_SOUL;
    const memoryText = memory.trim();
    if (memoryText !== '') prompt += REMEMBERED_INFORMATION_HEADING + memoryText;
    return prompt;
  }

  private async snapshot(chatId: string, boundary: string): Promise<string> {
    const revision = this.memory.documentRevision;
    const cached = this.snapshots.get(chatId);
    if (cached && cached.boundary === boundary && cached.revision === revision) return cached.base;
    const base = await this.base();
    this.snapshots.set(chatId, { boundary, revision, base });
    return base;
  }
}
