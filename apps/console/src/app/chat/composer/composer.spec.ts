import type { ComponentRef } from '@angular/core';
import { TestBed, type ComponentFixture } from '@angular/core/testing';
import type { McpServerRecord, McpServerToolsResponse, SkillListQuery, SkillListResponse, SkillRecord } from '@cashcode/contracts';

import { McpApi } from '../../mcp-market/mcp-api';
import { SkillsApi } from '../../skill-market/skills-api';
import { Composer, type ComposerSubmission } from './composer';

function skillRecord(name: string, display_name: string, description = '', extra: Partial<SkillRecord> = {}): SkillRecord {
  return {
    name,
    display_name,
    description,
    version: 1,
    version_label: null,
    tags: [],
    triggers: [],
    always: false,
    source: 'user',
    enabled: true,
    availability: 'available',
    missing: [],
    hash: 'h',
    shadowed_sources: [],
    shadows_builtin: false,
    validation_errors: [],
    requires: { tools: [], mcp_servers: [], bins: [], env: [] },
    optional: { tools: [], mcp_servers: [], bins: [], env: [] },
    mutable: true,
    license: null,
    compatibility: null,
    metadata: {},
    allowed_tools: null,
    ...extra,
  };
}

function serverRecord(name: string, extra: Partial<McpServerRecord> = {}): McpServerRecord {
  return {
    name,
    display_name: name.toUpperCase(),
    description: '',
    type: 'stdio',
    url: '',
    headers: {},
    builtin: true,
    mutable: false,
    status: 'connected',
    connected: true,
    status_error: null,
    tool_count: 1,
    ...extra,
  };
}

class FakeSkillsApi {
  queries: SkillListQuery[] = [];
  failures = 0;
  items: SkillRecord[] = [
    skillRecord('weather', 'Weather', 'Forecasts for any city'),
    skillRecord('github', 'GitHub', 'Issues via gh'),
    skillRecord('off', 'Off', '', { enabled: false, availability: 'disabled' }),
  ];
  list(query: SkillListQuery): Promise<SkillListResponse> {
    this.queries.push(query);
    if (this.failures > 0) {
      this.failures--;
      return Promise.reject(new Error('skills down'));
    }
    return Promise.resolve({ items: this.items, total: this.items.length, page: 1, page_size: 200, invalid: {} });
  }
}

class FakeMcpApi {
  servers: McpServerRecord[] = [
    serverRecord('test_stdio_mcp'),
    serverRecord('cached_only'),
    serverRecord('idle', { connected: false, status: 'disconnected', tool_count: 0 }),
  ];
  toolCalls: string[] = [];
  list(): Promise<McpServerRecord[]> {
    return Promise.resolve(this.servers);
  }
  tools(name: string): Promise<McpServerToolsResponse> {
    this.toolCalls.push(name);
    const callable = name === 'test_stdio_mcp';
    return Promise.resolve({
      server: name,
      display_name: name,
      tools: [
        {
          name: `mcp_${name}_say_hello`,
          original_name: 'say_hello',
          description: '',
          input_schema: {},
          source: callable ? 'live' : 'cache',
          callable,
        },
      ],
      source: callable ? 'live' : 'cache',
      status: 'connected',
      status_error: null,
      tool_count: 1,
    });
  }
}

