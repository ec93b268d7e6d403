/**
 * Argument readers shared by the built-in tools. A missing or mistyped argument throws ToolInputError, which the
 * registry returns to the model as `Error executing <tool>: <message>` with the retry hint (openspec agent-runner).
 */
import { ToolInputError } from '../agent-tool';

export function requireString(args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (value === undefined || value === null) throw new ToolInputError(`missing required argument '${name}'`);
  if (typeof value !== 'string') throw new ToolInputError(`argument '${name}' must be a string`);
  return value;
}

export function optionalString(args: Record<string, unknown>, name: string, fallback: string): string {
  const value = args[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string') throw new ToolInputError(`argument '${name}' must be a string`);
  return value;
}

/** An optional integer within [min, max]; numeric strings are accepted (models sometimes quote numbers). */
export function optionalInteger(
  args: Record<string, unknown>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = args[name];
  if (raw === undefined || raw === null || raw === '') return fallback;
  const value = typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new ToolInputError(`argument '${name}' must be an integer`);
  }
  if (value < min || value > max) throw new ToolInputError(`argument '${name}' must be between ${min} and ${max}`);
  return value;
}

/** Formats seconds the way the tool messages show them: `30.0s`, `0.5s`. */
export function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** Formats a byte count for messages: `2 MiB`, `256 KiB`, `900 bytes`. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${+(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

/** A tool error result: the text starts with `Error` (openspec agent-runner) and `ok` is false. */
export function toolError(message: string): { model: string; ok: false } {
  return { model: `Error: ${message}`, ok: false };
}
