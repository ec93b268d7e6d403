import { provideHttpClient, withInterceptors } from '@angular/common/http';
import { HttpTestingController, provideHttpClientTesting } from '@angular/common/http/testing';
import type { ComponentRef } from '@angular/core';
import { TestBed, type ComponentFixture } from '@angular/core/testing';
import type { AttachmentReceipt } from '@cashcode/contracts';

import { apiErrorInterceptor } from '../../core/api/api-error.interceptor';
import { Composer, type ComposerSubmission } from '../composer/composer';

const RECEIPT: AttachmentReceipt = { name: 'notes.txt', path: 'attachments/c1/notes.txt', size: 5, mime: 'text/plain' };

describe('Composer attachments', () => {
  let fixture: ComponentFixture<Composer>;
  let ref: ComponentRef<Composer>;
  let http: HttpTestingController;
  let sent: ComposerSubmission[];

  const root = () => fixture.nativeElement as HTMLElement;
  const byTestId = (id: string) => root().querySelector(`[data-testid="${id}"]`) as HTMLElement | null;
  const all = (id: string) => Array.from(root().querySelectorAll(`[data-testid="${id}"]`)) as HTMLElement[];

  async function pick(...files: File[]): Promise<void> {
    const input = byTestId('attachment-input') as HTMLInputElement;
    // the test DOM has no DataTransfer: the picked files are set on the input directly
    Object.defineProperty(input, 'files', { value: files, configurable: true });
    input.dispatchEvent(new Event('change'));
    await fixture.whenStable();
  }

  beforeEach(async () => {
    TestBed.configureTestingModule({
      providers: [provideHttpClient(withInterceptors([apiErrorInterceptor])), provideHttpClientTesting()],
    });
    http = TestBed.inject(HttpTestingController);
    fixture = TestBed.createComponent(Composer);
    ref = fixture.componentRef;
    ref.setInput('chatId', 'c1');
    ref.setInput('chatReady', true);
    ref.setInput('modelGroups', [{ provider: 'openai_compatible', models: ['gpt-x'] }]);
    ref.setInput('selection', { provider: 'openai_compatible', model: 'gpt-x' });
    sent = [];
    fixture.componentInstance.send.subscribe((submission) => sent.push(submission));
    await fixture.whenStable();
  });

  afterEach(() => http.verify());

  it('Scenario: Picked files are uploaded, shown as chips and sent with the message', async () => {
    expect(byTestId('attach-button')?.getAttribute('aria-label')).toBe('Attach files');
    await pick(new File(['hello'], 'notes.txt', { type: 'text/plain' }));
    const upload = http.expectOne('/api/sessions/c1/attachments');
    expect(upload.request.method).toBe('POST');
    expect((upload.request.body as FormData).get('files')).toBeInstanceOf(File);
    expect(byTestId('attachment-chip')?.getAttribute('data-status')).toBe('uploading');
    // Send waits for the upload
    const textarea = root().querySelector('textarea') as HTMLTextAreaElement;
    textarea.value = 'read it';
    textarea.dispatchEvent(new Event('input'));
    await fixture.whenStable();
    expect((byTestId('send-button') as HTMLButtonElement).disabled).toBe(true);

    upload.flush({ attachments: [RECEIPT] });
    await fixture.whenStable();
    expect(byTestId('attachment-chip')?.getAttribute('data-status')).toBe('done');
    expect(byTestId('attachment-chip')?.textContent).toContain('notes.txt');
    expect(byTestId('attachment-chip')?.textContent).toContain('5 B');
    (byTestId('send-button') as HTMLButtonElement).click();
    expect(sent).toEqual([{ text: 'read it', selections: { skills: [], mcp: [] }, attachments: [RECEIPT] }]);
    fixture.componentInstance.clear();
    await fixture.whenStable();
    expect(all('attachment-chip')).toHaveLength(0);
  });

  it('Scenario: A failed upload shows its error and an attachment can be removed before sending', async () => {
    await pick(new File(['x'], 'big.bin'), new File(['y'], 'keep.txt'));
    const [big, keep] = http.match('/api/sessions/c1/attachments');
    big!.flush(
      { type: 'about:blank', title: 'Payload Too Large', status: 413, detail: 'big.bin is larger than 1 KiB, the limit for one file', code: 'attachment_too_large' },
      { status: 413, statusText: 'Payload Too Large' },
    );
    keep!.flush({ attachments: [{ ...RECEIPT, name: 'keep.txt', path: 'attachments/c1/keep.txt' }] });
    await fixture.whenStable();
    expect(byTestId('attachment-error')?.textContent).toContain('larger than 1 KiB');
    const removes = all('attachment-remove');
    expect(removes.map((button) => button.getAttribute('aria-label'))).toEqual(['Remove big.bin', 'Remove keep.txt']);
    removes[1]!.click();
    await fixture.whenStable();
    const removal = http.expectOne('/api/sessions/c1/attachments/keep.txt');
    expect(removal.request.method).toBe('DELETE');
    removal.flush(null, { status: 204, statusText: 'No Content' });
    removes[0]!.click();
    await fixture.whenStable();
    expect(all('attachment-chip')).toHaveLength(0);
  });

  it('Scenario: A pasted image is attached', async () => {
    const paste = new Event('paste', { cancelable: true });
    const image = new File([new Uint8Array([0x89, 0x50])], '', { type: 'image/png' });
    Object.defineProperty(paste, 'clipboardData', { value: { files: [image] } });
    root().querySelector('textarea')!.dispatchEvent(paste);
    await fixture.whenStable();
    expect(paste.defaultPrevented).toBe(true);
    const upload = http.expectOne('/api/sessions/c1/attachments');
    expect(((upload.request.body as FormData).get('files') as File).name).toBe('pasted-1.png');
    upload.flush({ attachments: [{ name: 'pasted-1.png', path: 'attachments/c1/pasted-1.png', size: 2, mime: 'image/png' }] });
  });
});
