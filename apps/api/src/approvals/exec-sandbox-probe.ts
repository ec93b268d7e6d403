/**
 * Whether `exec` commands run confined right now (the `sandboxed` field of an exec `approval_request`). The exec
 * sandbox service provides this token; without it, commands are reported as not sandboxed.
 */
export const EXEC_SANDBOX_PROBE = Symbol('EXEC_SANDBOX_PROBE');

export interface ExecSandboxProbe {
  sandboxed(): boolean;
}

export const NO_EXEC_SANDBOX: ExecSandboxProbe = { sandboxed: () => false };