describe('Composer', () => {
  let fixture: ComponentFixture<Composer>;
  let ref: ComponentRef<Composer>;
  let sent: ComposerSubmission[];
  let stops: number;
  let skillsApi: FakeSkillsApi;
  let mcpApi: FakeMcpApi;

  const root = () => fixture.nativeElement as HTMLElement;
  const textarea = () => root().querySelector('textarea') as HTMLTextAreaElement;
  const byTestId = (id: string) => root().querySelector(`[data-testid="${id}"]`) as HTMLButtonElement | null;
  const picker = () => byTestId('capability-picker');
  const activeRow = () => root().querySelector('.cc-option.cc-active')?.getAttribute('data-testid') ?? null;
  const rows = () =>
    Array.from(root().querySelectorAll('[role="option"]')).map((row) => row.getAttribute('data-testid'));

  async function type(text: string, caret = text.length): Promise<void> {
    textarea().value = text;
    textarea().setSelectionRange(caret, caret);
    textarea().dispatchEvent(new Event('input'));
    await fixture.whenStable();
  }

  function press(init: KeyboardEventInit): KeyboardEvent {
    const event = new KeyboardEvent('keydown', { cancelable: true, ...init });
    textarea().dispatchEvent(event);
    return event;
  }

  async function pressAndSettle(key: string): Promise<KeyboardEvent> {
    const event = press({ key });
    await fixture.whenStable();
    return event;
  }

  beforeEach(async () => {
    skillsApi = new FakeSkillsApi();
    mcpApi = new FakeMcpApi();
    TestBed.configureTestingModule({
      providers: [
        { provide: SkillsApi, useValue: skillsApi },
        { provide: McpApi, useValue: mcpApi },
      ],
    });
    fixture = TestBed.createComponent(Composer);
    ref = fixture.componentRef;
    ref.setInput('chatId', 'c1');
    ref.setInput('chatReady', true);
    ref.setInput('modelGroups', [{ provider: 'openai_compatible', models: ['gpt-x'] }]);
    ref.setInput('selection', { provider: 'openai_compatible', model: 'gpt-x' });
    sent = [];
    stops = 0;
    fixture.componentInstance.send.subscribe((submission) => sent.push(submission));
    fixture.componentInstance.stop.subscribe(() => stops++);
    await fixture.whenStable();
  });

  it('Scenario: Enter sends the message, Shift+Enter adds a newline', async () => {
    await type('hello');
    const shifted = press({ key: 'Enter', shiftKey: true });
    expect(shifted.defaultPrevented).toBe(false);
    expect(sent).toEqual([]);
    const plain = press({ key: 'Enter' });
    expect(plain.defaultPrevented).toBe(true);
    expect(sent).toEqual([{ text: 'hello', selections: { skills: [], mcp: [] }, attachments: [] }]);
  });

  it('Scenario: Send is disabled for blank text or without a model', async () => {
    await type('   ');
    expect(byTestId('send-button')?.disabled).toBe(true);
    press({ key: 'Enter' });
    expect(sent).toEqual([]);
    await type('hi');
    expect(byTestId('send-button')?.disabled).toBe(false);
    ref.setInput('selection', null);
    await fixture.whenStable();
    expect(byTestId('send-button')?.disabled).toBe(true);
  });

  it('Scenario: while generating the textarea stays usable, Enter hands the message on to be queued, and Stop replaces Send', async () => {
    ref.setInput('generating', true);
    await fixture.whenStable();
    expect(textarea().disabled).toBe(false);
    expect(byTestId('send-button')).toBeNull();
    expect(byTestId('queue-button')?.disabled).toBe(true);
    await type('next one');
    expect(byTestId('queue-button')?.disabled).toBe(false);
    press({ key: 'Enter' });
    expect(sent).toEqual([{ text: 'next one', selections: { skills: [], mcp: [] }, attachments: [] }]);
    byTestId('stop-button')?.click();
    expect(stops).toBe(1);
  });

  it('Scenario: ↑ in an empty composer asks for the last user message; IME Enter does not send', async () => {
    let recalls = 0;
    fixture.componentInstance.recall.subscribe(() => recalls++);
    const up = press({ key: 'ArrowUp' });
    expect(up.defaultPrevented).toBe(true);
    expect(recalls).toBe(1);
    fixture.componentInstance.setText('edited again');
    await fixture.whenStable();
    expect(textarea().value).toBe('edited again');
    press({ key: 'ArrowUp' });
    expect(recalls).toBe(1);
    press({ key: 'Enter', isComposing: true });
    expect(sent).toEqual([]);
  });

  it('clears the text after a successful send', async () => {
    await type('hello');
    fixture.componentInstance.clear();
    await fixture.whenStable();
    expect(textarea().value).toBe('');
    expect(byTestId('send-button')?.disabled).toBe(true);
  });

  it('shows provider errors with their provider label', async () => {
    ref.setInput('providerErrors', [{ provider: 'ollama', error: 'Cannot reach the model service' }]);
    await fixture.whenStable();
    expect(byTestId('provider-errors')?.textContent?.trim()).toBe('Ollama: Cannot reach the model service');
  });

  describe('@ picker', () => {
    it('Scenario: typing @ at a token boundary opens the categories; mail@example.com does not', async () => {
      await type('write to mail@ex');
      expect(picker()).toBeNull();
      await type('ask @');
      expect(picker()?.getAttribute('data-level')).toBe('category');
      expect(rows()).toEqual(['picker-kind-mcp', 'picker-kind-skill']);
      expect(activeRow()).toBe('picker-kind-mcp');
    });

    it('Scenario: the Skill list shows enabled, available Skills filtered by the query', async () => {
      await type('@');
      await pressAndSettle('ArrowDown');
      expect(activeRow()).toBe('picker-kind-skill');
      const enter = await pressAndSettle('Enter');
      expect(enter.defaultPrevented).toBe(true);
      expect(sent).toEqual([]);
      expect(skillsApi.queries).toEqual([{ enabled: true, availability: 'available', page_size: 200 }]);
      expect(rows()).toEqual(['picker-item-weather', 'picker-item-github']);
      await type('@WEA');
      expect(rows()).toEqual(['picker-item-weather']);
      expect(byTestId('picker-filter')?.textContent?.trim()).toBe('Filter: WEA');
      await type('@zzz');
      expect(byTestId('picker-empty')?.textContent?.trim()).toBe('No matching available Skill');
    });

    it('Scenario: the MCP list shows connected servers with a callable tool', async () => {
      await type('@');
      await pressAndSettle('Enter');
      expect(picker()?.getAttribute('data-level')).toBe('mcp');
      expect(mcpApi.toolCalls.sort()).toEqual(['cached_only', 'test_stdio_mcp']);
      expect(rows()).toEqual(['picker-item-test_stdio_mcp']);
      expect(byTestId('picker-item-test_stdio_mcp')?.textContent).toContain('1 tool');
      expect(byTestId('picker-item-test_stdio_mcp')?.textContent).not.toContain('1 tools');
    });

    it('Scenario: arrows wrap, Backspace on an empty query goes back, Escape closes until the @ changes', async () => {
      await type('@');
      await pressAndSettle('ArrowDown');
      await pressAndSettle('Enter');
      expect(activeRow()).toBe('picker-item-weather');
      await pressAndSettle('ArrowUp');
      expect(activeRow()).toBe('picker-item-github');
      await pressAndSettle('ArrowDown');
      expect(activeRow()).toBe('picker-item-weather');
      const back = await pressAndSettle('Backspace');
      expect(back.defaultPrevented).toBe(true);
      expect(picker()?.getAttribute('data-level')).toBe('category');
      expect(activeRow()).toBe('picker-kind-skill');
      await pressAndSettle('Escape');
      expect(picker()).toBeNull();
      // still the same @: stays closed while typing after it
      await type('@w');
      expect(picker()).toBeNull();
      // a new @ opens it again
      await type('@w @');
      expect(picker()?.getAttribute('data-level')).toBe('category');
    });

    it('Scenario: hovering a row makes it active and a click chooses it', async () => {
      await type('@');
      byTestId('picker-kind-skill')?.dispatchEvent(new MouseEvent('mouseenter'));
      await fixture.whenStable();
      expect(activeRow()).toBe('picker-kind-skill');
      byTestId('picker-kind-skill')?.click();
      await fixture.whenStable();
      byTestId('picker-item-github')?.dispatchEvent(new MouseEvent('mouseenter'));
      await fixture.whenStable();
      expect(activeRow()).toBe('picker-item-github');
      byTestId('picker-item-github')?.click();
      await fixture.whenStable();
      expect(byTestId('composer-chip-skill-github')).not.toBeNull();
    });

    it('Scenario: choosing removes @query from the text and adds a removable chip that is sent', async () => {
      await type('please @wea now', 11);
      await pressAndSettle('ArrowDown');
      await pressAndSettle('Enter');
      await pressAndSettle('Enter');
      expect(textarea().value).toBe('please  now');
      expect(textarea().selectionStart).toBe(7);
      expect(picker()).toBeNull();
      expect(byTestId('composer-chip-skill-weather')?.textContent).toContain('Weather');
      // MCP too
      await type('please @ now', 8);
      await pressAndSettle('Enter');
      await pressAndSettle('Enter');
      expect(byTestId('composer-chip-mcp-test_stdio_mcp')?.textContent).toContain('TEST_STDIO_MCP');
      press({ key: 'Enter' });
      expect(sent).toEqual([
        {
          text: 'please  now',
          selections: {
            skills: [{ name: 'weather', label: 'Weather' }],
            mcp: [{ server: 'test_stdio_mcp', label: 'TEST_STDIO_MCP' }],
          },
          attachments: [],
        },
      ]);
      const remove = root().querySelector('[aria-label="Remove Skill Weather"]') as HTMLButtonElement;
      remove.click();
      await fixture.whenStable();
      expect(byTestId('composer-chip-skill-weather')).toBeNull();
      expect(byTestId('composer-chip-mcp-test_stdio_mcp')).not.toBeNull();
    });

    it('Scenario: a ninth selection is refused with a clear message', async () => {
      skillsApi.items = Array.from({ length: 9 }, (_, i) => skillRecord(`s${i}`, `Skill ${i}`));
      for (let i = 0; i < 9; i++) {
        await type(`@s${i}`);
        byTestId('picker-kind-skill')?.click();
        await fixture.whenStable();
        await pressAndSettle('Enter');
      }
      expect(root().querySelectorAll('.cc-chip').length).toBe(8);
      expect(byTestId('selection-error')?.textContent?.trim()).toBe('Select at most 8 Skills or MCP servers');
    });

    it('Scenario: a failed list offers a retry', async () => {
      skillsApi.failures = 1;
      await type('@');
      byTestId('picker-kind-skill')?.click();
      await fixture.whenStable();
      expect(byTestId('picker-error')?.textContent).toContain('skills down');
      byTestId('picker-retry')?.click();
      await fixture.whenStable();
      expect(rows()).toEqual(['picker-item-weather', 'picker-item-github']);
    });

    it('Scenario: switching chats clears the chips and the picker but keeps the text', async () => {
      await type('@');
      byTestId('picker-kind-skill')?.click();
      await fixture.whenStable();
      await pressAndSettle('Enter');
      expect(byTestId('composer-chip-skill-weather')).not.toBeNull();
      await type('draft @');
      expect(picker()).not.toBeNull();
      ref.setInput('chatId', 'c2');
      await fixture.whenStable();
      expect(byTestId('composer-chips')).toBeNull();
      expect(picker()).toBeNull();
      expect(textarea().value).toBe('draft @');
      expect(document.activeElement).toBe(textarea());
    });

    it('Scenario: a press outside the composer dismisses the picker', async () => {
      await type('@');
      expect(picker()).not.toBeNull();
      document.body.dispatchEvent(new Event('pointerdown', { bubbles: true }));
      await fixture.whenStable();
      expect(picker()).toBeNull();
    });
  });
});
