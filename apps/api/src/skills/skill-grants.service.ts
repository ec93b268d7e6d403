/**
 * Hash-bound grants of Skills' pre-approvals (openspec approvals "Requirement: Skills pre-approve only with the
 * owner's grant"). A Skill's `allowed-tools` pre-approve anything only while the owner's grant for that package
 * (`<source>/<name>`) names the package's current content hash (skill-package-hash.ts: SKILL.md and every supporting
 * file). Nothing the model can write raises what it may do: a Skill the agent or evolution creates or changes has no
 * grant, and every change of a package drops its grant (`contentChanged`), so the owner approves again what they see.
 *
 * Grants and revocations by the owner, and the drops on change, are appended to the approvals audit.
 */
import * as path from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { SkillPreApprovals, SkillRecord, SkillSource, ToolRisk } from '@cashcode/contracts';
import { ApprovalAuditLog } from '../approvals/approval-audit';
import { describeAllowedTools } from '../approvals/skill-pre-approval-summary';
import { formatEvent } from '../common/log-format';
import { SKILL_CATALOG, SkillCatalog } from './skill-catalog';
import { SkillGrantStore, type SkillGrant } from './skill-grant-store';
import { packageContentHash, packageFingerprint } from './skill-package-hash';
import { errorName } from './skill-helpers';
import { SkillStore } from './skill-store';
import { SKILL_MESSAGES, SkillError } from './skills.errors';
import { LRUCache } from 'lru-cache';

/** the audit's tool name for grant and revoke entries */
export const SKILL_GRANT_AUDIT_TOOL = 'skill_pre_approvals';
const HASH_CACHE_MAX = 1024;

export const GRANT_MESSAGES = {
  nothingToGrant: (name: string) => `Skill ${name} lists no allowed-tools; there is nothing to grant`,
  hashRequired: 'hash must be the 64-character package hash shown with the Skill (pre_approvals.hash)',
  stale: (name: string) =>
    `Skill ${name} changed since its pre-approvals were shown: the hash given is not its current content. ` +
    'Review what it would pre-approve now and grant again.',
  auditFailed: 'The grant could not be written to the approvals audit; nothing was granted',
} as const;

/** The package content as hashed: what a grant is bound to, and the fingerprint to notice a later change. */
export interface PackageContent {
  hash: string;
  fingerprint: string;
  /** the `allowed-tools` entries of this content (null when absent) */
  allowedTools: string[] | null;
  dir: string;
}

@Injectable()
export class SkillGrantsService {
  private readonly logger = new Logger(SkillGrantsService.name);
  /** package dir → content hash at a fingerprint */
  private readonly hashes = new LRUCache<string, { fingerprint: string; hash: string; allowedTools: string[] | null }>({ max: HASH_CACHE_MAX });

  constructor(
    private readonly store: SkillStore,
    @Inject(SKILL_CATALOG) private readonly catalog: SkillCatalog,
    private readonly grants: SkillGrantStore,
    private readonly audit: ApprovalAuditLog,
  ) {}

  /** Loads the grants, then drops those whose package is gone or changed while the server was stopped. */
  async prepare(): Promise<void> {
    await this.grants.load();
    for (const grant of this.grants.list()) {
      const content = await this.content(grant.source, grant.name);
      if (content === null || content.hash !== grant.hash) {
        await this.drop(grant.source, grant.name, content === null ? 'deleted' : 'changed');
      }
    }
  }

  /**
   * The package as it is on disk now, hashed (cached while its fingerprint holds); null when it cannot be read or
   * changed while it was hashed.
   */
  async content(source: SkillSource, name: string): Promise<PackageContent | null> {
    const dir = path.join(this.store.rootOf(source), name);
    const before = packageFingerprint(dir);
    if (before === null) return null;
    const cached = this.hashes.get(dir);
    if (cached && cached.fingerprint === before) return { ...cached, dir };
    const read = await this.store.readPackage(source, name);
    if (!read.ok) return null;
    let hash: string;
    try {
      hash = await packageContentHash(dir, read.pkg.files);
    } catch (error) {
      this.logger.warn(formatEvent('skill.grants.hash_failed', { name, error: errorName(error) }));
      return null;
    }
    if (packageFingerprint(dir) !== before) return null;
    const allowedTools = read.pkg.manifest.allowed_tools ? [...read.pkg.manifest.allowed_tools] : null;
    this.hashes.set(dir, { fingerprint: before, hash, allowedTools });
    return { fingerprint: before, hash, allowedTools, dir };
  }

  /**
   * At decision time (synchronous): whether the grant for `<source>/<name>` still names the content loaded into the
   * turn, and the package is still that content (its fingerprint has not moved since it was hashed).
   */
  stillGranted(source: SkillSource, name: string, content: Pick<PackageContent, 'hash' | 'fingerprint' | 'dir'>): boolean {
    return this.grants.matches(source, name, content.hash) && packageFingerprint(content.dir) === content.fingerprint;
  }

