import { ToolCallAccumulator } from './tool-call-accumulator';

function accumulate(pieces: unknown[]) {
  const accumulator = new ToolCallAccumulator();
  for (const piece of pieces) accumulator.add(piece);
  return accumulator.result().map((call) => [call.id, call.function.name, call.function.arguments]);
}

describe('ToolCallAccumulator', () => {
  it('joins the fragments of each index (the OpenAI shape)', () => {
    expect(
      accumulate([
        { index: 0, id: 'a', type: 'function', function: { name: 'read_file', arguments: '{"pa' } },
        { index: 1, id: 'b', type: 'function', function: { name: 'list_dir', arguments: '' } },
        { index: 0, function: { arguments: 'th":"x"}' } },
        { index: 1, function: { arguments: '{}' } },
      ]),
    ).toEqual([
      ['a', 'read_file', '{"path":"x"}'],
      ['b', 'list_dir', '{}'],
    ]);
  });

  it('takes arguments sent as a JSON object, and whole calls without ids', () => {
    expect(
      accumulate([
        { index: 0, function: { name: 'read_file', arguments: { path: 'x' } } },
        { index: 1, function: { name: 'list_dir', arguments: '{"path":"."}' } },
      ]),
    ).toEqual([
      ['', 'read_file', '{"path":"x"}'],
      ['', 'list_dir', '{"path":"."}'],
    ]);
  });

  it('separates calls all sent at index 0 with their own ids', () => {
    expect(
      accumulate([
        { index: 0, id: 'a', function: { name: 'read_file', arguments: '{"path":"x"}' } },
        { index: 0, id: 'b', function: { name: 'read_file', arguments: '{"path":"y"}' } },
      ]),
    ).toEqual([
      ['a', 'read_file', '{"path":"x"}'],
      ['b', 'read_file', '{"path":"y"}'],
    ]);
  });

  it('without an index: a name after a complete call starts a new call, a repeated or split name continues one', () => {
    expect(
      accumulate([
        { function: { name: 'read_', arguments: '' } },
        { function: { name: 'file', arguments: '{"path":' } },
        { function: { name: 'read_file', arguments: '"x"}' } },
        { function: { name: 'read_file', arguments: '{"path":"y"}' } },
        { function: { name: 'list_dir', arguments: '{}' } },
      ]),
    ).toEqual([
      ['', 'read_file', '{"path":"x"}'],
      ['', 'read_file', '{"path":"y"}'],
      ['', 'list_dir', '{}'],
    ]);
  });

  it('keeps a name repeated in every piece of one index once', () => {
    expect(
      accumulate([
        { index: 0, id: 'a', function: { name: 'read_file', arguments: '{"path":' } },
        { index: 0, function: { name: 'read_file', arguments: '"x"}' } },
      ]),
    ).toEqual([['a', 'read_file', '{"path":"x"}']]);
  });

  it('ignores empty lists and pieces that are not objects', () => {
    expect(accumulate([null, 'x', { index: 0 }])).toEqual([]);
  });
});
