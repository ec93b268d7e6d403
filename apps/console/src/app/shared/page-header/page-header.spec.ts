import { Component } from '@angular/core';
import { TestBed } from '@angular/core/testing';

import { PageHeader } from './page-header';

@Component({
  imports: [PageHeader],
  template: `<cc-page-header heading="Skill Market" subtitle="Local Skills"><button type="button">Upload</button></cc-page-header>`,
})
class Host {}

@Component({
  imports: [PageHeader],
  template: `<cc-page-header heading="MCP Market" subtitle="Servers" refreshLabel="Refresh" refreshTestId="mcp-refresh" (refresh)="refreshes = refreshes + 1" />`,
})
class RefreshHost {
  refreshes = 0;
}

describe(PageHeader.name, () => {
  it('shows the heading, the subtitle and the projected actions', () => {
    const fixture = TestBed.createComponent(Host);
    fixture.detectChanges();
    const element = fixture.nativeElement as HTMLElement;
    expect(element.querySelector('h1')?.textContent).toBe('Skill Market');
    expect(element.querySelector('.cc-subtitle')?.textContent).toBe('Local Skills');
    expect(element.querySelector('.cc-header-actions button')?.textContent).toBe('Upload');
  });

  it('shows no refresh button unless labelled', () => {
    const fixture = TestBed.createComponent(Host);
    fixture.detectChanges();
    expect((fixture.nativeElement as HTMLElement).querySelectorAll('button')).toHaveLength(1);
  });

  it('a labelled refresh button emits refresh', () => {
    const fixture = TestBed.createComponent(RefreshHost);
    fixture.detectChanges();
    const button = (fixture.nativeElement as HTMLElement).querySelector<HTMLButtonElement>('[data-testid="mcp-refresh"]');
    expect(button?.getAttribute('aria-label')).toBe('Refresh');
    button?.click();
    expect(fixture.componentInstance.refreshes).toBe(1);
  });
});
