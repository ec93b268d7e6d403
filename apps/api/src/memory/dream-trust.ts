/**
 * What Dream may do with the entries already in MEMORY.md (openspec memory "Requirement: Dream safety"): entries written
 * from untrusted content and never verified by the owner are kept out of Dream's input — it only sees a line that marks
 * them and names their sources — and are put back unchanged after the rewrite, so Dream can never restate, merge or
 * promote them into entries of its own; entries the owner verified must survive a rewrite word for word, else the run
 * is held for the owner's review. Pure.
 */
import type { DreamEntryProvenance, MemoryEntryView, MemoryProvenanceRecord } from '@cashcode/contracts';
import { trimTrailing } from '../common/trim';
import { memoryEntryViews } from './memory-entry-trust';

export interface DreamMemoryView {
  /** MEMORY.md as Dream reads it: without the unverified entries from untrusted content */
  text: string;
  /** the unverified entries from untrusted content, in file order */
  keptOut: MemoryEntryView[];
  /** the entries the owner verified */
  verified: string[];
  views: MemoryEntryView[];
}

export function dreamMemoryView(memory: string, records: readonly MemoryProvenanceRecord[]): DreamMemoryView {
  const views = memoryEntryViews(memory, records);
  const keptOut = views.filter((view) => view.trust === 'untrusted');
  const hidden = new Set(keptOut.map((view) => view.entry));
  const text = memory
    .split('\n')
    .filter((line) => !hidden.has(line.trim()))
    .join('\n');
  return { text, keptOut, verified: views.filter((view) => view.trust === 'verified').map((view) => view.entry), views };
}

/** The line of Dream's input that marks the kept-out entries (their sources, never their text); '' without any. */
export function keptOutNote(keptOut: readonly MemoryEntryView[]): string {
  if (keptOut.length === 0) return '';
  const sources = new Set<string>();
  for (const view of keptOut) for (const source of view.untrusted_sources) sources.add(`${source.kind} ${JSON.stringify(source.name)}`);
  return (
    `\n\n(kept out: ${keptOut.length} unverified ${keptOut.length === 1 ? 'entry' : 'entries'} written from untrusted ` +
    `content — ${[...sources].slice(0, 10).join(', ')}. They stay in MEMORY.md as they are; do not restate them.)`
  );
}

/** An entry's text without its date stamp or list marker, lowercased: what a restatement would contain. */
function core(entry: string): string {
  return entry
    .replace(/^[-*+]\s+/, '')
    .replace(/^\[\d{4}-\d\d-\d\d \d\d:\d\d\]\s*/, '')
    .trim()
    .toLowerCase();
}

/** Restatements shorter than this are not looked for (too likely to match an unrelated line). */
const MIN_RESTATED_CHARS = 12;

/**
 * The proposal with the kept-out entries put back unchanged at its end. A line of the proposal that is such an entry,
 * or contains its text (a restatement the model could only make if it learnt the text elsewhere), is dropped.
 */
export function withKeptOut(proposal: string, keptOut: readonly MemoryEntryView[]): string {
  if (keptOut.length === 0) return proposal;
  const entries = new Set(keptOut.map((view) => view.entry));
  const cores = keptOut.map((view) => core(view.entry)).filter((text) => text.length >= MIN_RESTATED_CHARS);
  const kept = proposal
    .split('\n')
    .filter((line) => !entries.has(line.trim()) && !cores.some((text) => line.toLowerCase().includes(text)));
  const body = trimTrailing(kept.join('\n'), '\n');
  return `${body}${body === '' ? '' : '\n'}${keptOut.map((view) => view.entry).join('\n')}\n`;
}

/** The verified entries a text no longer has word for word. */
export function droppedVerified(verified: readonly string[], text: string): string[] {
  const lines = new Set(text.split('\n').map((line) => line.trim()));
  return verified.filter((entry) => !lines.has(entry));
}

/** Where the lines a rewrite adds or removes came from, and the entries it kept out. */
export function dreamProvenance(before: DreamMemoryView, after: string): DreamEntryProvenance[] {
  const beforeLines = new Set(before.views.map((view) => view.entry));
  const afterLines = new Set(after.split('\n').map((line) => line.trim()).filter((line) => line !== ''));
  const out: DreamEntryProvenance[] = [];
  for (const view of before.views) {
    if (!afterLines.has(view.entry)) out.push({ entry: view.entry, change: 'removed', trust: view.trust, untrusted_sources: view.untrusted_sources });
  }
  for (const line of afterLines) {
    // Dream's own entries: distilled from the owner's messages only (what followed untrusted content is left out)
    if (!beforeLines.has(line)) out.push({ entry: line, change: 'added', trust: 'trusted', untrusted_sources: [] });
  }
  for (const view of before.keptOut) {
    out.push({ entry: view.entry, change: 'kept_unpromoted', trust: view.trust, untrusted_sources: view.untrusted_sources });
  }
  return out;
}
