import { hashedWrapperName, MAX_TOOL_NAME, normalizeInputSchema, wrapperName } from './mcp-tool-schema';

describe('wrapperName', () => {
  it('Scenario: a plain tool name becomes mcp_<server>_<tool>', () => {
    expect(wrapperName('weather', 'get_forecast')).toBe('mcp_weather_get_forecast');
    expect(wrapperName('everything', 'get-tiny-image')).toBe('mcp_everything_get-tiny-image');
  });

  it('Scenario: odd characters and over-long names give a valid, distinct name', () => {
    const dotted = wrapperName('fs', 'files.read');
    expect(dotted).toMatch(/^mcp_fs_files_read_[0-9a-f]{8}$/);
    expect(dotted).not.toBe(wrapperName('fs', 'files_read'));
    const long = wrapperName('a'.repeat(40), 'b'.repeat(40));
    expect(long.length).toBe(MAX_TOOL_NAME);
    expect(long).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(long).not.toBe(wrapperName('a'.repeat(40), `${'b'.repeat(39)}c`));
  });

  it('Scenario: the hashed variant differs from the plain name (collisions across servers)', () => {
    // server `a` tool `b_c` and server `a_b` tool `c` share the plain name
    expect(wrapperName('a', 'b_c')).toBe(wrapperName('a_b', 'c'));
    expect(hashedWrapperName('a_b', 'c')).not.toBe(wrapperName('a', 'b_c'));
  });
});

describe('normalizeInputSchema', () => {
  it('Scenario: the root gets object defaults and loses $schema', () => {
    expect(normalizeInputSchema(undefined)).toEqual({ type: 'object', properties: {}, required: [] });
    expect(normalizeInputSchema({ $schema: 'x', properties: { a: { type: 'string' } } })).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: [],
    });
  });

  it('Scenario: a nullable type list becomes type + nullable, recursively', () => {
    const schema = normalizeInputSchema({
      type: 'object',
      properties: {
        a: { type: ['string', 'null'] },
        b: { type: ['string', 'number', 'null'] },
        c: { type: 'array', items: { type: ['integer', 'null'] } },
        d: { type: 'object', properties: { e: { type: ['boolean', 'null'] } } },
      },
      required: ['a'],
    });
    const props = schema.properties as Record<string, Record<string, unknown>>;
    expect(props['a']).toEqual({ type: 'string', nullable: true });
    expect(props['b']).toEqual({ type: ['string', 'number', 'null'] });
    expect(props['c']).toEqual({ type: 'array', items: { type: 'integer', nullable: true } });
    expect(props['d']).toEqual({ type: 'object', properties: { e: { type: 'boolean', nullable: true } } });
    expect(schema.required).toEqual(['a']);
  });

  it('Scenario: property sub-schemas get no injected object defaults', () => {
    const schema = normalizeInputSchema({
      type: 'object',
      properties: { n: { anyOf: [{ type: 'integer' }, { type: 'null' }] }, s: { type: 'string' } },
    });
    expect(schema.properties).toEqual({ n: { anyOf: [{ type: 'integer' }, { type: 'null' }] }, s: { type: 'string' } });
  });
});
