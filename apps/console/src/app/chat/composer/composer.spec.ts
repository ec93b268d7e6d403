import type { ComponentRef } from '@angular/core';
import { TestBed, type ComponentFixture } from '@angular/core/testing';

import { Composer } from './composer';

describe('Composer', () => {
  let fixture: ComponentFixture<Composer>;
  let ref: ComponentRef<Composer>;
  let sent: string[];
  let stops: number;

  const textarea = () => fixture.nativeElement.querySelector('textarea') as HTMLTextAreaElement;
  const byTestId = (id: string) => fixture.nativeElement.querySelector(`[data-testid="${id}"]`) as HTMLButtonElement | null;

  async function type(text: string): Promise<void> {
    textarea().value = text;
    textarea().dispatchEvent(new Event('input'));
    await fixture.whenStable();
  }

  function press(init: KeyboardEventInit): KeyboardEvent {
    const event = new KeyboardEvent('keydown', { cancelable: true, ...init });
    textarea().dispatchEvent(event);
    return event;
  }

  beforeEach(async () => {
    fixture = TestBed.createComponent(Composer);
    ref = fixture.componentRef;
    ref.setInput('chatReady', true);
    ref.setInput('modelGroups', [{ provider: 'openai_compatible', models: ['gpt-x'] }]);
    ref.setInput('selection', { provider: 'openai_compatible', model: 'gpt-x' });
    sent = [];
    stops = 0;
    fixture.componentInstance.send.subscribe((text) => sent.push(text));
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
    expect(sent).toEqual(['hello']);
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

  it('Scenario: while generating the textarea is disabled and Stop replaces Send', async () => {
    ref.setInput('generating', true);
    await fixture.whenStable();
    expect(textarea().disabled).toBe(true);
    expect(byTestId('send-button')).toBeNull();
    byTestId('stop-button')?.click();
    expect(stops).toBe(1);
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
});
