import type { AttachmentReceipt } from '@cashcode/contracts';

import { historyLoaded } from '../history-merge';
import { activateChat, userMessageSent } from '../session-reducers';
import { INITIAL_CHAT_STATE } from '../thread-updates';
import { buildMessageFrame } from '../composer-rules';
import {
  chipOfReceipt,
  extensionFor,
  filesOf,
  formatFileSize,
  normalizeAttachments,
  uploadedReceipts,
  type AttachmentChip,
} from './attachment-rules';

const RECEIPT: AttachmentReceipt = { name: 'a.png', path: 'attachments/c1/a.png', size: 2048, mime: 'image/png' };

describe('attachment rules', () => {
  it('formats sizes as people read them', () => {
    expect(formatFileSize(0)).toBe('0 B');
    expect(formatFileSize(1023)).toBe('1023 B');
    expect(formatFileSize(1536)).toBe('1.5 KB');
    expect(formatFileSize(20 * 1024)).toBe('20 KB');
    expect(formatFileSize(3 * 1024 * 1024)).toBe('3 MB');
    expect(formatFileSize(-1)).toBe('');
  });

  it('names pasted files without a name and keeps named ones', () => {
    const named = new File(['x'], 'notes.txt', { type: 'text/plain' });
    const pasted = new File(['y'], '', { type: 'image/png' });
    const files = filesOf([named, pasted], (index, type) => `pasted-${index + 1}.${extensionFor(type)}`);
    expect(files.map((file) => file.name)).toEqual(['notes.txt', 'pasted-2.png']);
    expect(files[1]?.type).toBe('image/png');
    expect(filesOf(null, () => 'x')).toEqual([]);
    expect(extensionFor('application/zip')).toBe('bin');
  });

  it('sends only the uploaded files, in order', () => {
    const chips: AttachmentChip[] = [
      chipOfReceipt(RECEIPT, 1),
      { key: 2, name: 'b.txt', size: 1, status: 'uploading', progress: 0.5 },
      { key: 3, name: 'c.txt', size: 1, status: 'error', progress: 0, error: 'too large' },
    ];
    expect(uploadedReceipts(chips)).toEqual([RECEIPT]);
  });

  it('Scenario: The send frame carries the attachment paths', () => {
    const result = buildMessageFrame({
      chatId: 'c1',
      text: 'look',
      selection: { provider: 'ollama', model: 'm' },
      attachments: [RECEIPT.path],
    });
    expect(result).toEqual({
      ok: true,
      frame: { type: 'message', chat_id: 'c1', content: 'look', metadata: { llm: { provider: 'ollama', model: 'm' } }, attachments: [RECEIPT.path] },
    });
    const without = buildMessageFrame({ chatId: 'c1', text: 'look', selection: { provider: 'ollama', model: 'm' }, attachments: [] });
    expect(without.ok && 'attachments' in without.frame).toBe(false);
  });

  it('keeps the attachments of a sent message and of loaded history', () => {
    const sent = userMessageSent(activateChat(INITIAL_CHAT_STATE, 'c1'), 'c1', 'look', { llm: { provider: 'ollama', model: 'm' } }, [RECEIPT]);
    expect(sent.threads['c1']?.messages.at(-1)?.attachments).toEqual([RECEIPT]);
    const loaded = historyLoaded(activateChat(INITIAL_CHAT_STATE, 'c1'), 'c1', [
      { role: 'user', content: 'look', attachments: [RECEIPT, { name: 1 } as unknown as AttachmentReceipt] },
    ]);
    expect(loaded.threads['c1']?.messages[0]?.attachments).toEqual([RECEIPT]);
    expect(normalizeAttachments('nope')).toEqual([]);
  });
});
