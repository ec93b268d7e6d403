/**
 * A small reader of the Prometheus text exposition format for the metrics tests (prom-client writes it but cannot read
 * it): one sample per line, `name{label="value",…} number`, comments (`# HELP`, `# TYPE`) skipped.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Reads the label set between the braces: `a="x",b="y \"quoted\""` (escapes `\\`, `\"`, `\n`). */
function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0 || text[eq + 1] !== '"') throw new Error(`bad label set: ${text}`);
    const key = text.slice(i, eq).trim();
    let value = '';
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\\') {
        j++;
        value += text[j] === 'n' ? '\n' : text[j];
      } else {
        value += text[j];
      }
    }
    labels[key] = value;
    i = j + 1;
    if (text[i] === ',') i++;
  }
  return labels;
}

export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const brace = line.indexOf('{');
    const space = line.lastIndexOf(' ');
    if (space < 0) throw new Error(`bad sample line: ${line}`);
    if (brace >= 0 && brace < space) {
      const close = line.lastIndexOf('}');
      samples.push({ name: line.slice(0, brace), labels: parseLabels(line.slice(brace + 1, close)), value: Number(line.slice(close + 1)) });
    } else {
      samples.push({ name: line.slice(0, space), labels: {}, value: Number(line.slice(space + 1)) });
    }
  }
  return samples;
}

/**
 * The value of the sample with exactly these labels (0 when there is none: a counter that never moved has no series
 * yet).
 */
export function sampleValue(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels);
  const found = samples.find(
    (s) => s.name === name && Object.keys(s.labels).length === wanted.length && wanted.every(([k, v]) => s.labels[k] === v),
  );
  return found?.value ?? 0;
}
