import { attachmentSources, untrustedSourceOf } from './untrusted-sources';

describe('untrustedSourceOf', () => {
  it('names pages, searches, MCP tools and resources and Skill resources; the server\'s own tools are trusted', () => {
    expect(untrustedSourceOf('web_fetch', '{"url":" https://x.test/a "}')).toEqual({ kind: 'web_fetch', name: 'https://x.test/a' });
    expect(untrustedSourceOf('web_search', '{"query":"cats"}')).toEqual({ kind: 'web_search', name: 'cats' });
    expect(untrustedSourceOf('browser', '{"action":"navigate","url":"https://a.test/"}')).toEqual({ kind: 'browser', name: 'https://a.test/' });
    expect(untrustedSourceOf('browser', '{"action":"snapshot"}')).toEqual({ kind: 'browser', name: 'a browser page' });
    expect(untrustedSourceOf('mcp_hello__say', '{}', { server: 'hello', tool: 'say' })).toEqual({ kind: 'mcp_tool', name: 'hello/say' });
    expect(untrustedSourceOf('mcp_gone__tool', 'not json')).toEqual({ kind: 'mcp_tool', name: 'mcp_gone__tool' });
    expect(untrustedSourceOf('mcp_read_resource', '{"server_name":"docs","uri":"file:///a"}')).toEqual({ kind: 'mcp_resource', name: 'docs file:///a' });
    expect(untrustedSourceOf('skill_read_resource', '{"name":"pdf","path":"ref.md"}')).toEqual({ kind: 'skill_resource', name: 'pdf/ref.md' });
    for (const name of ['list_dir', 'save_memory', 'session_search', 'mcp_prepare', 'mcp_list_resources', 'exec']) {
      expect(untrustedSourceOf(name, '{}')).toBeNull();
    }
  });

  it('Scenario: a file a page downloaded, or an attachment named by another path, is untrusted when read', () => {
    // a browser download lands in the workspace: reading it back later must not launder the page's content
    expect(untrustedSourceOf('read_file', '{"path":"downloads/report.txt"}')).toEqual({ kind: 'browser', name: 'downloads/report.txt' });
    // the same attachment by a path that is not literally `attachments/…`
    for (const path of ['././attachments/c1/x.txt', 'notes/../attachments/c1/x.txt']) {
      expect(untrustedSourceOf('read_file', JSON.stringify({ path }))).toEqual({ kind: 'attachment', name: 'attachments/c1/x.txt' });
    }
    const absolute = '/home/u/workspace/attachments/c1/x.txt';
    expect(untrustedSourceOf('read_file', JSON.stringify({ path: absolute }))).toEqual({ kind: 'attachment', name: absolute });
    expect(untrustedSourceOf('read_file', '{"path":"./downloads/../downloads/a.pdf"}')?.kind).toBe('browser');
    expect(untrustedSourceOf('read_file', '{"path":"notes/todo.md"}')).toBeNull();
  });

  it('a delegate whose child could read untrusted content is untrusted, named by its task', () => {
    expect(untrustedSourceOf('delegate', '{"task":"read it","tools":["web_fetch"]}')).toEqual({ kind: 'subagent', name: 'read it' });
    expect(untrustedSourceOf('delegate', '{"task":"anything"}')).toEqual({ kind: 'subagent', name: 'anything' });
    expect(untrustedSourceOf('delegate', '{"task":"mcp","tools":["mcp_docs__search"]}')?.kind).toBe('subagent');
    expect(untrustedSourceOf('delegate', '{"task":"files","tools":["list_dir","glob","write_file"]}')).toBeNull();
  });

  it('keeps a long name short and survives bad arguments', () => {
    expect(untrustedSourceOf('web_fetch', JSON.stringify({ url: `https://x.test/${'a'.repeat(1000)}` }))?.name).toHaveLength(300);
    expect(untrustedSourceOf('web_fetch', '[')).toEqual({ kind: 'web_fetch', name: 'a web page' });
  });
});

describe('attachments, marked messages and summaries', () => {
  const receipt = { name: 'a.txt', path: 'attachments/c1/a.txt', size: 3, mime: 'text/plain' };

  it('a file uploaded to a chat is an attachment source, by message and by read_file', () => {
    expect(attachmentSources([receipt])).toEqual([{ kind: 'attachment', name: 'attachments/c1/a.txt' }]);
    expect(untrustedSourceOf('read_file', '{"path":"./attachments/c1/a.txt"}')).toEqual({ kind: 'attachment', name: 'attachments/c1/a.txt' });
    expect(untrustedSourceOf('read_file', '{"path":"notes/attachments.txt"}')).toBeNull();
  });

});
