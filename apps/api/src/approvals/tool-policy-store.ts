/**
 * The stored tool policy: `<data>/approvals/tool-policies.json` (atomic writes, mode 0600, pretty JSON):
 * `{"version": 1, "defaults": {risk: policy}, "tools": {key: policy}, "servers": {server: policy}, "rules": [...]}`.
 * A missing file means the defaults (exec, non-read-only MCP tools and memory writes from untrusted context ask,
 * everything else allowed); a file that is
 * not valid stops the server at start with an error naming it. Writes are serialised; the state in memory changes
 * only after the file is on disk.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import {
  isErrorCode,
  isRecord,
  MCP_SERVER_NAME_PATTERN,
  TOOL_POLICIES,
  TOOL_RISKS,
  type StandingRule,
  type StandingRuleScope,
  type ToolPolicy,
  type ToolRisk,
} from '@cashcode/contracts';
import { writeJsonAtomic } from '../common/atomic-file';
import { mkdirPrivate } from '../common/private-fs';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { SerialQueue } from '../common/keyed-queue';

export const DEFAULT_RISK_POLICIES: Readonly<Record<ToolRisk, ToolPolicy>> = {
  read: 'allow',
  write: 'allow',
  network: 'allow',
  exec: 'ask',
  mcp: 'ask',
  // a memory or Skill write from a turn that read untrusted content (call-evaluation.ts)
  memory_write: 'ask',
  schedule_task: 'ask',
  // a browser click, typing or key that submits a form, or any of them outside the allowed domains (call-evaluation.ts)
  browser_action: 'ask',
};

export const MAX_POLICY_ENTRIES = 1000;
export const MAX_RULES = 1000;
/** built-in tool names and wrapper-style names */
export const TOOL_KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** MCP tools: `<server>/<tool>` (the tool name as its server spells it, no control characters or slash) */
export const MCP_TOOL_KEY_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}\/[\x21-\x2e\x30-\x7e\u00a0-\uffff]{1,128}$/u;
export const RULE_PROGRAM_PATTERN = /^(?:[A-Za-z0-9_][A-Za-z0-9._+-]{0,127}|\/[A-Za-z0-9._+\-/]{1,255})$/;
/** `exec_command` rules: at most this many words and characters (the exec tool's command limit) */
export const MAX_RULE_ARGV_WORDS = 256;
export const MAX_RULE_ARGV_CHARS = 16_384;

/** The argv of an `exec_command` rule: a program name found through PATH, then words without NUL or line breaks. */
export function isRuleArgv(value: unknown): value is string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_RULE_ARGV_WORDS) return false;
  let chars = 0;
  for (const word of value) {
    if (typeof word !== 'string' || /[\0\n\r]/.test(word)) return false;
    chars += word.length;
  }
  return chars <= MAX_RULE_ARGV_CHARS && /^[A-Za-z0-9_][A-Za-z0-9._+-]{0,127}$/.test(value[0] as string);
}

export interface ToolPolicyState {
  defaults: Record<ToolRisk, ToolPolicy>;
  tools: Record<string, ToolPolicy>;
  servers: Record<string, ToolPolicy>;
  rules: StandingRule[];
}

export class ToolPolicyFileError extends Error {
  constructor(path: string, detail: string) {
    super(`Invalid tool policy file ${path}: ${detail}`);
    this.name = 'ToolPolicyFileError';
  }
}

export function isToolPolicy(value: unknown): value is ToolPolicy {
  return typeof value === 'string' && (TOOL_POLICIES as readonly string[]).includes(value);
}

export function isToolKey(key: string): boolean {
  return TOOL_KEY_PATTERN.test(key) || MCP_TOOL_KEY_PATTERN.test(key);
}

/** A valid scope, or null. */
export function parseScope(value: unknown): StandingRuleScope | null {
  if (!isRecord(value)) return null;
  switch (value['kind']) {
    case 'exec_program': {
      const program = value['program'];
      return typeof program === 'string' && RULE_PROGRAM_PATTERN.test(program) ? { kind: 'exec_program', program } : null;
    }
    case 'exec_command': {
      const argv = value['argv'];
      return isRuleArgv(argv) ? { kind: 'exec_command', argv: [...argv] } : null;
    }
    case 'tool': {
      const tool = value['tool'];
      return typeof tool === 'string' && TOOL_KEY_PATTERN.test(tool) ? { kind: 'tool', tool } : null;
    }
    case 'mcp_tool': {
      const server = value['server'];
      const tool = value['tool'];
      return typeof server === 'string' &&
        MCP_SERVER_NAME_PATTERN.test(server) &&
        typeof tool === 'string' &&
        MCP_TOOL_KEY_PATTERN.test(`${server}/${tool}`)
        ? { kind: 'mcp_tool', server, tool }
        : null;
    }
    default:
      return null;
  }
}

