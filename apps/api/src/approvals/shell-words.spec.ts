import fc from 'fast-check';
import { hostileLine, lineText, mixedLine, strictHostileLine, subsetParts } from '../../test/support/shell-lines';
import { analyzeCommand, commandSegments } from './command-analysis';
import { LAUNCHER_PROGRAMS } from './exec-programs';
import { readShellLine } from './shell-words';

const RUNS = { numRuns: 2000 };

describe('the exec line reader (dash subset)', () => {
  it('Scenario: the reader never throws and refuses every construct outside the subset', () => {
    const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ maxLength: 80 }), mixedLine);
    fc.assert(
      fc.property(anyText, (line) => {
        for (const result of [readShellLine(line), analyzeCommand(line), commandSegments(line)]) {
          expect(typeof result.ok).toBe('boolean');
          if (!result.ok) expect(result.reason).not.toBe('');
        }
      }),
      RUNS,
    );
    fc.assert(
      fc.property(hostileLine, (line) => {
        expect(commandSegments(line).ok).toBe(false);
        expect(analyzeCommand(line).ok).toBe(false);
      }),
      RUNS,
    );
    fc.assert(
      fc.property(strictHostileLine, (line) => {
        expect(analyzeCommand(line).ok).toBe(false);
      }),
      RUNS,
    );
  });

  it('Scenario: spans slice the line back into its commands', () => {
    fc.assert(
      fc.property(subsetParts, (parts) => {
        const { line, commandTexts } = lineText(parts);
        const segments = commandSegments(line);
        if (!segments.ok) throw new Error(`refused ${JSON.stringify(line)}: ${segments.reason}`);
        expect(segments.commands.map((c) => line.slice(c.start, c.end))).toEqual(commandTexts);
        expect(segments.commands.map((c) => c.program)).toEqual(parts.commands.map((c) => c.program));
        const analysis = analyzeCommand(line);
        const launcher = parts.commands.some((c) => LAUNCHER_PROGRAMS.has(c.program));
        if (!analysis.ok && launcher) return;
        if (!analysis.ok) throw new Error(`refused ${JSON.stringify(line)}: ${analysis.reason}`);
        expect(launcher).toBe(false);
        expect(analysis.commands.map((c) => line.slice(c.span.start, c.span.end))).toEqual(commandTexts);
      }),
      RUNS,
    );
    // any accepted line: spans in order, apart, and only blanks and separators between them; a span read alone
    // gives the same command
    fc.assert(
      fc.property(mixedLine, (line) => {
        const reading = readShellLine(line);
        if (!reading.ok) return;
        let previous = 0;
        for (const command of reading.commands) {
          expect(command.span.start).toBeGreaterThanOrEqual(previous);
          expect(line.slice(previous, command.span.start)).toMatch(/^[ \t;&|]*$/);
          const alone = readShellLine(line.slice(command.span.start, command.span.end));
          expect(alone.ok && alone.commands.length === 1 && alone.commands[0]?.words.map((w) => w.value)).toEqual(
            command.words.map((w) => w.value),
          );
          previous = command.span.end;
        }
        expect(line.slice(previous)).toMatch(/^[ \t;]*$/);
      }),
      RUNS,
    );
  });

  it('Scenario: words are read as dash reads them', () => {
    const words = (line: string) => {
      const reading = readShellLine(line);
      return reading.ok ? reading.commands.map((c) => c.words.map((w) => w.value)) : reading.reason;
    };
    expect(words(`l's' -la "a b" 'c;d' x"'"y`)).toEqual([['ls', '-la', 'a b', 'c;d', "x'y"]]);
    expect(words('git log HEAD~1 --format=%h user@host:a,b')).toEqual([['git', 'log', 'HEAD~1', '--format=%h', 'user@host:a,b']]);
    expect(words("echo '' \"\" x")).toEqual([['echo', '', '', 'x']]);
    expect(words('ls;id&&wc||cat|head ;')).toEqual([['ls'], ['id'], ['wc'], ['cat'], ['head']]);
    expect(words('2>&1 ls >/dev/null -l 2>> /dev/null')).toEqual([['ls', '-l']]);
    expect(readShellLine('ls 2>&1').ok && readShellLine('ls 2>&1')).toMatchObject({
      commands: [{ program: 'ls', redirects: [{ op: '>&', fd: 2, target: '1' }], span: { start: 0, end: 7 } }],
    });
    // dash reads `12>x` as the word 12 and `>x`, bash as descriptor 12: refused either way
    expect(words('echo 12>x')).toBe('redirection written against a word');
    expect(words('echo a>/dev/null')).toBe('redirection written against a word');
    expect(words('ls 2>&1>/dev/null')).toBe('redirection written against a word');
    expect(words('A=1 ls')).toEqual([['A=1', 'ls']]);
    expect(readShellLine("'A=1' ls").ok && readShellLine("'A=1' ls")).toMatchObject({ commands: [{ assignments: 0, program: 'A=1' }] });
  });
});
