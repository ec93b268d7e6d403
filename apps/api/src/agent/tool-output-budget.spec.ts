import { artifactIdFor, artifactPreview, budgetToolResult, PREVIEW_HEAD_CHARS, type ArtifactSink } from './tool-output-budget';

function sink(accepts = true): ArtifactSink & { saved: Map<string, string> } {
  const saved = new Map<string, string>();
  return {
    saved,
    saveArtifact: async (chatId, id, text) => {
      if (!accepts) return false;
      saved.set(`${chatId}/${id}`, text);
      return true;
    },
  };
}

describe('tool output budget', () => {
  it('Scenario: a result within the budget goes whole and nothing is kept', async () => {
    const s = sink();
    expect(await budgetToolResult(s, 8_000, 'c', 'call_1', 'read_file', 'x'.repeat(8_000))).toBeNull();
    expect(await budgetToolResult(s, 0, 'c', 'call_1', 'read_file', 'x'.repeat(50_000))).toBeNull();
    expect(await budgetToolResult(s, 8_000, 'c', 'call_1', 'read_artifact', 'x'.repeat(50_000))).toBeNull();
    // 8,001 UTF-16 units but fewer code points than the budget: fits
    expect(await budgetToolResult(s, 8_000, 'c', 'call_1', 'read_file', '🙂'.repeat(4_001))).toBeNull();
    expect(s.saved.size).toBe(0);
  });

  it('Scenario: a result over the budget becomes a preview with head, tail and the artifact id', async () => {
    const s = sink();
    const text = `HEAD${'a'.repeat(20_000)}${'b'.repeat(2_000)}TAIL`;
    const preview = await budgetToolResult(s, 8_000, 'chat', 'call_x', 'web_fetch', text);
    expect(s.saved.get('chat/call_x')).toBe(text);
    expect(preview).toMatch(/^HEAD/);
    expect(preview).toMatch(/TAIL$/);
    expect(preview).toContain('artifact "call_x"');
    expect(preview).toContain(`"offset":${PREVIEW_HEAD_CHARS}`);
    expect(preview!.length).toBeLessThan(4_600);
    // a chat that cannot keep artifacts (no directory): the result goes whole
    expect(await budgetToolResult(sink(false), 8_000, 'chat', 'call_x', 'web_fetch', text)).toBeNull();
  });

  it('Scenario: a call id that is not a safe file name gets a hashed artifact id', () => {
    expect(artifactIdFor('call_abc-1')).toBe('call_abc-1');
    const hashed = artifactIdFor('../../etc/passwd');
    expect(hashed).toMatch(/^call-[0-9a-f]{24}$/);
    expect(artifactIdFor('../../etc/passwd')).toBe(hashed);
    expect(artifactPreview('x'.repeat(10_000), hashed)).toContain(hashed);
  });
});
