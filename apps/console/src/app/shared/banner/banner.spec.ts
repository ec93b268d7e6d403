import { Component } from '@angular/core';
import { TestBed } from '@angular/core/testing';

import { Banner, type BannerTone } from './banner';

@Component({
  imports: [Banner],
  template: `<cc-banner [tone]="tone" message="Loading failed"><button type="button">Retry</button></cc-banner>`,
})
class Host {
  tone: BannerTone = 'error';
}

function render(tone: BannerTone): HTMLElement {
  const fixture = TestBed.createComponent(Host);
  fixture.componentInstance.tone = tone;
  fixture.detectChanges();
  return fixture.nativeElement as HTMLElement;
}

describe(Banner.name, () => {
  it('an error banner is an alert with its message and projected action', () => {
    const element = render('error');
    const banner = element.querySelector('.cc-banner');
    expect(banner?.getAttribute('role')).toBe('alert');
    expect(banner?.textContent).toContain('Loading failed');
    expect(banner?.querySelector('button')?.textContent).toBe('Retry');
  });

  it('an info banner is a status', () => {
    const banner = render('info').querySelector('.cc-banner');
    expect(banner?.getAttribute('role')).toBe('status');
    expect(banner?.getAttribute('data-tone')).toBe('info');
  });
});
