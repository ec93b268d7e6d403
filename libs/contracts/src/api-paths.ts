/**
 * The REST paths of the API, shared by the Nest controllers (their route prefixes) and the console's API services.
 * Sub-routes with parameters are built with `apiPath`, which URL-encodes every segment.
 */
export const API_PATHS = {
  health: '/api/health',
  clientConfig: '/api/client-config',
  /** the console's one-time sign-in link (`GET ?code=`, printed at every start; no token: bound by the code) */
  authLogin: '/api/auth/login',
  /** clears the console's session cookie */
  authLogout: '/api/auth/logout',
  /** how this client is signed in (401 when it is not) */
  authSession: '/api/auth/session',
  sessions: '/api/sessions',
  llmSettings: '/api/settings/llm',
  llmSettingsTest: '/api/settings/llm/test',
  llmModels: '/api/settings/llm/models',
  llmImageModels: '/api/settings/llm/image-models',
  llmThinkingModels: '/api/settings/llm/thinking-models',
  toolPolicies: '/api/settings/tool-policies',
  toolPolicyRules: '/api/settings/tool-policies/rules',
  execSandbox: '/api/settings/exec-sandbox',
  openAiCompat: '/api/settings/openai-compat',
  openAiCompatKeys: '/api/settings/openai-compat/keys',
  approvals: '/api/approvals',
  approvalAudit: '/api/approvals/audit',
  mcpServers: '/api/mcp/servers',
  /** MCP OAuth: the browser redirect from the authorization server (no API token; bound by `state`) */
  mcpOAuthCallback: '/api/mcp/oauth/callback',
  skills: '/api/skills',
  skillEvolutionProposals: '/api/skill-evolution/proposals',
  memory: '/api/memory',
  memorySoul: '/api/memory/soul',
  dreams: '/api/memory/dreams',
  dream: '/api/memory/dream',
  memoryProvenance: '/api/memory/provenance',
  memoryProvenanceVerify: '/api/memory/provenance/verify',
  memoryEntries: '/api/memory/entries',
  trustedSources: '/api/settings/trusted-sources',
  usageSummary: '/api/usage/summary',
  usageRecords: '/api/usage/records',
  usageExport: '/api/usage/export.csv',
  usageChats: '/api/usage/chats',
  usagePrices: '/api/usage/prices',
  usageLimits: '/api/usage/limits',
  usageLimitsStatus: '/api/usage/limits/status',
  /** `POST`: a backup archive of everything the server owns (openspec backup) */
  backup: '/api/backup',
  /** scheduled prompts and their runs (openspec automations) */
  automations: '/api/automations',
  automationsPreview: '/api/automations/preview',
  metrics: '/metrics',
} as const;

export type ApiPath = (typeof API_PATHS)[keyof typeof API_PATHS];

/** `base` followed by the URL-encoded `segments`, e.g. `apiPath(API_PATHS.sessions, id, 'messages')`. */
export function apiPath(base: ApiPath, ...segments: (string | number)[]): string {
  return [base, ...segments.map((segment) => encodeURIComponent(String(segment)))].join('/');
}
