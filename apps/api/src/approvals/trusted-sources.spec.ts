import { isTrustedBy, parseTrustedSource, untrustedSourcesThatCount } from './trusted-sources';

describe('trusted sources', () => {
  const trusted = [
    { kind: 'mcp_server' as const, name: 'my-notes' },
    { kind: 'domain' as const, name: 'example.com' },
    { kind: 'skill' as const, name: 'team-notes' },
  ];

  it('covers the tools and resources of a trusted MCP server, a domain and its subdomains, and a Skill\'s files', () => {
    expect(isTrustedBy({ kind: 'mcp_tool', name: 'my-notes/search' }, trusted)).toBe(true);
    expect(isTrustedBy({ kind: 'mcp_resource', name: 'my-notes file:///a' }, trusted)).toBe(true);
    expect(isTrustedBy({ kind: 'mcp_tool', name: 'my-notes-evil/search' }, trusted)).toBe(false);
    expect(isTrustedBy({ kind: 'web_fetch', name: 'https://docs.example.com/a' }, trusted)).toBe(true);
    expect(isTrustedBy({ kind: 'web_fetch', name: 'https://example.com.evil.test/a' }, trusted)).toBe(false);
    expect(isTrustedBy({ kind: 'web_fetch', name: 'https://notexample.com/' }, trusted)).toBe(false);
    // a search's results come from anywhere: a domain never covers them
    expect(isTrustedBy({ kind: 'web_search', name: 'example.com' }, trusted)).toBe(false);
    expect(isTrustedBy({ kind: 'skill_resource', name: 'team-notes/references/a.md' }, trusted)).toBe(true);
    expect(isTrustedBy({ kind: 'attachment', name: 'attachments/c/a.txt' }, trusted)).toBe(false);
    expect(isTrustedBy({ kind: 'channel_message', name: 'my-notes/x' }, trusted)).toBe(false);
  });

  it('keeps the sources no trusted source covers', () => {
    const sources = [
      { kind: 'mcp_tool' as const, name: 'my-notes/search' },
      { kind: 'web_fetch' as const, name: 'https://evil.test/' },
    ];
    expect(untrustedSourcesThatCount(sources, trusted)).toEqual([{ kind: 'web_fetch', name: 'https://evil.test/' }]);
    expect(untrustedSourcesThatCount(undefined, trusted)).toEqual([]);
  });

  it('accepts only names of the kind\'s form', () => {
    expect(parseTrustedSource({ kind: 'domain', name: 'docs.example.com' })).toEqual({ kind: 'domain', name: 'docs.example.com' });
    expect(parseTrustedSource({ kind: 'domain', name: 'Example.com' })).toBeNull();
    expect(parseTrustedSource({ kind: 'domain', name: 'example.com/path' })).toBeNull();
    expect(parseTrustedSource({ kind: 'mcp_server', name: 'a/b' })).toBeNull();
    expect(parseTrustedSource({ kind: 'skill', name: '' })).toBeNull();
    expect(parseTrustedSource({ kind: 'web_fetch', name: 'x' })).toBeNull();
  });
});
