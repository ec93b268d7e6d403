import { MAX_SELECTIONS } from '@cashcode/contracts';

import {
  NO_SELECTIONS,
  addSelection,
  filterCapabilities,
  findMentionTrigger,
  moveActive,
  normalizeLoadedSkills,
  normalizePersistedReceipts,
  pickerKeyAction,
  removeMention,
  removeSelection,
  type CapabilityItem,
  type CapabilitySelections,
} from './capability-rules';

const skill = (name: string, displayName = '', description = ''): CapabilityItem => ({
  kind: 'skill',
  name,
  displayName,
  description,
  toolCount: null,
});
const server = (name: string, displayName = '', description = ''): CapabilityItem => ({
  kind: 'mcp',
  name,
  displayName,
  description,
  toolCount: 1,
});

describe('capability picker rules', () => {
  describe('trigger', () => {
    it('Scenario: @ at the start or after whitespace opens the picker with the query up to the caret', () => {
      expect(findMentionTrigger('@', 1)).toEqual({ start: 0, query: '' });
      expect(findMentionTrigger('@wea', 4)).toEqual({ start: 0, query: 'wea' });
      expect(findMentionTrigger('look up @wea', 12)).toEqual({ start: 8, query: 'wea' });
      expect(findMentionTrigger('line one\n@git', 13)).toEqual({ start: 9, query: 'git' });
      expect(findMentionTrigger('tab\t@x.y-z_1', 12)).toEqual({ start: 4, query: 'x.y-z_1' });
    });

    it('Scenario: an @ inside a word (mail@example.com) does not trigger', () => {
      expect(findMentionTrigger('mail@example.com', 16)).toBeNull();
      expect(findMentionTrigger('write to mail@ex', 16)).toBeNull();
    });

    it('only the text before the caret counts', () => {
      expect(findMentionTrigger('@weather today', 3)).toEqual({ start: 0, query: 'we' });
      expect(findMentionTrigger('@weather today', 14)).toBeNull();
      expect(findMentionTrigger('@weather', 0)).toBeNull();
    });

    it('whitespace or a second @ ends the mention', () => {
      expect(findMentionTrigger('@weather ', 9)).toBeNull();
      expect(findMentionTrigger('@a@b', 4)).toBeNull();
      expect(findMentionTrigger('@@', 2)).toBeNull();
    });

    it('Scenario: choosing removes @query and puts the caret where the @ was', () => {
      const text = 'please @wea now';
      const trigger = findMentionTrigger(text, 11);
      expect(trigger).not.toBeNull();
      expect(removeMention(text, trigger!, 11)).toEqual({ text: 'please  now', caret: 7 });
    });
  });

  describe('filter', () => {
    const items = [
      skill('weather', 'Weather', 'Forecasts for any city'),
      skill('github', 'GitHub', 'Issues and pull requests via gh'),
      skill('chart-visualization', '', 'An HTML chart'),
    ];

    it('Scenario: the filter is a case-insensitive substring over display name, name and description', () => {
      expect(filterCapabilities(items, 'WEA').map((item) => item.name)).toEqual(['weather']);
      expect(filterCapabilities(items, 'pull').map((item) => item.name)).toEqual(['github']);
      expect(filterCapabilities(items, 'chart-').map((item) => item.name)).toEqual(['chart-visualization']);
      expect(filterCapabilities(items, '').length).toBe(3);
      expect(filterCapabilities(items, 'nothing')).toEqual([]);
    });
  });

  describe('keyboard', () => {
    const view = { level: 'skill' as const, active: 0, count: 3, query: '' };

    it('Scenario: ArrowUp and ArrowDown wrap around', () => {
      expect(pickerKeyAction(view, 'ArrowDown')).toEqual({ kind: 'move', active: 1 });
      expect(pickerKeyAction({ ...view, active: 2 }, 'ArrowDown')).toEqual({ kind: 'move', active: 0 });
      expect(pickerKeyAction(view, 'ArrowUp')).toEqual({ kind: 'move', active: 2 });
      expect(pickerKeyAction({ ...view, count: 0 }, 'ArrowDown')).toEqual({ kind: 'move', active: 0 });
      expect(moveActive(1, -1, 2)).toBe(0);
      expect(moveActive(0, -1, 0)).toBe(0);
    });

    it('Scenario: Enter chooses the active row and Escape closes', () => {
      expect(pickerKeyAction({ ...view, active: 2 }, 'Enter')).toEqual({ kind: 'choose', index: 2 });
      expect(pickerKeyAction(view, 'Escape')).toEqual({ kind: 'close' });
    });

    it('Scenario: Backspace with an empty query returns from a list to the categories', () => {
      expect(pickerKeyAction(view, 'Backspace')).toEqual({ kind: 'back' });
      // with a query it edits the text; on the first level it deletes the @
      expect(pickerKeyAction({ ...view, query: 'w' }, 'Backspace')).toEqual({ kind: 'none' });
      expect(pickerKeyAction({ ...view, level: 'category' }, 'Backspace')).toEqual({ kind: 'none' });
    });

    it('other keys go to the textarea', () => {
      expect(pickerKeyAction(view, 'a')).toEqual({ kind: 'none' });
      expect(pickerKeyAction(view, 'ArrowLeft')).toEqual({ kind: 'none' });
    });
  });

  describe('chips', () => {
    it('Scenario: a chosen Skill becomes a receipt {name, label} and an MCP server {server, label}', () => {
      const first = addSelection(NO_SELECTIONS, skill('weather', 'Weather'));
      expect(first).toEqual({ ok: true, selections: { skills: [{ name: 'weather', label: 'Weather' }], mcp: [] } });
      const second = addSelection(first.ok ? first.selections : NO_SELECTIONS, server('test_stdio_mcp', ''));
      expect(second.ok && second.selections.mcp).toEqual([{ server: 'test_stdio_mcp', label: 'test_stdio_mcp' }]);
    });

    it('Scenario: choosing the same item twice keeps one chip', () => {
      const once = addSelection(NO_SELECTIONS, skill('weather', 'Weather'));
      const selections = once.ok ? once.selections : NO_SELECTIONS;
      expect(addSelection(selections, skill('weather', 'Weather'))).toEqual({ ok: true, selections });
      // the same name as a server is a different identity
      const mixed = addSelection(selections, server('weather'));
      expect(mixed.ok && mixed.selections.mcp.length).toBe(1);
    });

    it('Scenario: more than 8 selections in total are refused with a clear message', () => {
      let selections: CapabilitySelections = NO_SELECTIONS;
      for (let i = 0; i < MAX_SELECTIONS; i++) {
        const result = addSelection(selections, i % 2 === 0 ? skill(`s${i}`) : server(`m${i}`));
        expect(result.ok).toBe(true);
        if (result.ok) selections = result.selections;
      }
      expect(selections.skills.length + selections.mcp.length).toBe(8);
      expect(addSelection(selections, skill('one-more'))).toEqual({ ok: false, error: 'tooMany' });
      // an item already chosen is still fine
      expect(addSelection(selections, skill('s0')).ok).toBe(true);
    });

    it('Scenario: invalid identities and over-long labels are refused', () => {
      expect(addSelection(NO_SELECTIONS, skill('Bad Name'))).toEqual({ ok: false, error: 'invalidSkill' });
      expect(addSelection(NO_SELECTIONS, server('dotted.name'))).toEqual({ ok: false, error: 'invalidMcp' });
      expect(addSelection(NO_SELECTIONS, skill('ok', 'x'.repeat(101)))).toEqual({ ok: false, error: 'labelTooLong' });
      expect(addSelection(NO_SELECTIONS, skill('ok', '字'.repeat(100))).ok).toBe(true);
    });

    it('Scenario: a chip can be removed', () => {
      const selections = {
        skills: [{ name: 'weather', label: 'Weather' }],
        mcp: [{ server: 'test_stdio_mcp', label: 'Test' }],
      };
      expect(removeSelection(selections, 'skill', 'weather')).toEqual({ skills: [], mcp: selections.mcp });
      expect(removeSelection(selections, 'mcp', 'test_stdio_mcp')).toEqual({ skills: selections.skills, mcp: [] });
    });
  });

  describe('persisted receipts (openspec console)', () => {
    it('Scenario: reopened chats keep valid receipts, drop bad rows and bad labels', () => {
      expect(
        normalizePersistedReceipts({
          mentioned_skills: [
            { name: ' weather ', label: ' Weather ' },
            { name: 'Bad Name', label: 'x' },
            { name: 'weather', label: 'again' },
            { name: 'github', label: 'y'.repeat(101) },
            'junk',
          ],
          selected_mcp_connectors: [{ server: 'test_stdio_mcp', label: 42 }, { server: '' }],
        }),
      ).toEqual({
        mentioned_skills: [{ name: 'weather', label: 'Weather' }, { name: 'github' }],
        selected_mcp_connectors: [{ server: 'test_stdio_mcp' }],
      });
    });

    it('Scenario: Skills are capped at 8 and MCP rows at what is left; empty lists are omitted', () => {
      const skills = Array.from({ length: 10 }, (_, i) => ({ name: `s${i}` }));
      const servers = Array.from({ length: 4 }, (_, i) => ({ server: `m${i}` }));
      expect(normalizePersistedReceipts({ mentioned_skills: skills, selected_mcp_connectors: servers })).toEqual({
        mentioned_skills: skills.slice(0, 8),
      });
      expect(
        normalizePersistedReceipts({ mentioned_skills: skills.slice(0, 5), selected_mcp_connectors: servers }),
      ).toEqual({ mentioned_skills: skills.slice(0, 5), selected_mcp_connectors: servers.slice(0, 3) });
      expect(normalizePersistedReceipts({ mentioned_skills: [], selected_mcp_connectors: 'x' })).toEqual({});
    });

    it('keeps well-formed skill-loaded receipts only', () => {
      const hash = 'a'.repeat(64);
      expect(
        normalizeLoadedSkills([
          { name: 'weather', version: 2, hash },
          { name: 'weather', version: 2, hash },
          { name: 'Bad', version: 1, hash },
          { name: 'github', version: 0, hash },
          { name: 'github', version: 3 },
        ]),
      ).toEqual([
        { name: 'weather', version: 2, hash },
        { name: 'github', version: 3, hash: '' },
      ]);
      expect(normalizeLoadedSkills(undefined)).toEqual([]);
    });
  });
});
