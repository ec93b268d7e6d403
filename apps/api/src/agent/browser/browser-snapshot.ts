/**
 * The page as the model reads it (openspec browser "Requirement: Snapshot and refs"): Playwright's accessibility
 * snapshot in its `ai` mode — one line per node, interactive elements tagged `[ref=eN]` — which `page.getByRef`
 * resolves back to the element. Refs of the elements inside forms are collected first (a ref stays with its element
 * across snapshots), so the approval rules can tell a submit button from a link without asking the page again.
 */
import type { Page } from 'playwright-core';

/** What the latest snapshot of a tab says about its refs. */
export interface RefIndex {
  /** ref → how the snapshot named it (`button "Send"`) */
  labels: Map<string, string>;
  /** buttons inside a form: a click may submit it */
  formSubmit: Set<string>;
  /** text fields inside a form: Enter may submit it */
  formField: Set<string>;
}

export interface PageSnapshot {
  text: string;
  refs: RefIndex;
  /** the whole snapshot was longer than the limit */
  truncated: boolean;
  totalChars: number;
}

/** forms whose refs are collected (a page with more forms still works; the click's own check covers the rest) */
const MAX_FORMS = 20;
const SUBMIT_ROLES = new Set(['button']);
const FIELD_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton']);

export function emptyRefIndex(): RefIndex {
  return { labels: new Map(), formSubmit: new Set(), formField: new Set() };
}

/** A ref as the model writes it: `e12`, or `f1e3` inside a frame. */
export function isRef(value: string): boolean {
  return /^(?:f\d{1,6})?e\d{1,7}$/.test(value);
}

interface SnapshotLine {
  role: string;
  name: string | null;
  ref: string;
}

/** Reads `- role "name" [ref=e5] …` without a regular expression over page text. */
export function parseSnapshotLine(line: string): SnapshotLine | null {
  const refAt = line.indexOf('[ref=');
  if (refAt === -1) return null;
  const refEnd = line.indexOf(']', refAt);
  if (refEnd === -1) return null;
  const ref = line.slice(refAt + 5, refEnd);
  if (!isRef(ref)) return null;
  const dash = line.indexOf('- ');
  if (dash === -1 || dash > refAt) return null;
  let cursor = dash + 2;
  let roleEnd = cursor;
  while (roleEnd < line.length && line[roleEnd] !== ' ' && line[roleEnd] !== ':') roleEnd += 1;
  const role = line.slice(cursor, roleEnd);
  cursor = roleEnd + 1;
  let name: string | null = null;
  if (line[cursor] === '"') {
    let end = cursor + 1;
    while (end < refAt && line[end] !== '"') end += line[end] === '\\' ? 2 : 1;
    try {
      name = JSON.parse(line.slice(cursor, end + 1)) as string;
    } catch {
      name = line.slice(cursor + 1, end);
    }
  }
  return { role, name, ref };
}

function label(line: SnapshotLine): string {
  return line.name === null ? line.role : `${line.role} ${JSON.stringify(line.name.length > 80 ? `${line.name.slice(0, 79)}…` : line.name)}`;
}

/** Takes the snapshot of the tab; the refs it hands out are the ones the next click/type/select resolves. */
export async function takeSnapshot(page: Page, maxChars: number, timeoutMs: number): Promise<PageSnapshot> {
  const refs = emptyRefIndex();
  const forms = page.locator('form');
  const formCount = Math.min(await forms.count(), MAX_FORMS);
  for (let index = 0; index < formCount; index += 1) {
    const inForm = await forms
      .nth(index)
      .ariaSnapshot({ mode: 'ai', timeout: timeoutMs })
      .catch(() => '');
    for (const raw of inForm.split('\n')) {
      const line = parseSnapshotLine(raw);
      if (line === null) continue;
      if (SUBMIT_ROLES.has(line.role)) refs.formSubmit.add(line.ref);
      else if (FIELD_ROLES.has(line.role)) refs.formField.add(line.ref);
    }
  }
  // taken last: refs resolve against the latest snapshot of the frame
  const full = await page.ariaSnapshot({ mode: 'ai', timeout: timeoutMs });
  for (const raw of full.split('\n')) {
    const line = parseSnapshotLine(raw);
    if (line !== null) refs.labels.set(line.ref, label(line));
  }
  const chars = Array.from(full);
  const truncated = chars.length > maxChars;
  return { text: truncated ? chars.slice(0, maxChars).join('') : full, refs, truncated, totalChars: chars.length };
}
