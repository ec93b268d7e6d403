import { ApplicationRef } from '@angular/core';
import { TestBed } from '@angular/core/testing';

import type { ToolBlockState } from '../chat-types';
import { ToolBlock } from './tool-block';

const finished: ToolBlockState = {
  callId: 'call-1',
  streamId: 1,
  name: 'read_file',
  arguments: '{"path":"notes.md"}',
  status: 'ok',
  durationMs: 1450,
  result: 'line one\nline two',
};

describe('ToolBlock', () => {
  async function render(tool: ToolBlockState): Promise<HTMLElement> {
    const fixture = TestBed.createComponent(ToolBlock);
    fixture.componentRef.setInput('tool', tool);
    await fixture.whenStable();
    return fixture.nativeElement as HTMLElement;
  }

  it('Scenario: a finished tool block shows name, arguments summary, status, duration and a preview', async () => {
    const element = await render(finished);
    expect(element.querySelector('[data-testid="tool-name"]')?.textContent).toBe('read_file');
    expect(element.querySelector('.cc-tool-args')?.textContent).toBe('path: "notes.md"');
    expect(element.querySelector('.cc-tool-state')?.textContent).toBe('Done');
    expect(element.querySelector('[data-testid="tool-duration"]')?.textContent).toBe('1.4 s');
    expect(element.querySelector('[data-testid="tool-preview"]')?.textContent).toBe('line one line two');
    expect(element.getAttribute('data-status')).toBe('ok');
  });

  it('Scenario: the result preview expands to the full arguments and result', async () => {
    const element = await render(finished);
    expect(element.querySelector('[data-testid="tool-result"]')).toBeNull();
    (element.querySelector('.cc-tool-head') as HTMLButtonElement).click();
    await TestBed.inject(ApplicationRef).whenStable();
    expect(element.querySelector('[data-testid="tool-result"]')?.textContent).toBe('line one\nline two');
    expect(element.querySelector('.cc-tool-section pre')?.textContent).toContain('"path": "notes.md"');
  });

  it('shows a spinner while running and an error state when the tool failed', async () => {
    const running = await render({ ...finished, status: 'running', durationMs: null, result: null });
    expect(running.querySelector('mat-progress-spinner')).not.toBeNull();
    expect(running.querySelector('[data-testid="tool-duration"]')).toBeNull();
    const failed = await render({ ...finished, status: 'error', result: 'Error: file not found' });
    expect(failed.querySelector('.cc-error')).not.toBeNull();
    expect(failed.querySelector('.cc-tool-state')?.textContent).toBe('Failed');
    expect(failed.getAttribute('data-status')).toBe('error');
    expect(failed.querySelector('[data-testid="tool-preview"]')?.textContent).toBe('Error: file not found');
  });

  it('a call waiting for its approval or refused by it reads as such', async () => {
    const awaiting = await render({ ...finished, status: 'awaiting', durationMs: null, result: null });
    expect(awaiting.querySelector('.cc-tool-state')?.textContent).toBe('Waiting for approval');
    expect(awaiting.querySelector('.cc-awaiting')).not.toBeNull();
    const denied = await render({ ...finished, status: 'denied', durationMs: 0, result: 'The user denied running it.' });
    expect(denied.querySelector('.cc-tool-state')?.textContent).toBe('Not run');
  });
});