  /** The `pre_approvals` member of a REST record: null when the Skill lists no `allowed-tools`. */
  async status(source: SkillSource, name: string): Promise<SkillPreApprovals | null> {
    const content = await this.content(source, name);
    const requested = content?.allowedTools ?? null;
    if (content === null || requested === null || requested.length === 0) return null;
    let grant = this.grants.get(source, name);
    if (grant !== undefined && grant.hash !== content.hash) {
      await this.drop(source, name, 'changed');
      grant = undefined;
    }
    const summary = describeAllowedTools(requested);
    const status: SkillPreApprovals = {
      requested: [...requested],
      granted: grant !== undefined,
      hash: content.hash,
      summary,
      broad: summary.some((item) => item.broad),
    };
    if (grant !== undefined) status.granted_at = grant.granted_at;
    return status;
  }

  /** A REST record with its `pre_approvals` (a copy). */
  async decorate<T extends SkillRecord>(record: T): Promise<T> {
    return { ...record, pre_approvals: await this.status(record.source, record.name) };
  }

  /** `POST /api/skills/{name}/pre-approvals`: grants what the owner saw, if it is still the Skill's content. */
  async grant(name: string, hash: unknown): Promise<SkillPreApprovals> {
    if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) throw new SkillError('validation', GRANT_MESSAGES.hashRequired, 'hash');
    const { source } = await this.effective(name);
    const status = await this.status(source, name);
    if (status === null) throw new SkillError('validation', GRANT_MESSAGES.nothingToGrant(name), 'name');
    if (status.hash !== hash) {
      throw new SkillError('conflict', GRANT_MESSAGES.stale(name), undefined, {
        problemCode: 'skill_grant_stale',
        extensions: { hash: status.hash },
      });
    }
    const grant: SkillGrant = { name, source, hash, allowed_tools: status.requested, granted_at: new Date().toISOString() };
    // like every approval decision, the grant is on the audit before it takes effect
    if (!(await this.record(grant, 'grant', 'user'))) throw new SkillError('publication', GRANT_MESSAGES.auditFailed);
    await this.grants.put(grant);
    this.logger.log(formatEvent('skill.grant.granted', { name, source, hash: hash.slice(0, 12) }));
    return { ...status, granted: true, granted_at: grant.granted_at };
  }

  /** `DELETE /api/skills/{name}/pre-approvals`: revokes the grant of the Skill (nothing to do when there is none). */
  async revoke(name: string): Promise<void> {
    const { source } = await this.effective(name);
    const removed = await this.grants.remove(source, name);
    if (removed === null) return;
    await this.record(removed, 'revoke', 'user', 'owner');
    this.logger.log(formatEvent('skill.grant.revoked', { name, source }));
  }

  /**
   * A package was created, replaced, rolled back, re-imported or deleted (REST, agent_skill_manage, evolution): its
   * grant, if any, is dropped, whatever the new content is.
   */
  async contentChanged(source: SkillSource, name: string, reason: 'changed' | 'deleted' = 'changed'): Promise<void> {
    try {
      await this.drop(source, name, reason);
    } catch (error) {
      // the hash binding still holds: a grant for other content never applies
      this.logger.error(formatEvent('skill.grant.drop_failed', { name, error: errorName(error) }));
    }
  }

  private async drop(source: SkillSource, name: string, reason: 'changed' | 'deleted'): Promise<void> {
    const removed = await this.grants.remove(source, name);
    if (removed === null) return;
    await this.record(removed, 'revoke', 'policy', reason);
    this.logger.log(formatEvent('skill.grant.dropped', { name, source, reason }));
  }

  /** The source of the Skill of that name in the catalog as last refreshed (before a delete changes it). */
  async effectiveSource(name: string): Promise<SkillSource | null> {
    await this.catalog.refresh('quick');
    return this.catalog.get(name)?.pkg.source ?? null;
  }

  private async effective(name: string): Promise<{ source: SkillSource }> {
    await this.catalog.refresh('quick');
    const entry = this.catalog.get(name);
    if (!entry) throw new SkillError('not_found', SKILL_MESSAGES.notFoundNamed(name));
    return { source: entry.pkg.source };
  }

  private async record(
    grant: SkillGrant,
    action: 'grant' | 'revoke',
    by: 'user' | 'policy',
    reason?: 'owner' | 'changed' | 'deleted',
  ): Promise<boolean> {
    const summary = describeAllowedTools(grant.allowed_tools);
    const risk: ToolRisk = summary.some((item) => item.kind.endsWith('command'))
      ? 'exec'
      : summary.some((item) => item.kind.startsWith('mcp'))
        ? 'mcp'
        : 'write';
    const verb = action === 'grant' ? 'granted' : `revoked (${reason ?? 'owner'})`;
    try {
      await this.audit.append({
        at: new Date().toISOString(),
        chat_id: '',
        call_id: '',
        tool: SKILL_GRANT_AUDIT_TOOL,
        risk,
        decision: action === 'grant' ? 'allow_always' : 'deny',
        by,
        preview: `Skill ${grant.source}/${grant.name} sha256:${grant.hash.slice(0, 12)} pre-approvals ${verb}: ${grant.allowed_tools.join(', ')}`.slice(0, 500),
        skill_grant: {
          action,
          name: grant.name,
          source: grant.source,
          hash: grant.hash,
          allowed_tools: [...grant.allowed_tools],
          ...(reason !== undefined ? { reason } : {}),
        },
      });
      return true;
    } catch (error) {
      this.logger.error(formatEvent('skill.grant.audit_failed', { error: (error as NodeJS.ErrnoException).code ?? 'error' }));
      return false;
    }
  }
}
