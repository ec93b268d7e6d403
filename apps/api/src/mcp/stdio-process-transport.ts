/**
 * The MCP stdio client transport, with what SECURITY.md ("Child processes") asks of a child process and the SDK's
 * StdioClientTransport cannot do: the server runs in its own process group (`detached`), so disconnect and shutdown
 * kill the whole group (a server started through `npx` or a shell wrapper leaves no orphans). Framing is the SDK's
 * (ReadBuffer / serializeMessage); the environment is the SDK's safe baseline plus the configured variables;
 * `shell: false`; stderr is read and reported as metadata only (never its content).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { mcpSdk } from './mcp-sdk';

export interface StdioProcessOptions {
  command: string;
  args: string[];
  /** added to the safe baseline (stdioBaselineEnv) */
  env: Record<string, string>;
  cwd: string;
  /** stderr activity: characters and lines received since the last report */
  onStderr?: (chars: number, lines: number) => void;
  /** how long close() waits for the server to exit after stdin closes, and after SIGTERM */
  gracePeriodMs?: number;
}

const USE_PROCESS_GROUP = process.platform !== 'win32';

/**
 * The variables a child inherits from CashCode's environment: the SDK's safe set (HOME, LOGNAME, PATH, SHELL, TERM,
 * USER; their Windows equivalents) plus locale and temporary-directory variables. Nothing else: no API keys, no
 * CASHCODE_* settings.
 */
const EXTRA_BASELINE = ['LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'TMPDIR', 'TMP', 'TEMP', 'TZ'];

export function stdioBaselineEnv(source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = { ...mcpSdk.stdioClient().getDefaultEnvironment() };
  for (const name of EXTRA_BASELINE) {
    const value = source[name];
    if (value !== undefined && !value.startsWith('()')) env[name] = value;
  }
  for (const name of Object.keys(env)) if (name.startsWith('CASHCODE_')) delete env[name];
  return env;
}
/** every live child's pid, killed synchronously if this process exits without a clean shutdown */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    if (USE_PROCESS_GROUP) process.kill(-pid, signal);
    else process.kill(pid, signal);
  } catch {
    // already gone
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
  });
}

export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private child: ChildProcess | undefined;
  private readonly readBuffer: ReadBuffer = new (mcpSdk.stdioShared().ReadBuffer)();
  private closed = false;
  private exited: Promise<void> = Promise.resolve();
  private stderrChars = 0;
  private stderrLines = 0;
  private stderrTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: StdioProcessOptions) {}

  /** pid of the server process (also its process group id), while running */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    if (this.child) throw new Error('StdioProcessTransport already started');
    installExitHook();
    return new Promise((resolve, reject) => {
      const child = spawn(this.options.command, this.options.args, {
        cwd: this.options.cwd,
        env: { ...stdioBaselineEnv(), ...this.options.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        detached: USE_PROCESS_GROUP,
        windowsHide: true,
      });
      this.child = child;
      this.exited = new Promise((done) => child.once('close', () => done()));
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => {
        if (child.pid !== undefined) liveGroups.add(child.pid);
        resolve();
      });
      child.once('close', () => {
        if (child.pid !== undefined) {
          liveGroups.delete(child.pid);
          // the server is gone: take anything it started with it
          killGroup(child.pid, 'SIGKILL');
        }
        this.flushStderr();
        this.child = undefined;
        this.readBuffer.clear();
        if (!this.closed) {
          this.closed = true;
          this.onclose?.();
        }
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => {
        this.readBuffer.append(chunk);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.readBuffer.readMessage();
          } catch (error) {
            this.onerror?.(error instanceof Error ? error : new Error(String(error)));
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (text: string) => {
        this.stderrChars += text.length;
        this.stderrLines += text.split('\n').length - 1;
        this.stderrTimer ??= setTimeout(() => this.flushStderr(), 1000);
        this.stderrTimer.unref();
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) {
        reject(new Error('Not connected'));
        return;
      }
      if (stdin.write(mcpSdk.stdioShared().serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Closes stdin, waits for the server to exit, then SIGTERM and SIGKILL to its whole process group. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const grace = this.options.gracePeriodMs ?? 2000;
    const waitExit = (ms: number) =>
      Promise.race([this.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
    try {
      child.stdin?.end();
    } catch {
      // ignore
    }
    if (!(await waitExit(grace)) && child.pid !== undefined) {
      killGroup(child.pid, 'SIGTERM');
      if (!(await waitExit(grace))) {
        killGroup(child.pid, 'SIGKILL');
        await waitExit(grace);
      }
    }
  }

  private flushStderr(): void {
    if (this.stderrTimer) clearTimeout(this.stderrTimer);
    this.stderrTimer = undefined;
    if (this.stderrChars === 0) return;
    const chars = this.stderrChars;
    const lines = this.stderrLines;
    this.stderrChars = 0;
    this.stderrLines = 0;
    this.options.onStderr?.(chars, lines);
  }
}