export function sameScope(a: StandingRuleScope, b: StandingRuleScope): boolean {
  if (a.kind === 'exec_program' && b.kind === 'exec_program') return a.program === b.program;
  if (a.kind === 'exec_command' && b.kind === 'exec_command') {
    return a.argv.length === b.argv.length && a.argv.every((word, index) => word === b.argv[index]);
  }
  if (a.kind === 'tool' && b.kind === 'tool') return a.tool === b.tool;
  if (a.kind === 'mcp_tool' && b.kind === 'mcp_tool') return a.server === b.server && a.tool === b.tool;
  return false;
}

function parseState(raw: unknown, path: string): ToolPolicyState {
  if (!isRecord(raw)) throw new ToolPolicyFileError(path, 'not a JSON object');
  const state: ToolPolicyState = { defaults: { ...DEFAULT_RISK_POLICIES }, tools: {}, servers: {}, rules: [] };
  const defaults = raw['defaults'] ?? {};
  if (!isRecord(defaults)) throw new ToolPolicyFileError(path, '"defaults" must be an object');
  for (const [risk, policy] of Object.entries(defaults)) {
    if (!(TOOL_RISKS as readonly string[]).includes(risk) || !isToolPolicy(policy)) {
      throw new ToolPolicyFileError(path, `bad default ${JSON.stringify(risk)}`);
    }
    state.defaults[risk as ToolRisk] = policy;
  }
  for (const field of ['tools', 'servers'] as const) {
    const map = raw[field] ?? {};
    if (!isRecord(map)) throw new ToolPolicyFileError(path, `"${field}" must be an object`);
    for (const [key, policy] of Object.entries(map)) {
      const validKey = field === 'tools' ? isToolKey(key) : MCP_SERVER_NAME_PATTERN.test(key);
      if (!validKey || !isToolPolicy(policy)) throw new ToolPolicyFileError(path, `bad ${field} entry ${JSON.stringify(key)}`);
      state[field][key] = policy;
    }
  }
  const rules = raw['rules'] ?? [];
  if (!Array.isArray(rules)) throw new ToolPolicyFileError(path, '"rules" must be an array');
  for (const rule of rules) {
    const scope = isRecord(rule) ? parseScope(rule['scope']) : null;
    if (!isRecord(rule) || scope === null || typeof rule['id'] !== 'string' || typeof rule['created_at'] !== 'string') {
      throw new ToolPolicyFileError(path, 'bad rule');
    }
    state.rules.push({ id: rule['id'], scope, created_at: rule['created_at'] });
  }
  return state;
}

function cloneScope(scope: StandingRuleScope): StandingRuleScope {
  return scope.kind === 'exec_command' ? { kind: 'exec_command', argv: [...scope.argv] } : { ...scope };
}

function cloneState(state: ToolPolicyState): ToolPolicyState {
  return {
    defaults: { ...state.defaults },
    tools: { ...state.tools },
    servers: { ...state.servers },
    rules: state.rules.map((rule) => ({ ...rule, scope: cloneScope(rule.scope) })),
  };
}

function sortedRecord<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function newRuleId(): string {
  return `rule_${randomBytes(8).toString('hex')}`;
}

@Injectable()
export class ToolPolicyStore {
  readonly path: string;
  private state: ToolPolicyState = { defaults: { ...DEFAULT_RISK_POLICIES }, tools: {}, servers: {}, rules: [] };
  /** one writer at a time */
  private readonly writes = new SerialQueue();

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.path = join(config.dataDir, 'approvals', 'tool-policies.json');
  }

  /** Reads the file (missing → defaults). Throws ToolPolicyFileError for a broken file. */
  async load(): Promise<void> {
    let text: string;
    try {
      text = await fs.readFile(this.path, 'utf8');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT')) return;
      throw error;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      throw new ToolPolicyFileError(this.path, 'not valid JSON');
    }
    this.state = parseState(raw, this.path);
  }

  /** The state in force (a copy). */
  snapshot(): ToolPolicyState {
    return cloneState(this.state);
  }

  /** The live state, read-only (hot path of every tool call). */
  get current(): Readonly<ToolPolicyState> {
    return this.state;
  }

  /** Applies a change atomically: the new state is written, then installed; returns it. */
  update(change: (draft: ToolPolicyState) => void): Promise<ToolPolicyState> {
    return this.writes.run(async () => {
      const draft = cloneState(this.state);
      change(draft);
      await this.persist(draft);
      this.state = draft;
      return cloneState(draft);
    });
  }

  private async persist(state: ToolPolicyState): Promise<void> {
    await mkdirPrivate(dirname(this.path));
    await writeJsonAtomic(
      this.path,
      {
        version: 1,
        defaults: state.defaults,
        tools: sortedRecord(state.tools),
        servers: sortedRecord(state.servers),
        rules: state.rules,
      },
      { mode: 0o600 },
    );
  }
}
