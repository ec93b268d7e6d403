/**
 * A catalog entry: a loaded package with its SkillRecord, the shape the REST API lists and the Skill tools read.
 * The record is the package's own copy of its manifest (requirement lists, tags, metadata), with the source, the
 * shadowed lower-precedence sources and the availability of the catalog pass that built it.
 */
import type { SkillAvailability, SkillRecord, SkillRequirementsRecord, SkillSource } from '@cashcode/contracts';
import type { LoadedPackage } from './skill-package-reader';

export interface CatalogEntry {
  pkg: LoadedPackage;
  record: SkillRecord;
}

/** A record's own copy of a manifest's requirement lists (string arrays only: a plain copy, not structuredClone). */
function copyRequirements(r: SkillRequirementsRecord): SkillRequirementsRecord {
  return { tools: [...r.tools], mcp_servers: [...r.mcp_servers], bins: [...r.bins], env: [...r.env] };
}

/** The record of a package that wins its name over the `shadowed` sources, with its current availability. */
export function skillRecord(
  pkg: LoadedPackage,
  shadowed: SkillSource[],
  { availability, missing }: { availability: SkillAvailability; missing: string[] },
): SkillRecord {
  const m = pkg.manifest;
  return {
    name: m.name,
    display_name: m.display_name ?? m.name,
    description: m.description,
    version: m.version,
    version_label: m.version_label,
    tags: [...m.tags],
    triggers: [...m.triggers],
    always: m.always,
    source: pkg.source,
    enabled: pkg.enabled,
    availability,
    missing,
    hash: pkg.hash,
    shadowed_sources: shadowed,
    shadows_builtin: pkg.source !== 'builtin' && shadowed.includes('builtin'),
    validation_errors: [],
    requires: copyRequirements(m.requires),
    optional: copyRequirements(m.optional),
    mutable: pkg.source !== 'builtin',
    license: m.license,
    compatibility: m.compatibility,
    metadata: { ...m.metadata },
    allowed_tools: m.allowed_tools ? [...m.allowed_tools] : null,
  };
}
