import { Component, signal } from '@angular/core';
import { TestBed } from '@angular/core/testing';

import { KeyValueRows, type KeyValueRow } from './key-value-rows';

@Component({
  imports: [KeyValueRows],
  template: `
    <cc-key-value-rows
      testId="kv"
      addTestId="kv-add"
      legend="Headers"
      nameLabel="Header name"
      valueLabel="Value"
      addLabel="Add header"
      [rows]="rows()"
      [hint]="hint()"
      [removeLabel]="removeLabel"
      [rowError]="rowError"
      [listError]="listError()"
      [addDisabled]="rows().length >= 2"
      (add)="events.push('add')"
      (remove)="events.push('remove ' + $event.id)"
      (nameChange)="events.push('name ' + $event.row.id + ' ' + $event.name)"
      (valueChange)="events.push('value ' + $event.row.id + ' ' + $event.value)"
    />
  `,
})
class Host {
  readonly rows = signal<KeyValueRow[]>([{ id: 7, name: 'X-Api-Key', value: '********' }]);
  readonly hint = signal<string | null>(null);
  readonly listError = signal<string | null>(null);
  readonly errors = signal<Record<number, string>>({});
  readonly events: string[] = [];
  readonly removeLabel = (name: string): string => `Remove header ${name}`;
  readonly rowError = (row: KeyValueRow, part: 'name' | 'value'): string | null =>
    part === 'name' ? (this.errors()[row.id] ?? null) : null;
}

function setup() {
  const fixture = TestBed.createComponent(Host);
  fixture.detectChanges();
  const element = fixture.nativeElement as HTMLElement;
  const byTestId = <T extends HTMLElement>(id: string) => element.querySelector<T>(`[data-testid="${id}"]`);
  return { fixture, host: fixture.componentInstance, element, byTestId };
}

function type(input: HTMLInputElement, text: string): void {
  input.value = text;
  input.dispatchEvent(new Event('input'));
}

describe(KeyValueRows.name, () => {
  it('shows each row with its name, its value as a password and a labelled remove button', () => {
    const { element, byTestId } = setup();
    expect(element.querySelector('legend')?.textContent).toBe('Headers');
    expect(byTestId('kv-0')).not.toBeNull();
    expect(byTestId<HTMLInputElement>('kv-name')?.value).toBe('X-Api-Key');
    const value = byTestId<HTMLInputElement>('kv-value');
    expect(value?.type).toBe('password');
    expect(value?.value).toBe('********');
    expect(element.querySelector('[aria-label="Remove header X-Api-Key"]')).not.toBeNull();
    expect(element.querySelector('.cc-hint')).toBeNull();
  });

  it('reports edits, removal and add with the row they belong to', () => {
    const { host, element, byTestId } = setup();
    type(byTestId<HTMLInputElement>('kv-name')!, 'X-Token');
    type(byTestId<HTMLInputElement>('kv-value')!, 'secret');
    element.querySelector<HTMLButtonElement>('[aria-label="Remove header X-Api-Key"]')!.click();
    byTestId<HTMLButtonElement>('kv-add')!.click();
    expect(host.events).toEqual(['name 7 X-Token', 'value 7 secret', 'remove 7', 'add']);
  });

  it('shows the hint, a row error and a list error, and disables add when told', () => {
    const { fixture, host, element, byTestId } = setup();
    host.hint.set('Stored values are masked');
    host.errors.set({ 8: 'Invalid header name' });
    host.listError.set('Too many headers');
    host.rows.set([...host.rows(), { id: 8, name: 'bad name', value: 'v' }]);
    fixture.detectChanges();
    expect(element.querySelector('.cc-hint')?.textContent).toBe('Stored values are masked');
    expect(byTestId('kv-1')?.textContent).toContain('Invalid header name');
    expect(byTestId('kv-0')?.textContent).not.toContain('Invalid header name');
    expect(element.querySelector('.cc-error')?.textContent).toBe('Too many headers');
    expect(byTestId<HTMLButtonElement>('kv-add')?.disabled).toBe(true);
  });
});
